// Token-id text files as the command-line tools read them: one sequence per line, ids
// separated by spaces (python/evaluation.py's load_ids writes and reads the same).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::models {

enum class EmptyLines {
  kSkip,    // a blank line separates nothing (books of a corpus)
  kRefuse,  // every line is one member of a pair, so a blank one is an error
};

// Every line of `path` as ids. Errors name `flag` when the file cannot be read, and the file
// and line for a token that is not a non-negative integer (or a refused empty line); a file
// with no ids at all is an error too.
absl::StatusOr<std::vector<std::vector<int32_t>>> ReadIdLines(const std::string& flag,
                                                              const std::string& path,
                                                              EmptyLines empty_lines);

}  // namespace slotserve::models
