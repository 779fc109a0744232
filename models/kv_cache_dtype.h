// What a softmax model's KV cache holds: fp32 (the default of docs/MODEL_FORMAT.md "The attention
// kinds") or IEEE halves, the server's --kv-cache-dtype. An f16 cache halves a request's state and
// the bytes a decode step reads from it; the attention's arithmetic stays fp32
// (kernels/softmax_attention.h). Only softmax attention keeps a cache: the constant-size states of
// the other kinds are summed into at every token, where halves would compound their rounding, so
// they stay fp32.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/model_config.h"

namespace slotserve::models {

enum class KvCacheDtype { kF32, kF16 };

// "f32" or "f16"; INVALID_ARGUMENT quoting anything else ("must be f32 or f16, got \"x\"",
// for the caller to prefix with its flag).
absl::StatusOr<KvCacheDtype> ParseKvCacheDtype(std::string_view text);
const char* KvCacheDtypeName(KvCacheDtype dtype);

// Sets `config`'s cache dtype. f16 on a model without softmax attention is refused with
// INVALID_ARGUMENT naming the model's attention kind; f32 is every model's state as it is.
absl::Status ApplyKvCacheDtype(KvCacheDtype dtype, ModelConfig& config);

// The state blob's dtype field for a model's state (engine/state_blob.h): 1 for an f16 KV
// cache, 0 (f32) otherwise.
uint32_t StateDtypeCode(const ModelConfig& config);

}  // namespace slotserve::models
