// y = act(LayerNorm(x) W^T + b (+ y)): a pre-norm block's layer norm, the linear that reads its
// output and, optionally, the activation after it, as one op so that a backend may fuse them.
// In the pre-norm blocks of the decoder-only and seq2seq stacks a layer norm feeds exactly one
// linear (the input projection, the cross-attention query, the feed-forward's up projection with
// its activation, the LM head), and at decode batches each of these three ops is a short kernel
// whose launch and first memory round trip cost more than its work. The cuda GEMV (1-2 rows, 16-bit weights) normalises the rows it reads and activates what
// it writes; the other backends and shapes run the three ops in turn (normed_linear_in_steps.h),
// with the same bits as calling them separately.
#pragma once

#include "kernels/activation.h"
#include "kernels/backend.h"
#include "kernels/linear.h"

namespace slotserve::kernels {

struct NormedLinearParams {
  // linear.x holds the rows before the norm (normalised over linear.in_features values each).
  LinearParams linear;
  const float* gamma = nullptr;  // [in_features]
  const float* beta = nullptr;   // [in_features]
  float eps = 1e-5f;
  // [rows, in_features] scratch for the normalised rows, written when the ops run in turn (its
  // contents afterwards are unspecified: a fusing backend leaves it alone).
  float* normed = nullptr;
  // Applied to each output after the bias and the accumulate.
  bool activate = false;
  Activation activation = Activation::kGelu;
};

template <Backend B>
void LaunchNormedLinear(const NormedLinearParams& params, Stream stream);

inline void LaunchNormedLinear(Backend backend, const NormedLinearParams& params,
                               Stream stream = nullptr) {
  Dispatch(backend, "normed linear",
           [&](auto tag) { LaunchNormedLinear<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
