#include "kernels/cpu/int8_activations_linear.h"

#include <cstdint>
#include <vector>

#include "kernels/cpu/int8_dot_linear.h"
#include "kernels/cpu/int8_packed_gemm.h"
#include "kernels/cpu/int8_quantised_rows.h"
#include "kernels/cpu/line_aligned_buffer.h"
#include "kernels/cpu/narrow_weight_linear.h"
#include "kernels/cpu/parallel_for.h"

namespace slotserve::kernels::cpu {
void RoundedRowsLinear(const LinearParams& p) {
  // Per calling thread, reused between calls: the workers only read it. Aligned to a cache
  // line: the GEMV's 64-byte loads from a 16-byte-aligned row each straddled two lines (the
  // whole product ran ~30% slower).
  thread_local std::vector<float> buffer;
  const int in = p.in_features;
  float* rounded = LineAlignedFloats(buffer, static_cast<size_t>(p.rows) * in);
  ParallelFor(p.rows, static_cast<int64_t>(p.rows) * in * 8,
              [&](int begin, int end) { RoundActivationRows(p, rounded, begin, end); });
  LinearParams widened = p;
  widened.x = rounded;
  widened.x_stride = in;
  widened.int8_activations = false;
  NarrowWeightLinear(widened);
}

void Int8ActivationsLinear(const LinearParams& p) {
  if (p.int8_packed_weight != nullptr) {
    Int8PackedGemm(p);
  } else if (p.rows > FusedMaxRows(BestNarrowGemvIsa())) {
    RoundedRowsLinear(p);
  } else if (CpuHasAvx512Vnni() && p.rows >= kInt8WideMinRows) {
    Int8DotLinear(p, Int8DotIsa::kAvx512VnniWide);
  } else if (CpuHasAvx512() && p.rows > kInt8DotMaxRowsAvx512) {
    RoundedRowsLinear(p);
  } else {
    Int8DotLinear(p, BestInt8DotIsa());
  }
}

}  // namespace slotserve::kernels::cpu
