#include "models/tools/id_lines.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace slotserve::models {

absl::StatusOr<std::vector<std::vector<int32_t>>> ReadIdLines(const std::string& flag,
                                                              const std::string& path,
                                                              EmptyLines empty_lines) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::vector<std::vector<int32_t>> lines;
  std::string line;
  for (int line_number = 1; std::getline(file, line); ++line_number) {
    std::istringstream tokens(line);
    std::vector<int32_t> ids;
    std::string token;
    while (tokens >> token) {
      int32_t id;
      if (!absl::SimpleAtoi(token, &id) || id < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":", line_number, ": expected non-negative token ids, got \"", token, "\""));
      }
      ids.push_back(id);
    }
    if (!ids.empty()) {
      lines.push_back(std::move(ids));
    } else if (empty_lines == EmptyLines::kRefuse) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_number, ": empty line (every line is one sequence)"));
    }
  }
  if (lines.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no token ids"));
  return lines;
}

}  // namespace slotserve::models
