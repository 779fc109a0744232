#include "models/step_sampling_inputs.h"

#include <algorithm>
#include <cstring>

#include "base/status_macros.h"

namespace slotserve::models {
namespace {

template <typename T>
void Scatter(std::byte* base, size_t offset, std::span<const TokenSampling> rows,
             T TokenSampling::*field) {
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(base + offset + i * sizeof(T), &(rows[i].*field), sizeof(T));
  }
}

}  // namespace

StepSamplingInputs::Layout StepSamplingInputs::LayoutFor(int capacity) {
  const size_t rows = static_cast<size_t>(capacity);
  Layout layout;
  layout.seeds = 0;
  layout.draw_index = layout.seeds + rows * sizeof(uint64_t);
  layout.temperature = layout.draw_index + rows * sizeof(uint64_t);
  layout.top_p = layout.temperature + rows * sizeof(float);
  layout.min_p = layout.top_p + rows * sizeof(float);
  layout.top_k = layout.min_p + rows * sizeof(float);
  layout.out_tokens = layout.top_k + rows * sizeof(int32_t);
  layout.total = layout.out_tokens + rows * sizeof(int32_t);
  return layout;
}

absl::Status StepSamplingInputs::Stage(std::span<const TokenSampling> sampling,
                                       kernels::Stream stream) {
  const int rows = static_cast<int>(sampling.size());
  if (rows > capacity_) {
    // Doubling keeps the number of reallocations logarithmic in the largest batch seen.
    const int capacity = std::max({rows, 2 * capacity_, 8});
    const Layout layout = LayoutFor(capacity);
    // The previous step synchronised its stream, so the old buffer is no longer in use.
    SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer device,
                               kernels::DeviceBuffer::Allocate(backend_, layout.total));
    device_ = std::move(device);
    host_.assign((layout.out_tokens + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    capacity_ = capacity;
    layout_ = layout;
  }
  rows_ = rows;
  std::byte* host = reinterpret_cast<std::byte*>(host_.data());
  Scatter(host, layout_.seeds, sampling, &TokenSampling::seed);
  Scatter(host, layout_.draw_index, sampling, &TokenSampling::draw_index);
  Scatter(host, layout_.temperature, sampling, &TokenSampling::temperature);
  Scatter(host, layout_.top_p, sampling, &TokenSampling::top_p);
  Scatter(host, layout_.min_p, sampling, &TokenSampling::min_p);
  Scatter(host, layout_.top_k, sampling, &TokenSampling::top_k);
  kernels::CopyHostToDevice(backend_, device_.data(), host, layout_.out_tokens, stream);
  return absl::OkStatus();
}

kernels::SamplingParams StepSamplingInputs::Params(const float* logits, int64_t logits_stride,
                                                   int vocab) const {
  kernels::SamplingParams params;
  params.logits = logits;
  params.logits_stride = logits_stride;
  params.rows = rows_;
  params.vocab = vocab;
  params.temperature = At<const float>(layout_.temperature);
  params.top_k = At<const int32_t>(layout_.top_k);
  params.top_p = At<const float>(layout_.top_p);
  params.min_p = At<const float>(layout_.min_p);
  params.seeds = At<const uint64_t>(layout_.seeds);
  params.draw_index = At<const uint64_t>(layout_.draw_index);
  params.out_tokens = At<int32_t>(layout_.out_tokens);
  return params;
}

const int32_t* StepSamplingInputs::out_tokens() const {
  return At<const int32_t>(layout_.out_tokens);
}

}  // namespace slotserve::models
