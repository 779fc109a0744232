#include "tests/unit/engine/fake_seq2seq_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/device_memory.h"

namespace slotserve::engine::testing {

FakeSeq2seqModel::FakeSeq2seqModel() {
  config_.vocab_size = 29;
  config_.d_model = 8;
  config_.n_layers = 1;
  config_.n_heads = 1;
  config_.d_ffn = 8;
  config_.bos_id = 1;
  config_.eos_id = kEos;
  shape_.max_source_tokens = kMaxSource;
  shape_.decoder_start_id = kDecoderStart;
  shape_.cross_kind = "abc";
  shape_.decoder_state_bytes = 0;
  shape_.cross_memory_bytes = kFloats * sizeof(float);
}

absl::StatusOr<std::unique_ptr<models::StateArena>> FakeSeq2seqModel::AllocateStates(
    int num_slots) const {
  absl::StatusOr<kernels::DeviceBuffer> buffer =
      kernels::DeviceBuffer::Allocate(kernels::Backend::kCpu, num_slots * kFloats * sizeof(float));
  if (!buffer.ok()) return buffer.status();
  return std::make_unique<models::StateArena>(kernels::Backend::kCpu, num_slots, kFloats,
                                              std::move(*buffer));
}

absl::Status FakeSeq2seqModel::Encode(models::StateArena& states, int slot,
                                      std::span<const int32_t> source) {
  ++counters_->encodes;
  if (std::find(source.begin(), source.end(), kPoisonId) != source.end()) {
    return absl::InternalError(absl::StrCat("the fake encoder refuses id ", kPoisonId));
  }
  if (source.empty() || source.size() > static_cast<size_t>(kMaxSource)) {
    return absl::InvalidArgumentError(absl::StrCat("source of ", source.size(), " ids"));
  }
  float* state = states.device_data() + static_cast<size_t>(slot) * kFloats;
  std::fill(state, state + kFloats, 0.0f);
  state[0] = static_cast<float>(source.size());
  std::copy(source.begin(), source.end(), state + 1);
  states.set_position(slot, 0);
  return absl::OkStatus();
}

void FakeSeq2seqModel::WriteLogits(const float* slot_state, int32_t position,
                                   std::span<float> logits) const {
  std::fill(logits.begin(), logits.end(), 0.0f);
  const int source_length = static_cast<int>(slot_state[0]);
  const int k = position - 1;  // decoder tokens fed, less the start token
  const int32_t peak = k < source_length ? static_cast<int32_t>(slot_state[1 + k]) : kEos;
  logits[peak] = 10.0f;
}

absl::Status FakeSeq2seqModel::Prefill(models::StateArena& states, int slot,
                                       std::span<const int32_t> tokens, models::LogitsWanted wanted,
                                       std::span<float> logits) {
  if (wanted != models::LogitsWanted::kLastToken) {
    return absl::UnimplementedError("the fake model only gives last-token logits");
  }
  if (states.position(slot) == 0) counters_->first_decoder_token = tokens.front();
  states.set_position(slot, states.position(slot) + static_cast<int32_t>(tokens.size()));
  WriteLogits(states.device_data() + static_cast<size_t>(slot) * kFloats, states.position(slot),
              logits);
  return absl::OkStatus();
}

absl::Status FakeSeq2seqModel::Step(models::StateArena& states, std::span<const int32_t> slots,
                                    std::span<const int32_t> /*tokens*/, std::span<float> logits) {
  const size_t vocab = static_cast<size_t>(config_.vocab_size);
  for (size_t i = 0; i < slots.size(); ++i) {
    const int slot = slots[i];
    states.set_position(slot, states.position(slot) + 1);
    WriteLogits(states.device_data() + static_cast<size_t>(slot) * kFloats, states.position(slot),
                logits.subspan(i * vocab, vocab));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::engine::testing
