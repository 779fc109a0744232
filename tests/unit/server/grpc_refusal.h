// What the gRPC front end answers a GenerateRequest before it is queued, without a server: the
// request parsed (request_parsing.h, source_parsing.h), then the engine's one check of every
// value (engine/request_validation.h), its refusal renamed to the proto's fields
// (proto_field_names.h), as SubmitGenerateRequest runs them.
#pragma once

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/request_validation.h"
#include "server/grpc/proto_field_names.h"
#include "server/grpc/request_parsing.h"
#include "server/grpc/source_parsing.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server::testing {

// Limits of a small model: `vocab_size` ids; `seq2seq`: sources required, up to 50 tokens.
inline engine::RequestLimits SmallModelLimits(int vocab_size, bool seq2seq) {
  engine::RequestLimits limits;
  limits.vocab_size = vocab_size;
  limits.max_positions = 256;
  limits.max_prompt_tokens = 64;
  limits.default_max_new_tokens = 16;
  limits.max_new_tokens_limit = 128;
  limits.max_stop_sequences = 4;
  limits.max_stop_sequence_bytes = 32;
  limits.max_top_logprobs = 5;
  limits.has_tokenizer = true;
  limits.seq2seq = seq2seq;
  limits.max_source_tokens = seq2seq ? 50 : 0;
  return limits;
}

// OK when the request would be queued; otherwise the refusal the client would get.
inline absl::Status GrpcRefusal(const v1::GenerateRequest& request, int bos_id, int eos_id,
                                const engine::RequestLimits& limits) {
  absl::StatusOr<engine::GenerationRequest> parsed =
      ParseGenerateRequest(request, /*tokenizer=*/nullptr, bos_id, absl::InfiniteFuture());
  if (!parsed.ok()) return parsed.status();
  if (absl::Status source = ParseSource(request, nullptr, eos_id, &*parsed); !source.ok()) {
    return source;
  }
  return WithProtoFieldNames(engine::ValidateGenerationRequest(*parsed, limits), request);
}

}  // namespace slotserve::server::testing
