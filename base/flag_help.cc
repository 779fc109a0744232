#include "base/flag_help.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"

namespace slotserve::base {

bool HelpRequested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") return false;
    for (absl::string_view name : {"help", "helpfull", "helpshort"}) {
      if (arg == absl::StrCat("-", name) || arg == absl::StrCat("--", name)) return true;
    }
  }
  return false;
}

std::string FlagHelp(absl::string_view usage,
                     const std::function<bool(absl::string_view file)>& defined_in) {
  std::map<absl::string_view, const absl::CommandLineFlag*> flags;  // sorted by name
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (defined_in(flag->Filename())) flags.emplace(name, flag);
  }
  std::string help = absl::StrCat(usage, "\n\nFlags:\n");
  for (const auto& [name, flag] : flags) {
    // Spelt with hyphens, as the documentation writes flags (both spellings are accepted).
    std::string spelling(name);
    std::replace(spelling.begin(), spelling.end(), '_', '-');
    absl::StrAppend(&help, "  --", spelling,
                    " (default: ", flag->DefaultValue().empty() ? "\"\"" : flag->DefaultValue(),
                    ")\n      ", flag->Help(), "\n");
  }
  return help;
}

}  // namespace slotserve::base
