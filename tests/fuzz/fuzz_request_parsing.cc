// libFuzzer target: GenerateRequest wire bytes -> proto -> ParseGenerateRequest (UTF-8 checks,
// tokenising text with a real SentencePiece model, token-id ranges, counts as sent) -> the
// engine's ValidateGenerationRequest, as a server with the bundled model's limits would run
// them.
#include <cstddef>
#include <cstdint>

#include "absl/time/clock.h"
#include "engine/request_validation.h"
#include "engine/tokenizer.h"
#include "tests/fuzz/bundled_tokenizer.h"
#include "server/request_parsing.h"
#include "slotserve/v1/slotserve.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  slotserve::v1::GenerateRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const slotserve::engine::Tokenizer* tokenizer = slotserve::fuzz::BundledTokenizer();
  const int vocab = tokenizer->piece_count();
  absl::StatusOr<slotserve::engine::GenerationRequest> parsed =
      slotserve::server::ParseGenerateRequest(request, tokenizer, tokenizer->bos_id(), vocab,
                                              absl::InfiniteFuture());
  if (!parsed.ok()) return 0;
  slotserve::engine::RequestLimits limits;
  limits.vocab_size = vocab;
  limits.max_positions = 1 << 30;
  limits.max_prompt_tokens = 8192;
  limits.default_max_new_tokens = 128;
  limits.max_new_tokens_limit = 4096;
  limits.max_stop_sequences = 16;
  limits.max_stop_sequence_bytes = 256;
  limits.max_top_logprobs = 20;
  limits.has_tokenizer = true;
  slotserve::engine::ValidateGenerationRequest(*parsed, limits).IgnoreError();
  return 0;
}
