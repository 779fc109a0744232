#include "server/state_memory_budget.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace slotserve::server {
namespace {

struct ByteUnit {
  absl::string_view name;  // lower case
  double bytes;
};

constexpr double kKi = 1024.0;
constexpr std::array<ByteUnit, 18> kUnits = {{
    {"", 1.0},
    {"b", 1.0},
    {"k", kKi},
    {"ki", kKi},
    {"kib", kKi},
    {"kb", 1e3},
    {"m", kKi* kKi},
    {"mi", kKi* kKi},
    {"mib", kKi* kKi},
    {"mb", 1e6},
    {"g", kKi* kKi* kKi},
    {"gi", kKi* kKi* kKi},
    {"gib", kKi* kKi* kKi},
    {"gb", 1e9},
    {"t", kKi* kKi* kKi* kKi},
    {"ti", kKi* kKi* kKi* kKi},
    {"tib", kKi* kKi* kKi* kKi},
    {"tb", 1e12},
}};

absl::Status Malformed(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("expected a byte size such as 16GiB, 512MiB or 1000000 (units B, KiB, MiB, "
                   "GiB, TiB, KB, MB, GB, TB), got \"",
                   text, "\": ", why));
}

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  size_t number_end = 0;
  while (number_end < trimmed.size() &&
         (std::isdigit(static_cast<unsigned char>(trimmed[number_end])) ||
          trimmed[number_end] == '.')) {
    ++number_end;
  }
  double number = 0.0;
  if (number_end == 0 || !absl::SimpleAtod(trimmed.substr(0, number_end), &number)) {
    return Malformed(text, "it does not start with a number");
  }
  const std::string unit =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(trimmed.substr(number_end)));
  const auto match =
      std::find_if(kUnits.begin(), kUnits.end(), [&](const ByteUnit& u) { return u.name == unit; });
  if (match == kUnits.end()) return Malformed(text, absl::StrCat("unknown unit \"", unit, "\""));
  const double bytes = std::floor(number * match->bytes);
  if (bytes < 1.0) return Malformed(text, "it is less than one byte");
  if (bytes >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return Malformed(text, "it is too large");
  }
  return static_cast<int64_t>(bytes);
}

absl::StatusOr<int> SlotsForStateMemory(int64_t budget_bytes, int64_t state_bytes_per_request,
                                        std::optional<int> max_slots) {
  if (state_bytes_per_request <= 0) {
    return absl::InternalError(
        absl::StrCat("state bytes per request must be > 0, got ", state_bytes_per_request));
  }
  const int64_t states = budget_bytes / state_bytes_per_request;
  if (states < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--state-memory=", FormatByteSize(budget_bytes), " holds ", states,
        " request state(s) of this model (", FormatByteSize(state_bytes_per_request),
        " each); at least 2 are needed (one request slot and the padding slot); give at least ",
        FormatByteSize(2 * state_bytes_per_request)));
  }
  int64_t slots = std::min<int64_t>(states - 1, std::numeric_limits<int>::max());
  if (max_slots.has_value()) slots = std::min<int64_t>(slots, *max_slots);
  return static_cast<int>(slots);
}

std::string FormatByteSize(int64_t bytes) {
  constexpr std::array<const char*, 5> kNames = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= kKi && unit + 1 < kNames.size()) {
    value /= kKi;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.4g %s", value, kNames[unit]);
}

}  // namespace slotserve::server
