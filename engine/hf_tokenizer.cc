#include "engine/hf_tokenizer.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "base/utf8.h"
#include "engine/hf_added_tokens.h"
#include "engine/hf_bpe_model.h"
#include "engine/hf_decoder.h"
#include "engine/hf_json.h"
#include "engine/hf_normalizer.h"
#include "engine/hf_post_processor.h"
#include "engine/hf_pre_tokenizer.h"
#include "engine/hf_tokenizer_config.h"

namespace slotserve::engine {
using hf::Cat;
namespace hf {

// The parts of one tokenizer.json, in the order they apply.
class Pipeline {
 public:
  AddedTokens added_tokens;
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  BpeModel model;
  PostProcessor post_processor;
  Decoder decoder;
};

// The keys of tokenizer.json this reads; any other is refused rather than ignored.
constexpr std::string_view kKnownKeys[] = {"version",      "truncation",     "padding",
                                           "added_tokens", "normalizer",     "pre_tokenizer",
                                           "model",        "post_processor", "decoder"};

absl::Status Prefixed(std::string_view name, const absl::Status& status) {
  return absl::Status(status.code(), Cat(name, ": ", status.message()));
}

// The id of a token named in tokenizer_config.json: an added token or a vocabulary piece.
absl::StatusOr<int> ConfiguredId(const std::optional<std::string>& token, std::string_view key,
                                 const Pipeline& pipeline, const std::filesystem::path& dir) {
  if (!token.has_value()) return -1;
  int id = pipeline.added_tokens.IdOf(*token);
  if (id < 0) id = pipeline.model.PieceId(*token);
  if (id < 0) {
    return absl::InvalidArgumentError(
        Cat((dir / hf::TokenizerConfig::kFileName).string(), ": ", key, " \"", *token,
            "\" is neither an added token nor in tokenizer.json's vocabulary"));
  }
  return id;
}

}  // namespace hf

HfTokenizer::HfTokenizer() = default;
HfTokenizer::~HfTokenizer() = default;

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::Load(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    return absl::NotFoundError(Cat(file.string(), ": no such tokenizer.json file"));
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return FromJsonText(buffer.str(), file.parent_path(), file.string());
}

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::FromJsonText(
    std::string_view json_text, const std::filesystem::path& config_dir, std::string_view name) {
  using hf::Json;
  const Json json = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(Cat(name, ": not a JSON object"));
  }
  for (const auto& [key, value] : json.items()) {
    bool known = false;
    for (std::string_view k : hf::kKnownKeys) known = known || key == k;
    if (!known) return absl::InvalidArgumentError(Cat(name, ": ", key, " is not supported"));
  }
  if (!hf::IsAbsent(json, "truncation")) {
    return absl::InvalidArgumentError(Cat(name, ": truncation is not supported (must be null)"));
  }
  static const Json kNull;
  auto member = [&](std::string_view key) -> const Json& {
    const auto it = json.find(key);
    return it == json.end() ? kNull : *it;
  };
  auto pipeline = std::make_unique<hf::Pipeline>();
  {
    absl::StatusOr<hf::Normalizer> normalizer =
        hf::Normalizer::FromJson(member("normalizer"), "normalizer");
    if (!normalizer.ok()) return hf::Prefixed(name, normalizer.status());
    pipeline->normalizer = *std::move(normalizer);
    absl::StatusOr<hf::AddedTokens> added =
        hf::AddedTokens::FromJson(member("added_tokens"), "added_tokens", pipeline->normalizer);
    if (!added.ok()) return hf::Prefixed(name, added.status());
    pipeline->added_tokens = *std::move(added);
    absl::StatusOr<hf::PreTokenizer> pre =
        hf::PreTokenizer::FromJson(member("pre_tokenizer"), "pre_tokenizer");
    if (!pre.ok()) return hf::Prefixed(name, pre.status());
    pipeline->pre_tokenizer = *std::move(pre);
    if (member("model").is_null()) {
      return absl::InvalidArgumentError(Cat(name, ": model is missing"));
    }
    absl::StatusOr<hf::BpeModel> model = hf::BpeModel::FromJson(member("model"), "model");
    if (!model.ok()) return hf::Prefixed(name, model.status());
    pipeline->model = *std::move(model);
    absl::StatusOr<hf::PostProcessor> post =
        hf::PostProcessor::FromJson(member("post_processor"), "post_processor");
    if (!post.ok()) return hf::Prefixed(name, post.status());
    pipeline->post_processor = *std::move(post);
    absl::StatusOr<hf::Decoder> decoder = hf::Decoder::FromJson(member("decoder"), "decoder");
    if (!decoder.ok()) return hf::Prefixed(name, decoder.status());
    pipeline->decoder = *std::move(decoder);
  }

