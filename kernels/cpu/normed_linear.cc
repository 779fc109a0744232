// cpu normed linear: its three cpu ops in turn (normed_linear_in_steps.h). On the cpu a layer
// norm or an activation costs its arithmetic, not a launch, so there is nothing to gain by fusing.
#include "kernels/normed_linear.h"
#include "kernels/normed_linear_in_steps.h"

namespace slotserve::kernels {

template <>
void LaunchNormedLinear<Backend::kCpu>(const NormedLinearParams& p, Stream stream) {
  LaunchNormedLinearInSteps(Backend::kCpu, p, stream);
}

}  // namespace slotserve::kernels
