#include "models/token_selector.h"

#include <algorithm>
#include <cstring>

#include "base/status_macros.h"

namespace slotserve::models {
namespace {

template <typename T, typename Field>
void Scatter(std::byte* base, size_t offset, std::span<const TokenSampling> rows, Field field) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const T value = field(rows[i]);
    std::memcpy(base + offset + i * sizeof(T), &value, sizeof(T));
  }
}

// Row r's entries of `list` start at offsets[r]; offsets[rows] is the total.
template <typename T, typename List>
void ScatterLists(std::byte* base, size_t offsets_at, size_t entries_at,
                  std::span<const TokenSampling> rows, List list) {
  int32_t next = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(base + offsets_at + i * sizeof(int32_t), &next, sizeof(int32_t));
    const std::span<const T> entries = list(rows[i]);
    if (!entries.empty()) {
      std::memcpy(base + entries_at + next * sizeof(T), entries.data(), entries.size_bytes());
    }
    next += static_cast<int32_t>(entries.size());
  }
  std::memcpy(base + offsets_at + rows.size() * sizeof(int32_t), &next, sizeof(int32_t));
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

absl::Status TokenSelector::Stage(std::span<const TokenSampling> rows, kernels::Stream stream) {
  size_t penalised = 0;
  size_t biased = 0;
  size_t masked = 0;
  raw_rows_.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    penalised += rows[i].penalised.size();
    biased += rows[i].biased.size();
    masked += rows[i].masked.size();
    if (rows[i].want_raw_logits) raw_rows_.push_back(static_cast<int>(i));
  }
  const Layout layout = LayoutFor(rows.size(), penalised, biased, masked);
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
  rows_ = static_cast<int>(rows.size());
  any_penalised_ = penalised > 0;
  any_biased_ = biased > 0;
  any_masked_ = masked > 0;
  host_.resize(std::max(host_.size(), (layout.out_tokens + sizeof(uint64_t) - 1) / 8));
  std::byte* host = reinterpret_cast<std::byte*>(host_.data());
  Scatter<uint64_t>(host, layout.seeds, rows, [](const TokenSampling& r) { return r.seed; });
  Scatter<uint64_t>(host, layout.draw_index, rows,
                    [](const TokenSampling& r) { return r.draw_index; });
  Scatter<float>(host, layout.temperature, rows,
                 [](const TokenSampling& r) { return r.options.temperature; });
  Scatter<float>(host, layout.top_p, rows, [](const TokenSampling& r) { return r.options.top_p; });
  Scatter<float>(host, layout.min_p, rows, [](const TokenSampling& r) { return r.options.min_p; });
  Scatter<float>(host, layout.repetition, rows,
                 [](const TokenSampling& r) { return r.options.repetition_penalty; });
  Scatter<float>(host, layout.presence, rows,
                 [](const TokenSampling& r) { return r.options.presence_penalty; });
  Scatter<float>(host, layout.frequency, rows,
                 [](const TokenSampling& r) { return r.options.frequency_penalty; });
  Scatter<int32_t>(host, layout.top_k, rows,
                   [](const TokenSampling& r) { return r.options.top_k; });
  ScatterLists<kernels::PenalisedToken>(host, layout.penalised_offsets, layout.penalised, rows,
                                        [](const TokenSampling& r) { return r.penalised; });
  ScatterLists<kernels::BiasedToken>(host, layout.biased_offsets, layout.biased, rows,
                                     [](const TokenSampling& r) { return r.biased; });
  ScatterLists<int32_t>(host, layout.masked_offsets, layout.masked, rows,
                        [](const TokenSampling& r) { return r.masked; });
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
