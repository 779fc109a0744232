// The per-row options of a device-sampled decode step (LanguageModel::StepAndSample), staged in
// one device buffer the model owns: grown when a larger batch arrives, otherwise reused, so a
// step allocates nothing and crosses to the device with one copy. The sampled ids land in the
// same buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "kernels/sampling.h"
#include "models/token_sampling.h"

namespace slotserve::models {

class StepSamplingInputs {
 public:
  explicit StepSamplingInputs(kernels::Backend backend) : backend_(backend) {}

  // Queues the copy of `sampling` (already checked) to the device on `stream`, growing the
  // buffer first when it holds fewer rows. The host staging stays untouched until the next
  // call, so the copy may still be in flight when this returns.
  absl::Status Stage(std::span<const TokenSampling> sampling, kernels::Stream stream);

  // The op's parameters for the rows last staged, reading `logits` ([rows, logits_stride]).
  kernels::SamplingParams Params(const float* logits, int64_t logits_stride, int vocab) const;
  // Where the op writes the rows' token ids, in device memory.
  const int32_t* out_tokens() const;

 private:
  // Byte offsets of each per-row array in a buffer of `capacity` rows (8-byte arrays first, so
  // every array is aligned); the inputs are [0, out_tokens), the ids follow them.
  struct Layout {
    size_t seeds, draw_index, temperature, top_p, min_p, top_k, out_tokens, total;
  };
  static Layout LayoutFor(int capacity);

  template <typename T>
  T* At(size_t offset) const {
    return reinterpret_cast<T*>(device_.as<std::byte>() + offset);
  }

  kernels::Backend backend_;
  int capacity_ = 0;
  int rows_ = 0;
  Layout layout_{};
  kernels::DeviceBuffer device_;
  std::vector<uint64_t> host_;  // the inputs part of the layout, 8-byte aligned
};

}  // namespace slotserve::models
