#include "kernels/normed_linear_in_steps.h"

#include "kernels/layer_norm.h"

namespace slotserve::kernels {

void LaunchNormedLinearInSteps(Backend backend, const NormedLinearParams& p, Stream stream) {
  if (p.linear.rows == 0) return;
  LayerNormParams norm;
  norm.x = p.linear.x;
  norm.x_stride = p.linear.x_stride;
  norm.gamma = p.gamma;
  norm.beta = p.beta;
  norm.y = p.normed;
  norm.y_stride = p.linear.in_features;
  norm.rows = p.linear.rows;
  norm.dim = p.linear.in_features;
  norm.eps = p.eps;
  LaunchLayerNorm(backend, norm, stream);
  LinearParams linear = p.linear;
  linear.x = p.normed;
  linear.x_stride = p.linear.in_features;
  LaunchLinear(backend, linear, stream);
  if (!p.activate) return;
  ActivationParams activation;
  activation.x = p.linear.y;
  activation.stride = p.linear.y_stride;
  activation.rows = p.linear.rows;
  activation.cols = p.linear.out_features;
  activation.activation = p.activation;
  LaunchActivation(backend, activation, stream);
}

}  // namespace slotserve::kernels
