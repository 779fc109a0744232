// A Hugging Face tokenizer.json (the `tokenizers` library's format, as Hub downloads ship
// it) as a Tokenizer: added tokens, normalizer, pre-tokenizer, BPE model, post-processor and
// decoder, each in its own hf_*.h. What it supports is listed there and in
// docs/FLA_CHECKPOINTS.md; anything else is refused at load, naming the JSON path
// ("tokenizer.json: pre_tokenizer.pretokenizers[1].type \"Digits\" is not supported"), so a
// file is never silently mis-tokenised.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"

namespace slotserve::engine {
namespace hf {
class Pipeline;
}

class HfTokenizer final : public Tokenizer {
 public:
  // Loads `file` (a tokenizer.json) and the tokenizer_config.json / special_tokens_map.json
  // beside it. NOT_FOUND when `file` does not exist; INVALID_ARGUMENT naming the file and
  // the JSON path of what is malformed or not supported.
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> Load(const std::filesystem::path& file);
  // The same from the text of the files (`config_dir` holds the two optional ones; empty:
  // none). `name` prefixes error messages.
  static absl::StatusOr<std::unique_ptr<HfTokenizer>> FromJsonText(
      std::string_view json_text, const std::filesystem::path& config_dir, std::string_view name);

  ~HfTokenizer() override;

  using Tokenizer::Encode;
  absl::StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                              bool parse_special) const override;
  // As `tokenizers` decodes with skip_special_tokens (and without transformers'
  // clean_up_tokenization_spaces): special tokens decode to nothing.
  std::string Decode(std::span<const int32_t> ids) const override;

  int piece_count() const override { return static_cast<int>(pieces_.size()); }
  int bos_id() const override { return bos_id_; }
  int eos_id() const override { return eos_id_; }
  bool adds_bos() const override { return adds_bos_; }
  bool adds_eos() const override { return adds_eos_; }
  int64_t model_max_length() const override { return model_max_length_; }
  std::string_view IdToPiece(int32_t id) const override;
  std::string_view TokenBytes(int32_t id, bool at_sequence_start = false) const override;
  bool EndsSequenceStart(int32_t id) const override { return !TokenBytes(id).empty(); }

  // The post-processor's special tokens around a single sequence.
  const std::vector<int32_t>& prefix_ids() const;
  const std::vector<int32_t>& suffix_ids() const;

 private:
  HfTokenizer();

  std::unique_ptr<hf::Pipeline> pipeline_;
  std::vector<std::string> pieces_;       // by id: the model's pieces and the added tokens
  std::vector<std::string> token_bytes_;  // by id, mid-sequence ("" for special tokens)
  std::vector<uint8_t> start_strip_;      // by id: bytes dropped at a sequence start
  int bos_id_ = -1;
  int eos_id_ = -1;
  bool adds_bos_ = false;
  bool adds_eos_ = false;
  int64_t model_max_length_ = 0;
};

}  // namespace slotserve::engine
