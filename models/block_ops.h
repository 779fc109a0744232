// The pieces of a pre-norm block that every stack runs the same way (docs/MODEL_FORMAT.md "The
// attention kinds"; docs/ARCHITECTURE.md "Encoder–decoder models"): linear layers, layer norms, the
// token embedding with positions, and the feed-forward half. Shared by the decoder-only transformer
// and the encoder-decoder model so both compute the same bits.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/activation.h"
#include "kernels/backend.h"
#include "models/device_weights.h"
#include "models/forward_scratch.h"
#include "models/model_config.h"
#include "models/transformer_weights.h"

namespace slotserve::models {

// y = x W^T + b over `rows` rows (y += ... with accumulate: the residual add).
void RunLinear(kernels::Backend backend, kernels::Stream stream, const DeviceMatrix& weight,
               const float* bias, const float* x, int64_t x_stride, int rows, float* y,
               int64_t y_stride, bool accumulate);
void RunLinear(kernels::Backend backend, kernels::Stream stream, const LinearWeights& linear,
               const float* x, int64_t x_stride, int rows, float* y, int64_t y_stride,
               bool accumulate);
void RunLayerNorm(kernels::Backend backend, kernels::Stream stream, const NormWeights& norm,
                  float eps, const float* x, float* y, int rows, int dim);
// y = act(layer_norm(x) W^T + b) over `rows` rows of x [rows, weight.cols] (dense): a norm and
// the one linear that reads it (and the activation after it) as one op, which the cuda backend
// fuses at decode batches (kernels/normed_linear.h). `normed` [rows, weight.cols] is scratch.
void RunNormedLinear(kernels::Backend backend, kernels::Stream stream, const NormWeights& norm,
                     float eps, const float* x, float* normed, const DeviceMatrix& weight,
                     const float* bias, int rows, float* y, int64_t y_stride,
                     std::optional<kernels::Activation> activation = std::nullopt);
void RunNormedLinear(kernels::Backend backend, kernels::Stream stream, const NormWeights& norm,
                     float eps, const float* x, float* normed, const LinearWeights& linear,
                     int rows, float* y, int64_t y_stride,
                     std::optional<kernels::Activation> activation = std::nullopt);

// scratch.hidden() rows [0, rows) = embed_scale * table[tokens] (+ pos(embed_positions)), from
// scratch.tokens() and scratch.embed_positions().
void EmbedTokens(kernels::Backend backend, kernels::Stream stream, const ModelConfig& config,
                 const DeviceMatrix& table, const ForwardScratch& scratch, int rows);

// hidden += down(act(up(ffn_norm(hidden)))) over scratch rows [0, rows) (the norm, up and act as
// one RunNormedLinear).
void RunFeedForward(kernels::Backend backend, kernels::Stream stream, const ModelConfig& config,
                    const BlockWeights& block, const ForwardScratch& scratch, int rows);

}  // namespace slotserve::models
