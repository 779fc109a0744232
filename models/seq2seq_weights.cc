#include "models/seq2seq_weights.h"

#include "absl/strings/str_cat.h"
#include "models/attention_kind.h"
#include "models/cross_attention_kind.h"

namespace slotserve::models {

std::string EncoderLayerPrefix(int layer) { return absl::StrCat("encoder.layers.", layer, "."); }
std::string DecoderLayerPrefix(int layer) { return absl::StrCat("decoder.layers.", layer, "."); }

std::vector<ExpectedTensor> CrossAttentionTensors(const Seq2seqConfig& config) {
  const int64_t E = config.decoder.d_model;
  std::vector<ExpectedTensor> tensors;
  for (const char* projection : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    AddLinearTensors(tensors, projection, E, E);
  }
  const CrossAttentionKindDescription& kind = DescribeCrossAttentionKind(config.cross.kind);
  if (kind.add_tensors != nullptr) kind.add_tensors(config, tensors);
  return tensors;
}

std::vector<ExpectedTensor> ExpectedSeq2seqTensors(const Seq2seqConfig& config) {
  const ModelConfig& decoder = config.decoder;
  const ModelConfig encoder = config.EncoderView();
  const int64_t E = decoder.d_model;
  std::vector<ExpectedTensor> tensors;
  tensors.push_back({"tok_embed.weight", {decoder.vocab_size, E}});
  for (int layer = 0; layer < encoder.n_layers; ++layer) {
    AddBlockTensors(tensors, encoder, EncoderLayerPrefix(layer));
  }
  AddNormTensors(tensors, "encoder.final_norm", E);
  const std::vector<ExpectedTensor> cross = CrossAttentionTensors(config);
  for (int layer = 0; layer < decoder.n_layers; ++layer) {
    const std::string prefix = DecoderLayerPrefix(layer);
    AddBlockTensors(tensors, decoder, prefix);
    AddNormTensors(tensors, prefix + "cross_norm", E);
    for (const ExpectedTensor& tensor : cross) {
      tensors.push_back({prefix + "cross." + tensor.name, tensor.shape});
    }
  }
  AddNormTensors(tensors, "decoder.final_norm", E);
  if (!decoder.tie_embeddings) tensors.push_back({"lm_head.weight", {decoder.vocab_size, E}});
  return tensors;
}

absl::Status CheckSeq2seqWeights(const Seq2seqConfig& config, const SafetensorsFile& file) {
  return CheckTensorTable(
      ExpectedSeq2seqTensors(config), file,
      absl::StrCat("an encoder-decoder model with ",
                   AttentionKindName(config.decoder.attention.kind), " self-attention and ",
                   CrossAttentionKindName(config.cross.kind), " cross attention"));
}

}  // namespace slotserve::models
