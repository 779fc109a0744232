#include "server/flag_file.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace slotserve::server {

absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat(flag, "=", path, ": cannot read the file (missing or not readable)"));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat(flag, "=", path, ": read error"));
  return std::move(text).str();
}

}  // namespace slotserve::server
