// y = x W^T + b (+ y when accumulate): PyTorch's Linear layout, W is [out_features, in_features].
// `accumulate` fuses the residual add of the pre-norm block into the GEMM (beta = 1).
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct LinearParams {
  const float* x = nullptr;  // [rows, x_stride]
  int64_t x_stride = 0;
  int rows = 0;
  int in_features = 0;
  const void* weight = nullptr;      // [out_features, in_features], row-major, in weight_dtype
  DType weight_dtype = DType::kF32;  // F32, F16, BF16 or I8 on every backend
  // I8 only: W[o, i] = weight[o, i] * weight_scale[o] (per output channel), [out_features].
  const float* weight_scale = nullptr;
  // I8 only, cpu and reference: quantise each input row to int8 per block of 32 values
  // (int8_activation_blocks.h) and multiply int8 by int8, as llama.cpp's Q8_0 does. Faster at
  // decode batches; the logits move by the activations' rounding, so it is a choice
  // (--int8-activations), not the default. The cuda backend refuses it.
  bool int8_activations = false;
  // I8 with int8_activations, cpu: the weights' packed copy (int8_packed_weights.h), which the
  // cpu op then reads instead of `weight` at every batch size; or null.
  const void* int8_packed_weight = nullptr;
  int out_features = 0;
  const float* bias = nullptr;  // [out_features] or null
  float* y = nullptr;           // [rows, y_stride]; must not alias x
  int64_t y_stride = 0;
  bool accumulate = false;
};

template <Backend B>
void LaunchLinear(const LinearParams& params, Stream stream);

inline void LaunchLinear(Backend backend, const LinearParams& params, Stream stream = nullptr) {
  Dispatch(backend, "linear",
           [&](auto tag) { LaunchLinear<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
