#include "engine/tokenizer.h"

#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/sentencepiece_model.h"

namespace slotserve::engine {
namespace {

// What SentencePiece's decoder writes for the unknown piece.
constexpr char kUnknownSurface[] = " \xE2\x81\x87 ";
constexpr char kSpaceSymbol[] = "\xE2\x96\x81";  // U+2581 "▁"

// "<0xE2>" -> 0xE2; -1 when the piece is not of that form.
int ParseBytePiece(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece.back() != '>') return -1;
  int value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    value *= 16;
    if (c >= '0' && c <= '9') {
      value += c - '0';
    } else if (c >= 'A' && c <= 'F') {
      value += c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      value += c - 'a' + 10;
    } else {
      return -1;
    }
  }
  return value;
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::filesystem::path& file) {
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
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
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

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::LoadFromModelDir(
    const std::filesystem::path& model_dir) {
  const std::filesystem::path file = model_dir / kFileName;
  std::error_code error;
  if (!std::filesystem::exists(file, error)) {
    return absl::NotFoundError(
        absl::StrCat(model_dir.string(), " has no ", std::string(kFileName),
                     ": text prompts and stop sequences need it; token-id requests work without"));
  }
  return Load(file);
}

absl::StatusOr<std::vector<int32_t>> Tokenizer::Encode(std::string_view text) const {
  std::vector<int> ids;
  std::string error;
  if (!model_->Encode(std::string(text), &ids, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("text could not be tokenised: ", error));
  }
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string Tokenizer::Decode(std::span<const int32_t> ids) const {
  std::vector<int> known;
  known.reserve(ids.size());
  for (int32_t id : ids) {
    if (id >= 0 && id < piece_count()) known.push_back(id);
  }
  return model_->DecodeIds(known);
}

int Tokenizer::piece_count() const { return static_cast<int>(token_bytes_.size()); }
int Tokenizer::bos_id() const { return model_->bos_id(); }
int Tokenizer::eos_id() const { return model_->eos_id(); }

std::string_view Tokenizer::IdToPiece(int32_t id) const {
  if (id < 0 || id >= piece_count()) return {};
  return pieces_[id];
}

std::string_view Tokenizer::TokenBytes(int32_t id, bool at_sequence_start) const {
  if (id < 0 || id >= piece_count()) return {};
  std::string_view bytes = token_bytes_[id];
  if (at_sequence_start && drops_space_at_start_[id]) bytes.remove_prefix(1);
  return bytes;
}

}  // namespace slotserve::engine
