// Runs the selection op (kernels/sampling.h) for the rows of one model call, where the logits
// are. The call's columns (models/sampling_columns.h) are staged in one device buffer the selector
// owns: grown when a larger call arrives, otherwise reused, so a step allocates nothing once sizes
// settled and crosses to the device with one copy. Only the chosen ids come back to the host,
// plus the raw logits of the rows that ask for them (for logprobs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "kernels/sampling.h"
#include "models/sampling_columns.h"

namespace slotserve::models {

class TokenSelector {
 public:
  // `backend` is where the logits are and the op runs.
  explicit TokenSelector(kernels::Backend backend) : backend_(backend) {}

  // Queues the copy of `columns` (shape already checked) to the device on `stream`, growing the
  // buffer first when they do not fit. The host staging stays untouched until the next call, so the
  // copy may still be in flight when this returns.
  absl::Status Stage(const SamplingColumns& columns, kernels::Stream stream);

  // For the rows last staged, whose logits are `logits` ([rows, logits_stride], device memory,
  // adjusted in place by the op), queues on `stream`: the copy of the raw rows that want them
  // into `raw_logits` (host, [those rows, vocab] in row order), the op, and the copy of the ids
  // into `out_tokens` (host, [rows]). Both are complete once the stream is synchronised.
  void Select(float* logits, int64_t logits_stride, int vocab, std::span<int32_t> out_tokens,
              std::span<float> raw_logits, kernels::Stream stream);

 private:
  // Byte offsets of each array in the buffer for one call's rows and adjustments (8-byte
  // arrays first, so every array is aligned); the inputs are [0, out_tokens), the ids follow.
  struct Layout {
    size_t seeds, draw_index, penalised, biased, temperature, top_p, min_p, repetition, presence,
        frequency, top_k, penalised_offsets, biased_offsets, masked_offsets, masked, out_tokens,
        total;
  };
  static Layout LayoutFor(size_t rows, size_t penalised, size_t biased, size_t masked);
  kernels::SamplingParams Params(float* logits, int64_t logits_stride, int vocab) const;

  template <typename T>
  T* At(size_t offset) const {
    return reinterpret_cast<T*>(device_.as<std::byte>() + offset);
  }

  kernels::Backend backend_;
  size_t capacity_bytes_ = 0;
  int rows_ = 0;
  bool any_penalised_ = false;
  bool any_biased_ = false;
  bool any_masked_ = false;
  std::vector<int> raw_rows_;  // the staged rows that want their raw logits
  Layout layout_{};
  kernels::DeviceBuffer device_;
  std::vector<uint64_t> host_;  // the inputs part of the layout, 8-byte aligned
};

}  // namespace slotserve::models
