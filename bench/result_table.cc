#include "bench/result_table.h"

#include <algorithm>
#include <fstream>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace slotserve::bench {

ResultTable::ResultTable(std::string title, std::vector<std::string> columns)
    : title_(std::move(title)), columns_(std::move(columns)) {}

ResultTable& ResultTable::NewRow() {
  rows_.emplace_back();
  return *this;
}

ResultTable& ResultTable::Add(const std::string& text) {
  if (rows_.empty()) rows_.emplace_back();
  rows_.back().push_back(text);
  return *this;
}

ResultTable& ResultTable::Add(double value, int decimals) {
  return Add(absl::StrFormat("%.*f", decimals, value));
}

ResultTable& ResultTable::Add(long long value) { return Add(absl::StrCat(value)); }

absl::Status ResultTable::Validate() const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].size() != columns_.size()) {
      return absl::InternalError(absl::StrCat(title_, ": row ", i, " has ", rows_[i].size(),
                                              " cells, expected ", columns_.size()));
    }
  }
  return absl::OkStatus();
}

absl::Status ResultTable::WriteCsv(const std::filesystem::path& path) const {
  return WriteRows(path, /*append=*/false);
}

absl::Status ResultTable::AppendCsv(const std::filesystem::path& path) const {
  return WriteRows(path, /*append=*/true);
}

absl::Status ResultTable::WriteRows(const std::filesystem::path& path, bool append) const {
  SLOTSERVE_RETURN_IF_ERROR(Validate());
  const bool header = !append || !std::filesystem::exists(path);
  std::ofstream file(path, append ? std::ios::app : std::ios::trunc);
  if (header) file << absl::StrJoin(columns_, ",") << "\n";
  for (const auto& row : rows_) file << absl::StrJoin(row, ",") << "\n";
  file.close();
  if (!file) {
    return absl::UnavailableError(absl::StrCat(path.string(), ": cannot write the CSV file"));
  }
  return absl::OkStatus();
}

void ResultTable::Print(std::ostream& out) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) widths[c] = columns_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
      out << (c == 0 ? "" : "  ") << absl::StrFormat("%*s", static_cast<int>(widths[c]), cells[c]);
    }
    out << "\n";
  };
  out << "== " << title_ << "\n";
  print_row(columns_);
  for (const auto& row : rows_) print_row(row);
  out << std::flush;
}

}  // namespace slotserve::bench
