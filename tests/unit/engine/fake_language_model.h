// A scripted LanguageModel for the scheduler's bookkeeping tests (a test double: the numbers
// are made up; numerical checks of real models live in tests/unit/models and tests/golden).
// Each slot's state is one float in a real StateArena: the last token fed. The logits put a
// clear peak on next_token(last token, position), so greedy decoding follows the script.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "models/language_model.h"

namespace slotserve::engine::testing {

class FakeLanguageModel : public models::LanguageModel {
 public:
  // next(last_token, position_of_the_token_to_predict) -> the peaked id.
  using Script = std::function<int32_t(int32_t, int32_t)>;

  struct Counters {
    std::atomic<int> steps{0};
    std::atomic<int> prefills{0};
    std::atomic<int> largest_batch{0};
    std::atomic<int> largest_prefill{0};
    std::atomic<int> prefill_tokens{0};
  };

  // Vocabulary of `vocab_size`, eos 2, bos 1. Default script: last + 1, wrapping to 3 and
  // never eos.
  explicit FakeLanguageModel(int vocab_size = 64, Script script = nullptr);

  // Every model call sleeps this long (to let cancellations and deadlines land mid-request).
  void set_call_delay(absl::Duration delay) { call_delay_ = delay; }
  // Step fails with INTERNAL from now on.
  void set_fail_steps(bool fail) { fail_steps_ = fail; }
  void set_max_positions(int32_t max_positions) { max_positions_ = max_positions; }
  // Shared so a test can read them after the scheduler took the model.
  std::shared_ptr<Counters> counters() const { return counters_; }

  const models::ModelConfig& config() const override { return config_; }
  kernels::Backend backend() const override { return kernels::Backend::kCpu; }
  int64_t state_bytes_per_request() const override { return sizeof(float); }
  int32_t max_positions() const override { return max_positions_; }
  absl::StatusOr<std::unique_ptr<models::StateArena>> AllocateStates(int num_slots) const override;
  absl::Status Prefill(models::StateArena& states, int slot, std::span<const int32_t> tokens,
                       models::LogitsWanted wanted, std::span<float> logits) override;
  absl::Status Step(models::StateArena& states, std::span<const int32_t> slots,
                    std::span<const int32_t> tokens, std::span<float> logits) override;

 private:
  void WriteLogits(int32_t last_token, int32_t position, std::span<float> logits) const;

  models::ModelConfig config_;
  Script script_;
  absl::Duration call_delay_ = absl::ZeroDuration();
  std::atomic<bool> fail_steps_{false};
  int32_t max_positions_ = 1 << 30;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
};

}  // namespace slotserve::engine::testing
