#include "models/cross_attention_weights.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/device_weights.h"
#include "models/seq2seq_weights.h"

namespace slotserve::models {
namespace {

std::vector<float> Floats(const SafetensorsFile& file, const std::string& name) {
  return file.Find(name)->ToFloat32();
}

// P = luna_p pq_projᵀ + b ([L, E]), in double: a per-layer constant computed once at load.
std::vector<float> PackingQueries(const SafetensorsFile& file, const std::string& cross, int length,
                                  int width) {
  const std::vector<float> p = Floats(file, cross + "luna_p");
  const std::vector<float> w = Floats(file, cross + "pq_proj.weight");
  const std::vector<float> b = Floats(file, cross + "pq_proj.bias");
  std::vector<float> out(static_cast<size_t>(length) * width);
  for (int l = 0; l < length; ++l) {
    for (int o = 0; o < width; ++o) {
      double sum = b[o];
      for (int i = 0; i < width; ++i) {
        sum += static_cast<double>(w[static_cast<size_t>(o) * width + i]) *
               p[static_cast<size_t>(l) * width + i];
      }
      out[static_cast<size_t>(l) * width + o] = static_cast<float>(sum);
    }
  }
  return out;
}

// W~[h, f, i] = rfa_random[h, f, i] * rfa_sigma[h, i], as the self-attention kind folds it.
std::vector<float> RfaProjection(const SafetensorsFile& file, const std::string& cross, int heads,
                                 int features, int head_dim) {
  std::vector<float> random = Floats(file, cross + "rfa_random");
  const std::vector<float> sigma = Floats(file, cross + "rfa_sigma");
  for (int h = 0; h < heads; ++h) {
    for (int f = 0; f < features; ++f) {
      for (int i = 0; i < head_dim; ++i) {
        random[(static_cast<size_t>(h) * features + f) * head_dim + i] *=
            sigma[static_cast<size_t>(h) * head_dim + i];
      }
    }
  }
  return random;
}

}  // namespace

absl::StatusOr<CrossAttentionWeights> LoadCrossAttentionWeights(const Seq2seqConfig& config,
                                                                kernels::Backend backend,
                                                                const SafetensorsFile& file,
                                                                int layer) {
  const std::string prefix = DecoderLayerPrefix(layer);
  const std::string cross = prefix + "cross.";
  const CrossAttentionConfig& kind = config.cross;
  const ModelConfig& shared = config.decoder;
  CrossAttentionWeights weights;
  SLOTSERVE_ASSIGN_OR_RETURN(weights.cross_norm, LoadNorm(backend, file, prefix + "cross_norm"));
  SLOTSERVE_ASSIGN_OR_RETURN(weights.q_proj, LoadLinear(backend, file, cross + "q_proj"));
  SLOTSERVE_ASSIGN_OR_RETURN(weights.kv_proj,
                             LoadStackedLinear(backend, file, cross, {"k_proj", "v_proj"}));
  SLOTSERVE_ASSIGN_OR_RETURN(weights.o_proj, LoadLinear(backend, file, cross + "o_proj"));
  switch (kind.kind) {
    case CrossAttentionKind::kSoftmax:
      break;
    case CrossAttentionKind::kAbc: {
      SLOTSERVE_ASSIGN_OR_RETURN(weights.slot_proj, LoadLinear(backend, file, cross + "slot_proj"));
      break;
    }
    case CrossAttentionKind::kRfa: {
      SLOTSERVE_ASSIGN_OR_RETURN(
          weights.rfa_projection,
          UploadFloats(backend, RfaProjection(file, cross, shared.n_heads, kind.features,
                                              shared.head_dim())));
      break;
    }
    case CrossAttentionKind::kLuna: {
      SLOTSERVE_ASSIGN_OR_RETURN(
          weights.packing_queries,
          UploadFloats(backend, PackingQueries(file, cross, kind.length, shared.d_model)));
      if (kind.has_filter && !kind.filter.maxpool) {
        SLOTSERVE_ASSIGN_OR_RETURN(weights.filter_weight,
                                   UploadFloats(backend, Floats(file, cross + "filter.weight")));
        SLOTSERVE_ASSIGN_OR_RETURN(weights.filter_bias,
                                   UploadFloats(backend, Floats(file, cross + "filter.bias")));
      }
      break;
    }
    case CrossAttentionKind::kSrformer: {
      SLOTSERVE_ASSIGN_OR_RETURN(weights.raf_weight,
                                 UploadFloats(backend, Floats(file, cross + "raf_proj.weight")));
      SLOTSERVE_ASSIGN_OR_RETURN(weights.raf_bias,
                                 UploadFloats(backend, Floats(file, cross + "raf_proj.bias")));
      weights.raf_leak = Floats(file, cross + "raf_leak")[0];
      weights.raf_threshold = Floats(file, cross + "raf_thre")[0];
      break;
    }
  }
  return weights;
}

}  // namespace slotserve::models
