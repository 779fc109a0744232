// The CUDA linear op for a few rows over 16-bit weights (narrow_weight_gemv_cuda.cu): decode
// batches, where the step is bound by reading the weights once. linear_cuda.cu sends F16/BF16
// calls here when NarrowGemvApplies and uses its split-activation GEMM otherwise;
// normed_linear_cuda.cu sends its calls here with the layer norm before and the activation after
// fused (NarrowGemvFusion).
#pragma once

#include <cuda_runtime.h>

#include "kernels/activation.h"
#include "kernels/linear.h"

namespace slotserve::kernels::cuda {

// Rows up to which the GEMV beats the split-activation GEMM. Measured on an H200 (ABC, 16
// layers of d_model 2048, F16): x1.19 at 1 row, x1.06 at 2, but x0.86 at 4 and x0.76 at 8,
// where every block re-reading all rows of x from L2 costs more than the GEMM's extra work.
constexpr int kNarrowGemvMaxRows = 2;

// The widest rows whose layer norm the GEMV can fuse: one pass of its block over the inputs.
constexpr int kNarrowGemvMaxNormWidth = 2048;

// Rows up to which the GEMV fuses a norm or an activation. Measured on an H200 (2048-wide ABC,
// F16; bench/results/gpu_third_run.md): a batch-1 step 0.844 -> 0.817 ms fused, but a batch-2
// step 0.905 -> 1.206 ms (its blocks of 4 outputs each reduce 2 rows twice for the norm, with
// 100+ registers), so 2 rows run the three ops in turn.
constexpr int kNarrowGemvMaxFusedRows = 1;

// What the GEMV may do around the product. norm_gamma set: each row of x is layer-normalised
// (over in_features values) before it is multiplied. activate: each output goes through the
// activation after the bias and the accumulate.
struct NarrowGemvFusion {
  bool any() const { return norm_gamma != nullptr || activate; }

  const float* norm_gamma = nullptr;
  const float* norm_beta = nullptr;
  float norm_eps = 1e-5f;
  bool activate = false;
  Activation activation = Activation::kGelu;
};

// True when the GEMV takes this call: F16/BF16 weights, rows <= kNarrowGemvMaxRows, the
// 16-byte loads it makes are aligned (in_features a multiple of 8, x rows on 16 bytes), and
// with a fusion rows <= kNarrowGemvMaxFusedRows (and in_features <= kNarrowGemvMaxNormWidth
// for a norm).
bool NarrowGemvApplies(const LinearParams& p, const NarrowGemvFusion& fusion = {});

// y = act(n(x) W^T + b (+ y)) with each weight widened exactly to fp32 and fp32 sums, as the
// cpu backend computes it. Requires NarrowGemvApplies(p, fusion).
void LaunchNarrowGemv(const LinearParams& p, cudaStream_t stream,
                      const NarrowGemvFusion& fusion = {});

}  // namespace slotserve::kernels::cuda
