// Reading a file a flag names (--tls-cert, --api-keys-file, ...) whole, with an error that
// names the flag and the path, so an operator sees which setting points at the wrong file.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace slotserve::server {

// The file's bytes, or NOT_FOUND "<flag>=<path>: cannot read the file ...".
absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path);

}  // namespace slotserve::server
