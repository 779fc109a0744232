// A scripted encoder-decoder LanguageModel for the scheduler's seq2seq bookkeeping (a test
// double; the real model's numbers are checked in tests/unit/models and tests/golden). Its
// "translation" copies the source: a slot's cross memory is the source itself (up to
// kMaxSource ids), and after the decoder has fed k + 1 tokens (decoder_start_id first) the
// logits peak at source[k], then at eos. So the expected tokens of any source are known
// without the model, and a slot carrying another request's cross memory shows at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/language_model.h"
#include "models/seq2seq_shape.h"

namespace slotserve::engine::testing {

class FakeSeq2seqModel : public models::LanguageModel {
 public:
  static constexpr int kMaxSource = 6;
  static constexpr int32_t kDecoderStart = 0;
  static constexpr int32_t kEos = 2;
  // Encode refuses a source holding this id (INTERNAL), to test an encoder failure.
  static constexpr int32_t kPoisonId = 13;

  struct Counters {
    std::atomic<int> encodes{0};
    // The first token of the latest Prefill that started a decoder (position 0).
    std::atomic<int> first_decoder_token{-1};
  };

  FakeSeq2seqModel();
  std::shared_ptr<Counters> counters() const { return counters_; }

  const models::ModelConfig& config() const override { return config_; }
  const models::Seq2seqShape* seq2seq() const override { return &shape_; }
  kernels::Backend backend() const override { return kernels::Backend::kCpu; }
  int64_t state_bytes_per_request() const override { return kFloats * sizeof(float); }
  int32_t max_positions() const override { return 64; }
  absl::StatusOr<std::unique_ptr<models::StateArena>> AllocateStates(int num_slots) const override;
  absl::Status Encode(models::StateArena& states, int slot,
                      std::span<const int32_t> source) override;
  absl::Status Prefill(models::StateArena& states, int slot, std::span<const int32_t> tokens,
                       models::LogitsWanted wanted, std::span<float> logits) override;
  absl::Status Step(models::StateArena& states, std::span<const int32_t> slots,
                    std::span<const int32_t> tokens, std::span<float> logits) override;

 private:
  // Per slot: the source's length, then its ids (the cross memory).
  static constexpr int kFloats = 1 + kMaxSource;
  void WriteLogits(const float* slot_state, int32_t position, std::span<float> logits) const;

  models::ModelConfig config_;
  models::Seq2seqShape shape_;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
};

}  // namespace slotserve::engine::testing
