// --help for the project's binaries: the usage message and the binary's own flags, each with
// its help text and default, exit status 0. absl's built-in --help exits 1 and heads each group
// with the absolute path of the file that defined it, which is the build machine's source tree
// (issue 57); these print flag names only.
#ifndef SLOTSERVE_BASE_FLAG_HELP_H_
#define SLOTSERVE_BASE_FLAG_HELP_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace slotserve::base {

// True when the command line asks for help (--help, --helpfull, --helpshort, -help, ...,
// before any bare "--"); absl would otherwise take these itself.
bool HelpRequested(int argc, char** argv);

// `usage`, then every flag defined in a file that `defined_in` accepts, sorted by name, as
// "  --flag-name (default: value)" and its help on the next line. Other flags (absl's,
// gRPC's) are left out.
std::string FlagHelp(absl::string_view usage,
                     const std::function<bool(absl::string_view file)>& defined_in);

}  // namespace slotserve::base

#endif  // SLOTSERVE_BASE_FLAG_HELP_H_
