#include "engine/sentencepiece_tokenizer.h"

#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/byte_piece.h"
#include "engine/sentencepiece_model.h"

namespace slotserve::engine {
namespace {

// What SentencePiece's decoder writes for the unknown piece.
constexpr char kUnknownSurface[] = " \xE2\x81\x87 ";
constexpr char kSpaceSymbol[] = "\xE2\x96\x81";  // U+2581 "▁"

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer() = default;
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Load(
    const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    return absl::NotFoundError(absl::StrCat(file.string(), ": no such SentencePiece model file"));
  }
  std::string load_error;
  std::unique_ptr<SentencePieceModel> model = SentencePieceModel::Load(file.string(), &load_error);
  if (model == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.string(), ": not a loadable SentencePiece model (", load_error, ")"));
  }
  std::unique_ptr<SentencePieceTokenizer> tokenizer(new SentencePieceTokenizer());
  const int pieces = model->piece_count();
  tokenizer->pieces_.resize(pieces);
  tokenizer->token_bytes_.resize(pieces);
  for (int id = 0; id < pieces; ++id) {
    const std::string piece = model->IdToPiece(id);
    tokenizer->pieces_[id] = piece;
    std::string& bytes = tokenizer->token_bytes_[id];
    if (model->IsControl(id) || model->IsUnused(id)) continue;
    if (model->IsUnknown(id)) {
      bytes = kUnknownSurface;
    } else if (model->IsByte(id)) {
      const int value = ParseBytePiece(piece);
      if (value >= 0) bytes = std::string(1, static_cast<char>(value));
    } else {
      bytes = absl::StrReplaceAll(piece, {{kSpaceSymbol, " "}});
    }
  }
  // Whether the decoder drops the dummy-prefix space depends on normaliser settings inside
  // the model proto; ask the decoder itself with a piece that starts with "▁".
  bool strips_dummy_prefix = false;
  for (int id = 0; id < pieces; ++id) {
    const std::string& bytes = tokenizer->token_bytes_[id];
    if (model->IsUnknown(id) || model->IsByte(id) || bytes.size() < 2 || bytes[0] != ' ') {
      continue;
    }
    strips_dummy_prefix = model->DecodeIds({id}) != bytes;
    break;
  }
  tokenizer->drops_space_at_start_.resize(pieces, false);
  for (int id = 0; id < pieces; ++id) {
    tokenizer->drops_space_at_start_[id] =
        strips_dummy_prefix && !model->IsUnknown(id) && !model->IsByte(id) &&
        tokenizer->pieces_[id].compare(0, sizeof(kSpaceSymbol) - 1, kSpaceSymbol) == 0;
  }
  tokenizer->model_ = std::move(model);
  return tokenizer;
}

absl::StatusOr<std::vector<int32_t>> SentencePieceTokenizer::Encode(std::string_view text,
                                                                    bool /*parse_special*/) const {
  std::vector<int> ids;
  std::string error;
  if (!model_->Encode(std::string(text), &ids, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("text could not be tokenised: ", error));
  }
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::Decode(std::span<const int32_t> ids) const {
  std::vector<int> known;
  known.reserve(ids.size());
  for (int32_t id : ids) {
    if (id >= 0 && id < piece_count()) known.push_back(id);
  }
  return model_->DecodeIds(known);
}

int SentencePieceTokenizer::piece_count() const { return static_cast<int>(token_bytes_.size()); }
int SentencePieceTokenizer::bos_id() const { return model_->bos_id(); }
int SentencePieceTokenizer::eos_id() const { return model_->eos_id(); }

std::string_view SentencePieceTokenizer::IdToPiece(int32_t id) const {
  if (id < 0 || id >= piece_count()) return {};
  return pieces_[id];
}

std::string_view SentencePieceTokenizer::TokenBytes(int32_t id, bool at_sequence_start) const {
  if (id < 0 || id >= piece_count()) return {};
  std::string_view bytes = token_bytes_[id];
  if (at_sequence_start && drops_space_at_start_[id]) bytes.remove_prefix(1);
  return bytes;
}

}  // namespace slotserve::engine
