// What a selecting model call (LanguageModel::StepAndSample, PrefillAndSample) takes for its
// rows: the selection op's per-row columns (kernels/sampling.h), in host memory, one entry per
// row, plus each row's lists of adjustments laid end to end. The options these come from, and
// their checks, are the engine's (engine/sampling_options.h): a model only stages the columns
// where its logits are and runs the op on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "kernels/sampling.h"

namespace slotserve::models {

struct SamplingColumns {
  // [rows] each: the op's per-row options (kernels::SamplingParams) and random stream.
  std::vector<float> temperature;
  std::vector<int32_t> top_k;
  std::vector<float> top_p;
  std::vector<float> min_p;
  std::vector<float> repetition_penalty;
  std::vector<float> presence_penalty;
  std::vector<float> frequency_penalty;
  std::vector<uint64_t> seeds;
  std::vector<uint64_t> draw_index;  // which draw of the row's stream its token uses
  // Row r's entries of each list are [offsets[r], offsets[r + 1]); offsets have rows + 1
  // entries, starting at 0. Penalised tokens are needed only when the row's options use a
  // penalty; biased ids are distinct within a row.
  std::vector<int32_t> penalised_offsets = {0};
  std::vector<kernels::PenalisedToken> penalised;
  std::vector<int32_t> biased_offsets = {0};
  std::vector<kernels::BiasedToken> biased;
  std::vector<int32_t> masked_offsets = {0};
  std::vector<int32_t> masked;  // ids the row may not pick now
  // [rows]: 1 when the call should also hand back the row's raw logits (before any
  // adjustment), for logprobs. Not the op's: the call copies those rows out before it.
  std::vector<uint8_t> want_raw_logits;

  size_t rows() const { return seeds.size(); }
  // How many rows want their raw logits.
  size_t raw_rows() const;
  // Empties every column, keeping the memory (a step reuses one).
  void Clear();
  // Appends one row's lists and their offsets (the per-row columns are the caller's to push).
  void AddLists(std::span<const kernels::PenalisedToken> row_penalised,
                std::span<const kernels::BiasedToken> row_biased,
                std::span<const int32_t> row_masked);
};

// The selecting calls' shape check: INVALID_ARGUMENT naming `call` unless every column has one
// entry per slot of a `rows`-row call (each offsets column rows + 1, ending at its list's
// size), there is one output id per row, and `raw_logits` holds vocab floats per row that
// wants them. The values are not checked: the engine's entry checked the options they come
// from, once per request (engine/request_validation.cc).
absl::Status CheckSamplingColumns(const SamplingColumns& columns, size_t rows, size_t out_tokens,
                                  size_t raw_logits, int vocab, const char* call);

}  // namespace slotserve::models
