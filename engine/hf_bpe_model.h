// tokenizer.json's "model" of type BPE: the vocabulary, the ranked merges (as "a b" strings
// or ["a", "b"] pairs), the unknown token (fused when fuse_unk), byte fallback to <0xNN>
// pieces and ignore_merges, as the `tokenizers` library applies them to one word. Refused at
// load, by JSON path: other model types, dropout, a continuing_subword_prefix or
// end_of_word_suffix, a merge whose parts or result are not in the vocabulary.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/hf_json.h"

namespace slotserve::engine::hf {

class BpeModel {
 public:
  static absl::StatusOr<BpeModel> FromJson(const Json& model, std::string_view path);

  // Appends the ids of `word` (one pre-tokenizer word, valid UTF-8) to *ids.
  void EncodeWord(std::string_view word, std::vector<int32_t>* ids) const;

  // The id of a vocabulary piece; -1 when it is not one.
  int32_t PieceId(std::string_view piece) const;
  const std::vector<std::string>& pieces() const { return pieces_; }  // by id ("" for gaps)
  int32_t unk_id() const { return unk_id_; }
  bool byte_fallback() const { return byte_fallback_; }
  // The byte a <0xNN> piece stands for when byte_fallback is on; -1 for any other id.
  int ByteOfPiece(int32_t id) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  absl::flat_hash_map<std::string, int32_t> vocab_;
  std::vector<std::string> pieces_;
  absl::flat_hash_map<uint64_t, Merge> merges_;
  absl::flat_hash_map<int32_t, int> byte_of_piece_;
  std::array<int32_t, 256> byte_piece_{};  // the id of <0xNN>; -1 when missing
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
};

}  // namespace slotserve::engine::hf
