#include "tests/unit/engine/fake_language_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/device_memory.h"

namespace slotserve::engine::testing {
namespace {

void RaiseTo(std::atomic<int>& value, int candidate) {
  int seen = value.load();
  while (candidate > seen && !value.compare_exchange_weak(seen, candidate)) {
  }
}

}  // namespace

FakeLanguageModel::FakeLanguageModel(int vocab_size, Script script) : script_(std::move(script)) {
  config_.vocab_size = vocab_size;
  config_.d_model = 8;
  config_.n_layers = 1;
  config_.n_heads = 1;
  config_.d_ffn = 8;
  config_.bos_id = 1;
  config_.eos_id = 2;
  if (!script_) {
    script_ = [vocab_size](int32_t last, int32_t) {
      const int32_t next = last + 1;
      return next >= vocab_size ? 3 : std::max(next, 3);
    };
  }
}

absl::StatusOr<std::unique_ptr<models::StateArena>> FakeLanguageModel::AllocateStates(
    int num_slots) const {
  absl::StatusOr<kernels::DeviceBuffer> buffer =
      kernels::DeviceBuffer::Allocate(kernels::Backend::kCpu, num_slots * sizeof(float));
  if (!buffer.ok()) return buffer.status();
  return std::make_unique<models::StateArena>(kernels::Backend::kCpu, num_slots, 1,
                                              std::move(*buffer));
}

void FakeLanguageModel::WriteLogits(int32_t last_token, int32_t position,
                                    std::span<float> logits) const {
  std::fill(logits.begin(), logits.end(), 0.0f);
  // A runner-up one above the peak, so masking the peak (min_new_tokens) has a clear answer.
  const int32_t peak = script_(last_token, position);
  logits[(peak + 1) % logits.size()] = 5.0f;
  logits[peak] = 10.0f;
}

absl::Status FakeLanguageModel::Prefill(models::StateArena& states, int slot,
                                        std::span<const int32_t> tokens,
                                        models::LogitsWanted wanted, std::span<float> logits) {
  if (call_delay_ > absl::ZeroDuration()) absl::SleepFor(call_delay_);
  ++counters_->prefills;
  counters_->prefill_tokens += static_cast<int>(tokens.size());
  RaiseTo(counters_->largest_prefill, static_cast<int>(tokens.size()));
  if (wanted != models::LogitsWanted::kLastToken) {
    return absl::UnimplementedError("the fake model only gives last-token logits");
  }
  for (int32_t token : tokens) {
    if (token < 0 || token >= config_.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("token ", token, " outside vocabulary"));
    }
  }
  states.set_position(slot, states.position(slot) + static_cast<int32_t>(tokens.size()));
  states.device_data()[slot] = static_cast<float>(tokens.back());
  WriteLogits(tokens.back(), states.position(slot), logits);
  return absl::OkStatus();
}

absl::Status FakeLanguageModel::Step(models::StateArena& states, std::span<const int32_t> slots,
                                     std::span<const int32_t> tokens, std::span<float> logits) {
  if (call_delay_ > absl::ZeroDuration()) absl::SleepFor(call_delay_);
  ++counters_->steps;
  RaiseTo(counters_->largest_batch, static_cast<int>(slots.size()));
  if (fail_steps_) return absl::InternalError("the fake model was told to fail");
  const size_t vocab = static_cast<size_t>(config_.vocab_size);
  for (size_t i = 0; i < slots.size(); ++i) {
    const int slot = slots[i];
    states.set_position(slot, states.position(slot) + 1);
    states.device_data()[slot] = static_cast<float>(tokens[i]);
    WriteLogits(tokens[i], states.position(slot), logits.subspan(i * vocab, vocab));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::engine::testing
