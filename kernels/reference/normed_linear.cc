// Reference normed linear: its three reference ops in turn (normed_linear_in_steps.h).
#include "kernels/normed_linear.h"
#include "kernels/normed_linear_in_steps.h"

namespace slotserve::kernels {

template <>
void LaunchNormedLinear<Backend::kReference>(const NormedLinearParams& p, Stream stream) {
  LaunchNormedLinearInSteps(Backend::kReference, p, stream);
}

}  // namespace slotserve::kernels
