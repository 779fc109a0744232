// cpu embedding lookup: scaled row copies; F16/BF16/I8 tables (I8 row-major or packed) are
// widened on the fly.
#include "kernels/embedding.h"
#include "kernels/cpu/half_conversions.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/int8_packed_weights.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {

template <>
void LaunchEmbedding<Backend::kCpu>(const EmbeddingParams& p, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    const int64_t row_start = static_cast<int64_t>(p.tokens[r]) * p.dim;
    float* out = p.out + r * p.out_stride;
    if (p.table_int8_packed != nullptr) {
      UnpackInt8Row(p.table_int8_packed, p.dim, p.tokens[r], p.scale * p.table_scale[p.tokens[r]],
                    out);
      continue;
    }
    if (p.table_dtype == DType::kF32) {
      cpu::Scale(p.scale, static_cast<const float*>(p.table) + row_start, out, p.dim);
      continue;
    }
    if (p.table_dtype == DType::kF16) {  // widened in registers (F16C), then scaled
      cpu::WidenHalves(static_cast<const uint16_t*>(p.table) + row_start, p.dim, out);
      for (int c = 0; c < p.dim; ++c) out[c] *= p.scale;
      continue;
    }
    // I8: the row's scale folds into the embedding scale.
    const float scale =
        p.table_dtype == DType::kI8 ? p.scale * p.table_scale[p.tokens[r]] : p.scale;
    for (int c = 0; c < p.dim; ++c) {
      out[c] = scale * host::LoadAsFloat(p.table, p.table_dtype, row_start + c);
    }
  }
}

}  // namespace slotserve::kernels
