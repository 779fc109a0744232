// SRformer cross attention as an entry of the cross-kind table: the source's K, V, KᵀV and
// ‖K‖_F are the memory (kernels/srformer_cross.h); each hypothesis keeps its own RAF membrane,
// output and segment entered in its slot, so a prefill's rows, which update that state in
// turn, run one at a time.
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "kernels/srformer_cross.h"
#include "models/cross_attention_kind.h"
#include "models/device_weights.h"
#include "models/transformer_weights.h"

namespace slotserve::models {
namespace {

absl::Status ParseSrformerCrossOptions(base::JsonFields& fields, const std::string& /*source*/,
                                       CrossAttentionConfig& cross) {
  SLOTSERVE_ASSIGN_OR_RETURN(cross.segment, fields.Integer("segment", 1, kMaxCrossMemory));
  SLOTSERVE_ASSIGN_OR_RETURN(cross.target_length,
                             fields.Integer("target_length", 1, kMaxSourceTokens));
  return absl::OkStatus();
}

void AddSrformerCrossTensors(const Seq2seqConfig& config, std::vector<ExpectedTensor>& tensors) {
  const int64_t head_dim = config.decoder.head_dim();
  AddLinearTensors(tensors, "raf_proj", head_dim, head_dim);
  tensors.push_back({"raf_leak", {1}});
  tensors.push_back({"raf_thre", {1}});
}

absl::Status LoadSrformerCrossWeights(const Seq2seqConfig& /*config*/, kernels::Backend backend,
                                      const SafetensorsFile& file, const std::string& cross_prefix,
                                      CrossAttentionWeights& weights) {
  SLOTSERVE_ASSIGN_OR_RETURN(
      weights.raf_weight,
      UploadFloats(backend, CrossTensorFloats(file, cross_prefix + "raf_proj.weight")));
  SLOTSERVE_ASSIGN_OR_RETURN(
      weights.raf_bias,
      UploadFloats(backend, CrossTensorFloats(file, cross_prefix + "raf_proj.bias")));
  weights.raf_leak = CrossTensorFloats(file, cross_prefix + "raf_leak")[0];
  weights.raf_threshold = CrossTensorFloats(file, cross_prefix + "raf_thre")[0];
  return absl::OkStatus();
}

kernels::SrformerLayout SrformerCrossLayout(const Seq2seqConfig& config) {
  return {config.decoder.n_heads, config.decoder.head_dim(), config.max_source_tokens};
}

int64_t SrformerCrossMemoryFloats(const Seq2seqConfig& config) {
  return SrformerCrossLayout(config).memory_floats();
}

int64_t SrformerHypothesisFloats(const Seq2seqConfig& config) {
  return SrformerCrossLayout(config).raf_floats();
}

void BuildSrformerCrossMemory(const CrossMemoryBuild& build) {
  const int width = build.config->decoder.d_model;
  kernels::SrformerBuildParams p;
  p.layout = SrformerCrossLayout(*build.config);
  p.positions = build.positions;
  p.keys = build.kv;
  p.values = build.kv + width;
  p.in_stride = 2 * width;
  p.layer = build.memory;
  kernels::LaunchSrformerBuild(build.backend, p, build.stream);
}

void ReadSrformerCrossMemory(const CrossMemoryRead& read) {
  const int width = read.config->decoder.d_model;
  kernels::SrformerStepParams step;
  step.layout = SrformerCrossLayout(*read.config);
  step.segment = read.config->cross.segment;
  step.target_length = read.config->cross.target_length;
  step.length_offset = read.length_offset;
  step.raf_state = read.hypothesis_state;
  step.raf_weight = read.weights->raf_weight.as<float>();
  step.raf_bias = read.weights->raf_bias.as<float>();
  step.leak = read.weights->raf_leak;
  step.threshold = read.weights->raf_threshold;
  step.q_stride = width;
  step.out_stride = width;
  const int launches = read.prefill ? read.rows : 1;
  step.rows = read.prefill ? 1 : read.rows;
  for (int r = 0; r < launches; ++r) {
    step.q = read.queries + static_cast<int64_t>(r) * width;
    step.out = read.out + static_cast<int64_t>(r) * width;
    kernels::StepTarget row_target = read.target;
    row_target.slots = read.target.slots + r;
    row_target.positions = read.target.positions + r;
    step.raf_slots = read.hypothesis_slots + r;
    kernels::LaunchSrformerStep(read.backend, step, row_target, read.stream);
  }
}

}  // namespace

CrossAttentionKindDescription SrformerCrossAttention() {
  return {.kind = CrossAttentionKind::kSrformer,
          .name = "srformer",
          .option_keys = {"segment", "target_length"},
          .parse_options = ParseSrformerCrossOptions,
          .add_tensors = AddSrformerCrossTensors,
          .load_weights = LoadSrformerCrossWeights,
          .memory_floats_per_layer = SrformerCrossMemoryFloats,
          .hypothesis_floats_per_layer = SrformerHypothesisFloats,
          .build_memory = BuildSrformerCrossMemory,
          .read_memory = ReadSrformerCrossMemory};
}

}  // namespace slotserve::models
