// A SentencePiece processor behind a plain-C++ interface. It lives in its own translation
// unit because sentencepiece_processor.h declares absl::string_view as std::string_view,
// which clashes with Debian's Abseil (where absl::string_view is a class of its own): no file
// may include both, so this header and its .cc include no Abseil header.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace slotserve::engine {

class SentencePieceModel {
 public:
  // nullptr with *error set when the file cannot be loaded.
  static std::unique_ptr<SentencePieceModel> Load(const std::string& file, std::string* error);
  ~SentencePieceModel();

  // False with *error set when SentencePiece refuses the text.
  bool Encode(const std::string& text, std::vector<int>* ids, std::string* error) const;
  std::string DecodeIds(const std::vector<int>& ids) const;

  int piece_count() const;
  std::string IdToPiece(int id) const;
  bool IsControl(int id) const;
  bool IsUnused(int id) const;
  bool IsUnknown(int id) const;
  bool IsByte(int id) const;
  int bos_id() const;
  int eos_id() const;

 private:
  SentencePieceModel();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace slotserve::engine
