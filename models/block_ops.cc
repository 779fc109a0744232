#include "models/block_ops.h"

#include "kernels/embedding.h"
#include "kernels/layer_norm.h"
#include "kernels/linear.h"
#include "kernels/normed_linear.h"
#include "kernels/positions.h"
#include "models/int8_activations.h"

namespace slotserve::models {

namespace {

kernels::LinearParams LinearParamsFor(const DeviceMatrix& weight, const float* bias, const float* x,
                                      int64_t x_stride, int rows, float* y, int64_t y_stride,
                                      bool accumulate) {
  kernels::LinearParams params;
  params.x = x;
  params.x_stride = x_stride;
  params.rows = rows;
  params.in_features = weight.cols;
  params.weight = weight.buffer.data();
  params.weight_dtype = weight.dtype;
  params.weight_scale = weight.scale.as<float>();
  // A matrix loaded with only its packed copy (device_weights.h) has no other form to multiply.
  params.int8_activations =
      weight.dtype == kernels::DType::kI8 && (Int8Activations() || weight.buffer.bytes() == 0);
  if (params.int8_activations) params.int8_packed_weight = weight.int8_packed.data();
  params.out_features = weight.rows;
  params.bias = bias;
  params.y = y;
  params.y_stride = y_stride;
  params.accumulate = accumulate;
  return params;
}

}  // namespace

void RunLinear(kernels::Backend backend, kernels::Stream stream, const DeviceMatrix& weight,
               const float* bias, const float* x, int64_t x_stride, int rows, float* y,
               int64_t y_stride, bool accumulate) {
  kernels::LaunchLinear(
      backend, LinearParamsFor(weight, bias, x, x_stride, rows, y, y_stride, accumulate), stream);
}

void RunLinear(kernels::Backend backend, kernels::Stream stream, const LinearWeights& linear,
               const float* x, int64_t x_stride, int rows, float* y, int64_t y_stride,
               bool accumulate) {
  RunLinear(backend, stream, linear.weight, linear.bias.as<float>(), x, x_stride, rows, y, y_stride,
            accumulate);
}

void RunLayerNorm(kernels::Backend backend, kernels::Stream stream, const NormWeights& norm,
                  float eps, const float* x, float* y, int rows, int dim) {
  kernels::LayerNormParams params;
  params.x = x;
  params.x_stride = dim;
  params.gamma = norm.gamma.as<float>();
  params.beta = norm.beta.as<float>();
  params.y = y;
  params.y_stride = dim;
  params.rows = rows;
  params.dim = dim;
  params.eps = eps;
  kernels::LaunchLayerNorm(backend, params, stream);
}

void RunNormedLinear(kernels::Backend backend, kernels::Stream stream, const NormWeights& norm,
                     float eps, const float* x, float* normed, const DeviceMatrix& weight,
                     const float* bias, int rows, float* y, int64_t y_stride,
                     std::optional<kernels::Activation> activation) {
  kernels::NormedLinearParams params;
  params.linear = LinearParamsFor(weight, bias, x, weight.cols, rows, y, y_stride,
                                  /*accumulate=*/false);
  params.gamma = norm.gamma.as<float>();
  params.beta = norm.beta.as<float>();
  params.eps = eps;
  params.normed = normed;
  params.activate = activation.has_value();
  if (activation) params.activation = *activation;
  kernels::LaunchNormedLinear(backend, params, stream);
}

void RunNormedLinear(kernels::Backend backend, kernels::Stream stream, const NormWeights& norm,
                     float eps, const float* x, float* normed, const LinearWeights& linear,
                     int rows, float* y, int64_t y_stride,
                     std::optional<kernels::Activation> activation) {
  RunNormedLinear(backend, stream, norm, eps, x, normed, linear.weight, linear.bias.as<float>(),
                  rows, y, y_stride, activation);
}

void EmbedTokens(kernels::Backend backend, kernels::Stream stream, const ModelConfig& config,
                 const DeviceMatrix& table, const ForwardScratch& scratch, int rows) {
  const int width = config.d_model;
  kernels::EmbeddingParams embedding;
  embedding.table = table.buffer.data();
  embedding.table_int8_packed = table.int8_packed.as<uint8_t>();
  embedding.table_dtype = table.dtype;
  embedding.table_scale = table.scale.as<float>();
  embedding.vocab = config.vocab_size;
  embedding.dim = width;
  embedding.tokens = scratch.tokens();
  embedding.rows = rows;
  embedding.scale = config.embed_scale;
  embedding.out = scratch.hidden();
  embedding.out_stride = width;
  kernels::LaunchEmbedding(backend, embedding, stream);
  if (config.sinusoidal_positions) {
    kernels::AddPositionsParams positions;
    positions.x = scratch.hidden();
    positions.stride = width;
    positions.positions = scratch.embed_positions();
    positions.rows = rows;
    positions.dim = width;
    kernels::LaunchAddPositions(backend, positions, stream);
  }
}

void RunFeedForward(kernels::Backend backend, kernels::Stream stream, const ModelConfig& config,
                    const BlockWeights& block, const ForwardScratch& scratch, int rows) {
  const int width = config.d_model;
  float* hidden = scratch.hidden();
  RunNormedLinear(backend, stream, block.ffn_norm, config.norm_eps, hidden, scratch.normed(),
                  block.up, rows, scratch.ffn(), config.d_ffn,
                  config.gelu ? kernels::Activation::kGelu : kernels::Activation::kRelu);
  RunLinear(backend, stream, block.down, scratch.ffn(), config.d_ffn, rows, hidden, width,
            /*accumulate=*/true);
}

}  // namespace slotserve::models
