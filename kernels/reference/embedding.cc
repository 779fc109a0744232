// Reference embedding lookup: out[i, :] = scale * table[tokens[i], :], any table dtype (I8:
// times the row's scale).
#include "kernels/embedding.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {

template <>
void LaunchEmbedding<Backend::kReference>(const EmbeddingParams& p, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    const int64_t row_start = static_cast<int64_t>(p.tokens[r]) * p.dim;
    const double row_scale = host::RowScale(p.table_scale, p.table_dtype, p.tokens[r]);
    float* out = p.out + r * p.out_stride;
    for (int c = 0; c < p.dim; ++c) {
      out[c] = static_cast<float>(
          static_cast<double>(p.scale) *
          (host::LoadAsFloat(p.table, p.table_dtype, row_start + c) * row_scale));
    }
  }
}

}  // namespace slotserve::kernels
