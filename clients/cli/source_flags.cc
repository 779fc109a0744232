#include "clients/cli/source_flags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::optional<std::string>, source, std::nullopt,
          "translate: the source text (encoder-decoder models; encoded with EOS, no BOS)");
ABSL_FLAG(std::vector<std::string>, source_ids, {},
          "translate: the source as comma-separated token ids instead of text");

namespace slotserve::clients {

bool SourceGiven() {
  return absl::GetFlag(FLAGS_source).has_value() || !absl::GetFlag(FLAGS_source_ids).empty();
}

absl::Status AddSource(v1::GenerateRequest* request) {
  const std::optional<std::string> text = absl::GetFlag(FLAGS_source);
  const std::vector<std::string> ids = absl::GetFlag(FLAGS_source_ids);
  if (text.has_value() && !ids.empty()) {
    return absl::InvalidArgumentError("give either --source or --source-ids, not both");
  }
  if (text.has_value()) request->mutable_source()->set_text(*text);
  for (const std::string& id_text : ids) {
    int32_t id;
    if (!absl::SimpleAtoi(id_text, &id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--source-ids: \"", id_text, "\" is not an integer token id"));
    }
    request->mutable_source()->mutable_token_ids()->add_ids(id);
  }
  return absl::OkStatus();
}

void PrintSeq2seqInfo(const v1::ModelInfo& info, std::FILE* out) {
  if (!info.is_seq2seq()) return;
  std::fprintf(out,
               "encoder-decoder:         cross attention %s, sources <= %u tokens, decoder "
               "start id %d\n"
               "state parts:             %lld bytes per hypothesis + %lld cross memory bytes per "
               "request (shared by its beams)\n",
               info.cross_attention_kind().c_str(), info.max_source_tokens(),
               info.decoder_start_id(),
               static_cast<long long>(info.decoder_state_bytes_per_request()),
               static_cast<long long>(info.cross_memory_bytes_per_request()));
}

}  // namespace slotserve::clients
