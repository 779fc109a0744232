// out[i, :] = scale * table[tokens[i], :]
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct EmbeddingParams {
  const void* table = nullptr;  // [vocab, dim] in `table_dtype`
  DType table_dtype = DType::kF32;
  // I8 only: row v is table[v, :] * table_scale[v], [vocab].
  const float* table_scale = nullptr;
  // I8, cpu only: the table as the packed GEMM's copy (int8_packed_weights.h), read instead of
  // `table` (then null) when the table is tied to an int8-activations head.
  const uint8_t* table_int8_packed = nullptr;
  int vocab = 0;
  int dim = 0;
  const int32_t* tokens = nullptr;  // [rows], each in [0, vocab); validated by the caller
  int rows = 0;
  float scale = 1.0f;
  float* out = nullptr;  // [rows, out_stride]
  int64_t out_stride = 0;
};

template <Backend B>
void LaunchEmbedding(const EmbeddingParams& params, Stream stream);

inline void LaunchEmbedding(Backend backend, const EmbeddingParams& params,
                            Stream stream = nullptr) {
  Dispatch(backend, "embedding",
           [&](auto tag) { LaunchEmbedding<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
