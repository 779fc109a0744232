// A benchmark's results: named columns, rows of cells. Written as CSV (for the report and the
// plots) and printed as an aligned text table (for the person watching the run).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace slotserve::bench {

class ResultTable {
 public:
  ResultTable(std::string title, std::vector<std::string> columns);

  // Starts a new row; cells are appended with Add in column order.
  ResultTable& NewRow();
  ResultTable& Add(const std::string& text);
  ResultTable& Add(double value, int decimals);
  ResultTable& Add(long long value);
  ResultTable& Add(int value) { return Add(static_cast<long long>(value)); }

  const std::string& title() const { return title_; }
  size_t num_rows() const { return rows_.size(); }

  // Fails when a row has fewer or more cells than there are columns.
  absl::Status Validate() const;
  absl::Status WriteCsv(const std::filesystem::path& path) const;
  // Appends the rows to `path`, writing the header line first when the file does not exist yet
  // (several runs collecting rows into one CSV).
  absl::Status AppendCsv(const std::filesystem::path& path) const;
  void Print(std::ostream& out) const;

 private:
  absl::Status WriteRows(const std::filesystem::path& path, bool append) const;

  std::string title_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace slotserve::bench
