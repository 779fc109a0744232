// CUDA normed linear (normed_linear.h): at 1-2 rows of 16-bit weights the GEMV normalises the
// rows it reads and activates what it writes, one kernel instead of three; elsewhere the three
// ops run in turn. Measured on an H200: bench/results/gpu_third_run.md.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/narrow_weight_gemv.cuh"
#include "kernels/normed_linear.h"
#include "kernels/normed_linear_in_steps.h"

namespace slotserve::kernels {

template <>
void LaunchNormedLinear<Backend::kCuda>(const NormedLinearParams& p, Stream stream) {
  if (p.linear.rows == 0 || p.linear.out_features == 0) return;
  cuda::NarrowGemvFusion fusion;
  fusion.norm_gamma = p.gamma;
  fusion.norm_beta = p.beta;
  fusion.norm_eps = p.eps;
  fusion.activate = p.activate;
  fusion.activation = p.activation;
  if (cuda::NarrowGemvApplies(p.linear, fusion)) {
    return cuda::LaunchNarrowGemv(p.linear, cuda::AsCudaStream(stream), fusion);
  }
  LaunchNormedLinearInSteps(Backend::kCuda, p, stream);
}

}  // namespace slotserve::kernels
