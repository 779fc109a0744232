#include "tests/golden/seq2seq_teacher_forced.h"

#include "base/status_macros.h"

namespace slotserve::golden {

absl::StatusOr<Seq2seqUnderTest> LoadSeq2seqUnderTest(const std::filesystem::path& dir,
                                                      kernels::Backend backend, int slots) {
  Seq2seqUnderTest loaded;
  SLOTSERVE_ASSIGN_OR_RETURN(loaded.model, models::LanguageModel::Load(dir, backend));
  if (loaded.model->seq2seq() == nullptr) {
    return absl::InvalidArgumentError(dir.string() + " is not an encoder-decoder model");
  }
  SLOTSERVE_ASSIGN_OR_RETURN(loaded.states, loaded.model->AllocateStates(slots));
  return loaded;
}

std::vector<int32_t> DecoderInputs(const Seq2seqGolden& golden, int32_t decoder_start_id) {
  std::vector<int32_t> inputs = {decoder_start_id};
  inputs.insert(inputs.end(), golden.target.begin(), golden.target.end() - 1);
  return inputs;
}

absl::StatusOr<std::vector<float>> Seq2seqWholeLogits(models::LanguageModel& model,
                                                      models::StateArena& states, int slot,
                                                      std::span<const int32_t> source,
                                                      std::span<const int32_t> inputs) {
  SLOTSERVE_RETURN_IF_ERROR(model.Encode(states, slot, source));
  std::vector<float> logits(inputs.size() * model.config().vocab_size);
  SLOTSERVE_RETURN_IF_ERROR(
      model.Prefill(states, slot, inputs, models::LogitsWanted::kEveryToken, logits));
  return logits;
}

absl::StatusOr<std::vector<float>> Seq2seqSteppedInABatchLogits(models::LanguageModel& model,
                                                                models::StateArena& states,
                                                                std::span<const int32_t> source,
                                                                std::span<const int32_t> inputs) {
  SLOTSERVE_RETURN_IF_ERROR(model.Encode(states, 2, source));
  SLOTSERVE_RETURN_IF_ERROR(model.Encode(states, 0, source.first(3)));
  const int vocab = model.config().vocab_size;
  std::vector<float> step(2 * vocab);
  std::vector<float> logits;
  const std::vector<int32_t> slots = {0, 2};
  for (const int32_t input : inputs) {
    const std::vector<int32_t> tokens = {input, input};
    SLOTSERVE_RETURN_IF_ERROR(model.Step(states, slots, tokens, step));
    logits.insert(logits.end(), step.begin() + vocab, step.end());
  }
  return logits;
}

}  // namespace slotserve::golden
