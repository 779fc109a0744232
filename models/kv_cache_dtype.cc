#include "models/kv_cache_dtype.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "models/attention_kind.h"

namespace slotserve::models {

absl::StatusOr<KvCacheDtype> ParseKvCacheDtype(std::string_view text) {
  if (text == "f32") return KvCacheDtype::kF32;
  if (text == "f16") return KvCacheDtype::kF16;
  return absl::InvalidArgumentError(
      absl::StrCat("must be f32 or f16, got \"", std::string(text), "\""));
}

const char* KvCacheDtypeName(KvCacheDtype dtype) {
  return dtype == KvCacheDtype::kF16 ? "f16" : "f32";
}

absl::Status ApplyKvCacheDtype(KvCacheDtype dtype, ModelConfig& config) {
  if (dtype == KvCacheDtype::kF16 && config.attention.kind != AttentionKind::kSoftmax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kv cache dtype f16: only softmax attention keeps a KV cache; this model's attention is ",
        AttentionKindName(config.attention.kind),
        ", whose constant-size state stays f32 (use --kv-cache-dtype f32)"));
  }
  config.attention.kv_cache_f16 = dtype == KvCacheDtype::kF16;
  return absl::OkStatus();
}

uint32_t StateDtypeCode(const ModelConfig& config) { return config.attention.kv_cache_f16 ? 1 : 0; }

}  // namespace slotserve::models
