// The normed linear (normed_linear.h) as its three ops in turn on one backend: layer norm of
// x into `normed`, the linear from `normed`, then the activation of y in place. The reference
// and cpu backends are this; the cuda backend falls back to it where its GEMV does not apply.
#pragma once

#include "kernels/backend.h"
#include "kernels/normed_linear.h"

namespace slotserve::kernels {

void LaunchNormedLinearInSteps(Backend backend, const NormedLinearParams& params, Stream stream);

}  // namespace slotserve::kernels
