#include "engine/request_preparation.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::engine {

absl::StatusOr<PreparedRequest> PrepareRequest(Submission submission, absl::Time now,
                                               const RequestLimits& limits, SessionStore& sessions,
                                               const models::Seq2seqShape* seq2seq) {
  GenerationRequest& request = submission.request;
  if (submission.sink == nullptr) return absl::InvalidArgumentError("sink must not be null");
  SLOTSERVE_RETURN_IF_ERROR(ValidateGenerationRequest(request, limits));
  if (request.deadline <= now) {
    return absl::DeadlineExceededError(absl::StrCat("the request's deadline passed ",
                                                    absl::FormatDuration(now - request.deadline),
                                                    " before it was submitted"));
  }
  if (request.session.keep && request.n > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("session.keep needs n = 1 (one final state to keep), got n = ", request.n));
  }
  std::optional<RequestState> session_state;
  const std::string& handle = request.session.handle;
  if (!handle.empty()) {
    SLOTSERVE_ASSIGN_OR_RETURN(session_state, sessions.Acquire(handle, now));
    const int64_t positions =
        session_state->token_count + 1 + static_cast<int64_t>(request.prompt_ids.size());
    if (positions >= limits.max_positions) {
      sessions.Release(handle, std::nullopt, now).IgnoreError();  // the hold ends anyway
      return absl::InvalidArgumentError(absl::StrCat(
          "session ", handle, " holds ", session_state->token_count, " tokens; with this prompt's ",
          request.prompt_ids.size(), " it would not leave room in the model's context of ",
          limits.max_positions));
    }
    if (session_state->pending_token >= 0) {
      request.prompt_ids.insert(request.prompt_ids.begin(), session_state->pending_token);
    }
  }
  if (!request.source_ids.empty()) {  // the decoder starts from its start token
                                      // (docs/ARCHITECTURE.md "Encoder–decoder models")
    request.prompt_ids.insert(request.prompt_ids.begin(), seq2seq->decoder_start_id);
  }
  return PreparedRequest{std::move(request), std::move(submission.sink), std::move(session_state)};
}

}  // namespace slotserve::engine
