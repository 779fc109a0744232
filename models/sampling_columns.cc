#include "models/sampling_columns.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace slotserve::models {
namespace {

// Row r's entries of a list end at offsets[r + 1]; offsets[rows] is the list's size.
template <typename T>
void AppendList(std::vector<int32_t>& offsets, std::vector<T>& list, std::span<const T> row) {
  list.insert(list.end(), row.begin(), row.end());
  offsets.push_back(static_cast<int32_t>(list.size()));
}

bool OffsetsFit(const std::vector<int32_t>& offsets, size_t rows, size_t entries) {
  return offsets.size() == rows + 1 && offsets.front() == 0 &&
         static_cast<size_t>(offsets.back()) == entries;
}

}  // namespace

size_t SamplingColumns::raw_rows() const {
  return static_cast<size_t>(std::count(want_raw_logits.begin(), want_raw_logits.end(), 1));
}

void SamplingColumns::Clear() {
  for (std::vector<float>* column :
       {&temperature, &top_p, &min_p, &repetition_penalty, &presence_penalty, &frequency_penalty}) {
    column->clear();
  }
  top_k.clear();
  seeds.clear();
  draw_index.clear();
  penalised_offsets.assign(1, 0);
  penalised.clear();
  biased_offsets.assign(1, 0);
  biased.clear();
  masked_offsets.assign(1, 0);
  masked.clear();
  want_raw_logits.clear();
}

void SamplingColumns::AddLists(std::span<const kernels::PenalisedToken> row_penalised,
                               std::span<const kernels::BiasedToken> row_biased,
                               std::span<const int32_t> row_masked) {
  AppendList(penalised_offsets, penalised, row_penalised);
  AppendList(biased_offsets, biased, row_biased);
  AppendList(masked_offsets, masked, row_masked);
}

absl::Status CheckSamplingColumns(const SamplingColumns& columns, size_t rows, size_t out_tokens,
                                  size_t raw_logits, int vocab, const char* call) {
  const size_t sizes[] = {columns.temperature.size(),
                          columns.top_k.size(),
                          columns.top_p.size(),
                          columns.min_p.size(),
                          columns.repetition_penalty.size(),
                          columns.presence_penalty.size(),
                          columns.frequency_penalty.size(),
                          columns.seeds.size(),
                          columns.draw_index.size(),
                          columns.want_raw_logits.size()};
  if (std::any_of(std::begin(sizes), std::end(sizes), [&](size_t n) { return n != rows; })) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": sampling columns of ", *std::max_element(std::begin(sizes), std::end(sizes)),
        " rows for ", rows, " slots, expected one row each"));
  }
  if (!OffsetsFit(columns.penalised_offsets, rows, columns.penalised.size()) ||
      !OffsetsFit(columns.biased_offsets, rows, columns.biased.size()) ||
      !OffsetsFit(columns.masked_offsets, rows, columns.masked.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": a sampling list's offsets do not hold ", rows + 1,
        " entries from 0 to the list's size (SamplingColumns::AddLists keeps them so)"));
  }
  if (out_tokens != rows) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, ": out_tokens holds ", out_tokens, " ids, expected ", rows));
  }
  const size_t raw_rows = columns.raw_rows();
  if (raw_logits != raw_rows * static_cast<size_t>(vocab)) {
    return absl::InvalidArgumentError(absl::StrCat(call, ": raw_logits holds ", raw_logits,
                                                   " floats, expected ", raw_rows, " rows of ",
                                                   vocab, " (the rows that want them)"));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