  std::unique_ptr<HfTokenizer> tokenizer(new HfTokenizer());
  tokenizer->pieces_ = pipeline->model.pieces();
  std::vector<bool> special(tokenizer->pieces_.size(), false);
  for (const hf::AddedToken& token : pipeline->added_tokens.tokens()) {
    if (static_cast<size_t>(token.id) >= tokenizer->pieces_.size()) {
      tokenizer->pieces_.resize(token.id + 1);
      special.resize(token.id + 1, false);
    }
    const std::string& existing = tokenizer->pieces_[token.id];
    const std::string& content = token.content;
    if (!existing.empty() && existing != content) {
      return absl::InvalidArgumentError(Cat(name, ": added_tokens gives id ", token.id, " to \"",
                                            content, "\", but model.vocab has \"", existing,
                                            "\" there"));
    }
    tokenizer->pieces_[token.id] = content;
    special[token.id] = token.special;
  }
  for (int32_t id : pipeline->post_processor.prefix_ids) {
    if (id >= tokenizer->piece_count()) {
      return absl::InvalidArgumentError(Cat(name, ": post_processor names id ", id,
                                            ", past the vocabulary's ", tokenizer->piece_count()));
    }
  }
  const int count = tokenizer->piece_count();
  tokenizer->token_bytes_.resize(count);
  tokenizer->start_strip_.resize(count, 0);
  for (int id = 0; id < count; ++id) {
    if (special[id]) continue;  // skip_special_tokens: they decode to nothing
    tokenizer->token_bytes_[id] = pipeline->decoder.PieceBytes(tokenizer->pieces_[id]);
    tokenizer->start_strip_[id] =
        static_cast<uint8_t>(pipeline->decoder.StartStrip(tokenizer->token_bytes_[id]));
  }

  absl::StatusOr<hf::TokenizerConfig> config =
      config_dir.empty() ? hf::TokenizerConfig() : hf::TokenizerConfig::LoadFromDir(config_dir);
  if (!config.ok()) return config.status();
  absl::StatusOr<int> bos = hf::ConfiguredId(config->bos_token, "bos_token", *pipeline, config_dir);
  if (!bos.ok()) return bos.status();
  absl::StatusOr<int> eos = hf::ConfiguredId(config->eos_token, "eos_token", *pipeline, config_dir);
  if (!eos.ok()) return eos.status();
  const hf::PostProcessor& post = pipeline->post_processor;
  tokenizer->bos_id_ = *bos >= 0 ? *bos : post.prefix_ids.empty() ? -1 : post.prefix_ids.front();
  tokenizer->eos_id_ = *eos >= 0 ? *eos : post.suffix_ids.empty() ? -1 : post.suffix_ids.back();
  const bool template_bos = tokenizer->bos_id_ >= 0 && !post.prefix_ids.empty() &&
                            post.prefix_ids.front() == tokenizer->bos_id_;
  const bool template_eos = tokenizer->eos_id_ >= 0 && !post.suffix_ids.empty() &&
                            post.suffix_ids.back() == tokenizer->eos_id_;
  tokenizer->adds_bos_ = config->add_bos_token.value_or(template_bos) && tokenizer->bos_id_ >= 0;
  tokenizer->adds_eos_ = config->add_eos_token.value_or(template_eos) && tokenizer->eos_id_ >= 0;
  tokenizer->model_max_length_ = config->model_max_length;
  tokenizer->pipeline_ = std::move(pipeline);
  return tokenizer;
}

absl::StatusOr<std::vector<int32_t>> HfTokenizer::Encode(std::string_view text,
                                                         bool parse_special) const {
  if (const size_t bad = base::FirstInvalidUtf8Byte(text); bad != std::string_view::npos) {
    return absl::InvalidArgumentError(
        Cat("text could not be tokenised: not valid UTF-8 at byte ", bad));
  }
  const hf::Pipeline& p = *pipeline_;
  std::vector<int32_t> ids;
  std::vector<std::string> words;
  bool at_input_start = true;
  for (const auto& raw : p.added_tokens.Split(text, /*normalized=*/false, parse_special)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      at_input_start = false;
      continue;
    }
    const std::string normalized = p.normalizer.Normalize(raw.text);
    for (const auto& segment :
         p.added_tokens.Split(normalized, /*normalized=*/true, parse_special)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        at_input_start = false;
        continue;
      }
      words.clear();
      p.pre_tokenizer.Split(segment.text, at_input_start, &words);
      for (const std::string& word : words) p.model.EncodeWord(word, &ids);
      at_input_start = false;
    }
  }
  return ids;
}

std::string HfTokenizer::Decode(std::span<const int32_t> ids) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id >= 0 && id < piece_count()) bytes.append(token_bytes_[id]);
  }
  std::string text;
  const std::string_view rest =
      std::string_view(bytes).substr(pipeline_->decoder.StartStrip(bytes));
  base::AppendCompleteUtf8(rest, /*at_end=*/true, &text);
  return text;
}

std::string_view HfTokenizer::IdToPiece(int32_t id) const {
  if (id < 0 || id >= piece_count()) return {};
  return pieces_[id];
}

std::string_view HfTokenizer::TokenBytes(int32_t id, bool at_sequence_start) const {
  if (id < 0 || id >= piece_count()) return {};
  std::string_view bytes = token_bytes_[id];
  if (at_sequence_start) bytes.remove_prefix(start_strip_[id]);
  return bytes;
}

const std::vector<int32_t>& HfTokenizer::prefix_ids() const {
  return pipeline_->post_processor.prefix_ids;
}
const std::vector<int32_t>& HfTokenizer::suffix_ids() const {
  return pipeline_->post_processor.suffix_ids;
}

}  // namespace slotserve::engine
