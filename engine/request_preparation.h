// What a request goes through between Scheduler::Submit and the queue: its checks, the hold on
// the session it continues (whose pending token then leads its prompt), and an encoder-decoder
// decoder's start token in front. A batch (Scheduler::SubmitAll) prepares every request before
// it queues any, so it is refused whole.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/generation_events.h"
#include "engine/generation_request.h"
#include "engine/request_validation.h"
#include "engine/session_store.h"
#include "models/language_model.h"

namespace slotserve::engine {

// One request of Scheduler::SubmitAll, with the sink that hears its events.
struct Submission {
  GenerationRequest request;
  std::shared_ptr<GenerationSink> sink;
};

// A request ready to queue. `session_state` is set when it continues a session, which it then
// holds: a caller that does not queue it must release the hold.
struct PreparedRequest {
  GenerationRequest request;
  std::shared_ptr<GenerationSink> sink;
  std::optional<RequestState> session_state;
};

// Errors (nothing held): INVALID_ARGUMENT for a bad field, a null sink, session.keep beside
// n > 1, or a session without room for the prompt; DEADLINE_EXCEEDED when the deadline passed;
// the session store's NOT_FOUND / FAILED_PRECONDITION. `seq2seq` is null for a decoder-only
// model.
absl::StatusOr<PreparedRequest> PrepareRequest(Submission submission, absl::Time now,
                                               const RequestLimits& limits, SessionStore& sessions,
                                               const models::Seq2seqShape* seq2seq);

}  // namespace slotserve::engine
