#include "models/token_selector.h"

#include <algorithm>
#include <cstring>

#include "base/status_macros.h"

namespace slotserve::models {
namespace {

// Copies `column` to base + offset (the staging is a byte buffer of mixed arrays).
template <typename T>
void Place(std::byte* base, size_t offset, const std::vector<T>& column) {
  if (!column.empty()) std::memcpy(base + offset, column.data(), column.size() * sizeof(T));
}

}  // namespace

TokenSelector::Layout TokenSelector::LayoutFor(size_t rows, size_t penalised, size_t biased,
                                               size_t masked) {
  Layout layout;
  size_t at = 0;
  const auto place = [&at](size_t bytes) {
    const size_t offset = at;
    at += bytes;
    return offset;
  };
  layout.seeds = place(rows * sizeof(uint64_t));
  layout.draw_index = place(rows * sizeof(uint64_t));
  layout.penalised = place(penalised * sizeof(kernels::PenalisedToken));
  layout.biased = place(biased * sizeof(kernels::BiasedToken));
  layout.temperature = place(rows * sizeof(float));
  layout.top_p = place(rows * sizeof(float));
  layout.min_p = place(rows * sizeof(float));
  layout.repetition = place(rows * sizeof(float));
  layout.presence = place(rows * sizeof(float));
  layout.frequency = place(rows * sizeof(float));
  layout.top_k = place(rows * sizeof(int32_t));
  layout.penalised_offsets = place((rows + 1) * sizeof(int32_t));
  layout.biased_offsets = place((rows + 1) * sizeof(int32_t));
  layout.masked_offsets = place((rows + 1) * sizeof(int32_t));
  layout.masked = place(masked * sizeof(int32_t));
  layout.out_tokens = place(rows * sizeof(int32_t));
  layout.total = at;
  return layout;
}

absl::Status TokenSelector::Stage(const SamplingColumns& columns, kernels::Stream stream) {
  const size_t rows = columns.rows();
  raw_rows_.clear();
  for (size_t i = 0; i < rows; ++i) {
    if (columns.want_raw_logits[i] != 0) raw_rows_.push_back(static_cast<int>(i));
  }
  const Layout layout =
      LayoutFor(rows, columns.penalised.size(), columns.biased.size(), columns.masked.size());
  if (layout.total > capacity_bytes_) {
    // Doubling keeps the number of reallocations logarithmic in the largest call seen.
    const size_t capacity = std::max({layout.total, 2 * capacity_bytes_, size_t{1024}});
    // The previous call synchronised its stream, so the old buffer is no longer in use.
    SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer device,
                               kernels::DeviceBuffer::Allocate(backend_, capacity));
    device_ = std::move(device);
    capacity_bytes_ = capacity;
  }
  layout_ = layout;
  rows_ = static_cast<int>(rows);
  any_penalised_ = !columns.penalised.empty();
  any_biased_ = !columns.biased.empty();
  any_masked_ = !columns.masked.empty();
  host_.resize(std::max(host_.size(), (layout.out_tokens + sizeof(uint64_t) - 1) / 8));
  std::byte* host = reinterpret_cast<std::byte*>(host_.data());
  Place(host, layout.seeds, columns.seeds);
  Place(host, layout.draw_index, columns.draw_index);
  Place(host, layout.temperature, columns.temperature);
  Place(host, layout.top_p, columns.top_p);
  Place(host, layout.min_p, columns.min_p);
  Place(host, layout.repetition, columns.repetition_penalty);
  Place(host, layout.presence, columns.presence_penalty);
  Place(host, layout.frequency, columns.frequency_penalty);
  Place(host, layout.top_k, columns.top_k);
  Place(host, layout.penalised_offsets, columns.penalised_offsets);
  Place(host, layout.penalised, columns.penalised);
  Place(host, layout.biased_offsets, columns.biased_offsets);
  Place(host, layout.biased, columns.biased);
  Place(host, layout.masked_offsets, columns.masked_offsets);
  Place(host, layout.masked, columns.masked);
  kernels::CopyHostToDevice(backend_, device_.data(), host, layout.out_tokens, stream);
  return absl::OkStatus();
}

kernels::SamplingParams TokenSelector::Params(float* logits, int64_t logits_stride,
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
  // Rows without adjustments skip the op's adjustment pass entirely.
  if (any_penalised_) {
    params.repetition_penalty = At<const float>(layout_.repetition);
    params.presence_penalty = At<const float>(layout_.presence);
    params.frequency_penalty = At<const float>(layout_.frequency);
    params.penalised_offsets = At<const int32_t>(layout_.penalised_offsets);
    params.penalised = At<const kernels::PenalisedToken>(layout_.penalised);
  }
  if (any_biased_) {
    params.biased_offsets = At<const int32_t>(layout_.biased_offsets);
    params.biased = At<const kernels::BiasedToken>(layout_.biased);
  }
  if (any_masked_) {
    params.masked_offsets = At<const int32_t>(layout_.masked_offsets);
    params.masked = At<const int32_t>(layout_.masked);
  }
  params.out_tokens = At<int32_t>(layout_.out_tokens);
  return params;
}

void TokenSelector::Select(float* logits, int64_t logits_stride, int vocab,
                           std::span<int32_t> out_tokens, std::span<float> raw_logits,
                           kernels::Stream stream) {
  // Before the op: it adjusts the rows in place.
  const size_t row_bytes = static_cast<size_t>(vocab) * sizeof(float);
  for (size_t j = 0; j < raw_rows_.size(); ++j) {
    kernels::CopyDeviceToHost(backend_, raw_logits.data() + j * vocab,
                              logits + raw_rows_[j] * logits_stride, row_bytes, stream);
  }
  kernels::LaunchSampling(backend_, Params(logits, logits_stride, vocab), stream);
  kernels::CopyDeviceToHost(backend_, out_tokens.data(), At<const int32_t>(layout_.out_tokens),
                            out_tokens.size_bytes(), stream);
}

}  // namespace slotserve::models
