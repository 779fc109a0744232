// libFuzzer target: GenerateRequest wire bytes -> proto -> ParseGenerateRequest (UTF-8 checks,
// tokenising text with a real SentencePiece model, ids and counts as sent) -> the engine's
// ValidateGenerationRequest (token-id ranges, stop sequences' UTF-8, every limit), as a server
// with the bundled model's limits would run them.
#include <cstddef>
#include <cstdint>

#include "absl/time/clock.h"
#include "engine/request_validation.h"
#include "engine/tokenizer.h"
#include "server/grpc/request_parsing.h"
#include "slotserve/v1/slotserve.pb.h"
#include "tests/fuzz/bundled_tokenizer.h"
#include "tests/fuzz/server_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  slotserve::v1::GenerateRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const slotserve::engine::Tokenizer* tokenizer = slotserve::fuzz::BundledTokenizer();
  absl::StatusOr<slotserve::engine::GenerationRequest> parsed =
      slotserve::server::ParseGenerateRequest(request, tokenizer, tokenizer->bos_id(),
                                              absl::InfiniteFuture());
  if (!parsed.ok()) return 0;
  slotserve::engine::ValidateGenerationRequest(*parsed, slotserve::fuzz::ServerLimits())
      .IgnoreError();
  return 0;
}
