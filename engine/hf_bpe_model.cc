#include "engine/hf_bpe_model.h"

#include <queue>
#include <utility>

#include "absl/strings/str_format.h"

namespace slotserve::engine::hf {

absl::StatusOr<BpeModel> BpeModel::FromJson(const Json& model, std::string_view path) {
  absl::StatusOr<std::string> type = TypeOf(model, path);
  if (!type.ok()) return type.status();
  if (*type != "BPE") return UnsupportedType(path, *type);
  BpeModel bpe;
  if (!IsAbsent(model, "dropout")) {
    return JsonError(JsonPath(path, "dropout"), "is not supported (must be null)");
  }
  for (std::string_view key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (IsAbsent(model, key)) continue;
    absl::StatusOr<std::string> affix = StringField(model, path, key);
    if (!affix.ok()) return affix.status();
    if (!affix->empty()) {
      return JsonError(JsonPath(path, key),
                       Cat("\"", *affix, "\" is not supported (must be null or \"\")"));
    }
  }
  for (auto [key, flag] :
       {std::pair{"fuse_unk", &bpe.fuse_unk_}, std::pair{"byte_fallback", &bpe.byte_fallback_},
        std::pair{"ignore_merges", &bpe.ignore_merges_}}) {
    absl::StatusOr<bool> value = BoolField(model, path, key, false);
    if (!value.ok()) return value.status();
    *flag = *value;
  }

  const std::string vocab_path = JsonPath(path, "vocab");
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object()) {
    return JsonError(vocab_path, "must be an object of piece: id");
  }
  bpe.vocab_.reserve(vocab->size());
  for (const auto& [piece, id] : vocab->items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (1 << 24)) {
      return JsonError(JsonPath(vocab_path, piece), "must be an id in [0, 16777216]");
    }
    const auto value = static_cast<int32_t>(id.get<int64_t>());
    bpe.vocab_[piece] = value;
    if (static_cast<size_t>(value) >= bpe.pieces_.size()) bpe.pieces_.resize(value + 1);
    bpe.pieces_[value] = piece;
  }

  if (!IsAbsent(model, "unk_token")) {
    absl::StatusOr<std::string> unk = StringField(model, path, "unk_token");
    if (!unk.ok()) return unk.status();
    bpe.unk_id_ = bpe.PieceId(*unk);
    if (bpe.unk_id_ < 0) {
      return JsonError(JsonPath(path, "unk_token"), Cat("\"", *unk, "\" is not in the vocabulary"));
    }
  }
  bpe.byte_piece_.fill(-1);
  if (bpe.byte_fallback_) {
    for (int b = 0; b < 256; ++b) {
      bpe.byte_piece_[b] = bpe.PieceId(absl::StrFormat("<0x%02X>", b));
      if (bpe.byte_piece_[b] >= 0) bpe.byte_of_piece_[bpe.byte_piece_[b]] = b;
    }
  }

  absl::StatusOr<const Json*> merges = ArrayField(model, path, "merges");
  if (!merges.ok()) return merges.status();
  const std::string merges_path = JsonPath(path, "merges");
  bpe.merges_.reserve((*merges)->size());
  for (size_t rank = 0; rank < (*merges)->size(); ++rank) {
    const Json& merge = (**merges)[rank];
    std::string left;
    std::string right;
    if (merge.is_string()) {
      const std::string& text = merge.get_ref<const std::string&>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
        return JsonError(JsonPath(merges_path, rank),
                         Cat("\"", text, "\" must be two pieces separated by a space"));
      }
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      return JsonError(JsonPath(merges_path, rank), "must be \"a b\" or [\"a\", \"b\"]");
    }
    const int32_t left_id = bpe.PieceId(left);
    const int32_t right_id = bpe.PieceId(right);
    const int32_t merged_id = bpe.PieceId(Cat(left, right));
    if (left_id < 0 || right_id < 0 || merged_id < 0) {
      return JsonError(JsonPath(merges_path, rank),
                       Cat("merges \"", left, "\" and \"", right,
                           "\", but a part or the result is not in the vocabulary"));
    }
    // The first (best-ranked) occurrence of a pair wins, as in `tokenizers`.
    bpe.merges_.try_emplace(PairKey(left_id, right_id),
                            Merge{static_cast<int32_t>(rank), merged_id});
  }
  return bpe;
}

int32_t BpeModel::PieceId(std::string_view piece) const {
  const auto it = vocab_.find(absl::string_view(piece.data(), piece.size()));
  return it == vocab_.end() ? -1 : it->second;
}

int BpeModel::ByteOfPiece(int32_t id) const {
  const auto it = byte_of_piece_.find(id);
  return it == byte_of_piece_.end() ? -1 : it->second;
}

void BpeModel::EncodeWord(std::string_view word, std::vector<int32_t>* ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (const int32_t whole = PieceId(word); whole >= 0) {
      ids->push_back(whole);
      return;
    }
  }
  // The word's characters as symbols, then merges applied best rank first (leftmost among
  // equals), over a linked list of symbols as `tokenizers` does.
  struct Symbol {
    int32_t id;
    int32_t previous;
    int32_t next;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto push = [&](int32_t id) {
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, index + 1});
  };
  for (size_t i = 0; i < word.size();) {
    const auto lead = static_cast<unsigned char>(word[i]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    const std::string_view character = word.substr(i, length);
    i += length;
    if (const int32_t id = PieceId(character); id >= 0) {
      push(id);
      continue;
    }
    if (byte_fallback_) {
      bool all_bytes = true;
      for (char c : character) all_bytes = all_bytes && byte_piece_[static_cast<uint8_t>(c)] >= 0;
      if (all_bytes) {
        for (char c : character) push(byte_piece_[static_cast<uint8_t>(c)]);
        continue;
      }
    }
    if (unk_id_ < 0) continue;  // as `tokenizers`: no unknown token, the character is dropped
    if (fuse_unk_ && !symbols.empty() && symbols.back().id == unk_id_) continue;
    push(unk_id_);
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  struct Candidate {
    int32_t rank;
    int32_t left;  // symbol index
    int32_t left_id;
    int32_t right_id;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    const auto it = merges_.find(PairKey(symbols[left].id, symbols[right].id));
    if (it != merges_.end()) {
      queue.push({it->second.rank, left, symbols[left].id, symbols[right].id});
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate best = queue.top();
    queue.pop();
    Symbol& left = symbols[best.left];
    if (left.id != best.left_id || left.next < 0 || symbols[left.next].id != best.right_id) {
      continue;  // stale: one side has merged since
    }
    const int32_t right_index = left.next;
    const Symbol& right = symbols[right_index];
    left.id = merges_.find(PairKey(best.left_id, best.right_id))->second.merged_id;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].previous = best.left;
    symbols[right_index].id = -1;  // removed
    consider(left.previous);
    consider(best.left);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) ids->push_back(symbols[i].id);
}

}  // namespace slotserve::engine::hf
