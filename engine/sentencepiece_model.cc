#include "engine/sentencepiece_model.h"

#include <sentencepiece_processor.h>

namespace slotserve::engine {

SentencePieceModel::SentencePieceModel()
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceModel::~SentencePieceModel() = default;

std::unique_ptr<SentencePieceModel> SentencePieceModel::Load(const std::string& file,
                                                             std::string* error) {
  std::unique_ptr<SentencePieceModel> model(new SentencePieceModel());
  const sentencepiece::util::Status status = model->processor_->Load(file);
  if (!status.ok()) {
    *error = status.ToString();
    return nullptr;
  }
  return model;
}

bool SentencePieceModel::Encode(const std::string& text, std::vector<int>* ids,
                                std::string* error) const {
  const sentencepiece::util::Status status = processor_->Encode(text, ids);
  if (!status.ok()) {
    *error = status.ToString();
    return false;
  }
  return true;
}

std::string SentencePieceModel::DecodeIds(const std::vector<int>& ids) const {
  return processor_->DecodeIds(ids);
}

int SentencePieceModel::piece_count() const { return processor_->GetPieceSize(); }
std::string SentencePieceModel::IdToPiece(int id) const { return processor_->IdToPiece(id); }
bool SentencePieceModel::IsControl(int id) const { return processor_->IsControl(id); }
bool SentencePieceModel::IsUnused(int id) const { return processor_->IsUnused(id); }
bool SentencePieceModel::IsUnknown(int id) const { return processor_->IsUnknown(id); }
bool SentencePieceModel::IsByte(int id) const { return processor_->IsByte(id); }
int SentencePieceModel::bos_id() const { return processor_->bos_id(); }
int SentencePieceModel::eos_id() const { return processor_->eos_id(); }

}  // namespace slotserve::engine
