// Reference unmasked attention over one sequence (the encoder's), in double.
#include "kernels/bidirectional_attention.h"

#include "kernels/reference/attend_rows.h"

namespace slotserve::kernels {

template <>
void LaunchBidirectionalAttention<Backend::kReference>(const BidirectionalAttentionParams& p,
                                                       Stream /*stream*/) {
  const int d = p.head_dim;
  for (int r = 0; r < p.rows; ++r) {
    for (int h = 0; h < p.heads; ++h) {
      host::AttendRowsInDouble(p.q + r * p.in_stride + h * d, p.k + h * d, p.v + h * d, p.in_stride,
                               p.rows, d, p.out + r * p.out_stride + h * d);
    }
  }
}

}  // namespace slotserve::kernels
