// A golden source and target fed to an encoder-decoder model as the engine feeds them, for the
// tests that compare its logits with a reference (exact weights, int8 activations): the decoder
// inputs whole in one Prefill, and one token per Step in a shared batch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "models/language_model.h"
#include "tests/golden/seq2seq_golden_data.h"

namespace slotserve::golden {

// A golden variant's model loaded on `backend` (an encoder-decoder one, or an error), with
// `slots` empty state slots.
struct Seq2seqUnderTest {
  std::unique_ptr<models::LanguageModel> model;
  std::unique_ptr<models::StateArena> states;
};
absl::StatusOr<Seq2seqUnderTest> LoadSeq2seqUnderTest(const std::filesystem::path& dir,
                                                      kernels::Backend backend, int slots);

// What the decoder reads to predict the golden target: decoder_start_id, then the target but
// its last token.
std::vector<int32_t> DecoderInputs(const Seq2seqGolden& golden, int32_t decoder_start_id);

// The source encoded into `slot` (empty), then one Prefill of every decoder input: every
// position's logits, [inputs, vocab].
absl::StatusOr<std::vector<float>> Seq2seqWholeLogits(models::LanguageModel& model,
                                                      models::StateArena& states, int slot,
                                                      std::span<const int32_t> source,
                                                      std::span<const int32_t> inputs);

// The source encoded into slot 2 and the source's first three tokens into slot 0 (both empty),
// then both stepped one decoder input at a time in one batch: the logits of slot 2 after each
// input, [inputs, vocab].
absl::StatusOr<std::vector<float>> Seq2seqSteppedInABatchLogits(models::LanguageModel& model,
                                                                models::StateArena& states,
                                                                std::span<const int32_t> source,
                                                                std::span<const int32_t> inputs);

}  // namespace slotserve::golden
