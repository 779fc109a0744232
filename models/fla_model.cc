#include "models/fla_model.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/embedding.h"
#include "kernels/rms_norm.h"
#include "kernels/short_conv.h"
#include "kernels/swiglu.h"
#include "models/block_ops.h"
#include "models/finite_weights.h"
#include "models/fla_mixer.h"
#include "models/step_slots.h"

namespace slotserve::models {
namespace {

// What the engine and the server read from every model (vocabulary, widths, ids, the memory
// size), in our ModelConfig's terms. The attention kind is abc for both: the server reports
// fla's own model type through LanguageModel::fla().
ModelConfig DescribeAsModelConfig(const FlaConfig& fla) {
  ModelConfig config;
  config.vocab_size = fla.vocab_size;
  config.d_model = fla.hidden_size;
  config.n_layers = fla.num_layers;
  config.n_heads = fla.num_heads;
  config.d_ffn = fla.intermediate_size;
  config.gelu = false;
  config.norm_eps = fla.norm_eps;
  config.sinusoidal_positions = false;
  config.tie_embeddings = fla.tie_word_embeddings;
  config.bos_id = fla.bos_token_id;
  config.eos_id = fla.eos_token_id;
  config.attention.kind = AttentionKind::kAbc;
  config.attention.memory_rows = fla.num_slots;
  return config;
}

void RunRmsNorm(kernels::Backend backend, kernels::Stream stream, const float* x, float* y,
                int rows, int dim, const kernels::DeviceBuffer& weight, float eps) {
  kernels::RmsNormParams p;
  p.x = x;
  p.x_stride = dim;
  p.y = y;
  p.y_stride = dim;
  p.rows = rows;
  p.groups = 1;
  p.group_dim = dim;
  p.weight = weight.data() == nullptr ? nullptr : weight.as<float>();
  p.eps = eps;
  kernels::LaunchRmsNorm(backend, p, stream);
}

}  // namespace

FlaLayerStateLayout FlaStateLayout(const FlaConfig& c) {
  FlaLayerStateLayout layout;
  layout.mixer = 0;
  int64_t next = c.mixer->memory_floats(c);
  if (c.use_short_conv) {
    layout.q_conv = next;
    next += kernels::ShortConvStateFloats(c.key_dim, c.conv_size);
    layout.k_conv = next;
    next += kernels::ShortConvStateFloats(c.kv_key_dim(), c.conv_size);
    layout.v_conv = next;
    next += kernels::ShortConvStateFloats(c.kv_value_dim(), c.conv_size);
  }
  layout.floats = next;
  return layout;
}

absl::StatusOr<std::unique_ptr<FlaModel>> FlaModel::Load(const std::filesystem::path& dir,
                                                         kernels::Backend backend) {
  SLOTSERVE_ASSIGN_OR_RETURN(const FlaConfig fla, LoadFlaConfig(dir / "config.json"));
  SLOTSERVE_ASSIGN_OR_RETURN(const WeightShards shards, WeightShards::Open(dir));
  SLOTSERVE_RETURN_IF_ERROR(CheckFlaTensors(fla, shards));
  for (const auto& [name, tensor] : shards.tensors()) {
    SLOTSERVE_RETURN_IF_ERROR(CheckTensorIsFinite(shards.source(), *tensor));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(FlaWeights weights, LoadFlaWeights(fla, backend, shards));
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceStream stream, kernels::DeviceStream::Create(backend));
  kernels::Synchronize(backend);
  return std::unique_ptr<FlaModel>(new FlaModel(fla, DescribeAsModelConfig(fla), backend,
                                                std::move(weights), std::move(stream)));
}

FlaModel::FlaModel(const FlaConfig& fla, const ModelConfig& config, kernels::Backend backend,
                   FlaWeights weights, kernels::DeviceStream stream)
    : fla_(fla),
      config_(config),
      backend_(backend),
      weights_(std::move(weights)),
      columns_(FlaInputColumns(fla)),
      layout_(FlaStateLayout(fla)),
      stream_(std::move(stream)) {}

int64_t FlaModel::state_bytes_per_request() const {
  return layout_.floats * fla_.num_layers * static_cast<int64_t>(sizeof(float));
}

int32_t FlaModel::max_positions() const { return std::numeric_limits<int32_t>::max(); }

absl::StatusOr<std::unique_ptr<StateArena>> FlaModel::AllocateStates(int num_slots) const {
  if (num_slots <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("AllocateStates: num_slots must be > 0, got ", num_slots));
  }
  const int64_t floats_per_slot = layout_.floats * fla_.num_layers;
  const size_t bytes = static_cast<size_t>(num_slots) * floats_per_slot * sizeof(float);
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer buffer,
                             kernels::DeviceBuffer::Allocate(backend_, bytes));
  kernels::FillZero(backend_, buffer.data(), bytes);
  kernels::Synchronize(backend_);
  return std::make_unique<StateArena>(backend_, num_slots, floats_per_slot, std::move(buffer));
}

absl::Status FlaModel::CheckArena(const StateArena& states, const char* call) const {
  const int64_t expected = layout_.floats * fla_.num_layers;
  if (states.backend() != backend_ || states.floats_per_slot() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": the state arena was not allocated by this model (", states.floats_per_slot(),
        " floats per slot on ", kernels::BackendName(states.backend()), ", expected ", expected,
        " on ", kernels::BackendName(backend_), ")"));
  }
  return absl::OkStatus();
}

absl::Status FlaModel::Reserve(int rows, int logit_rows) {
  const auto grow = [&](kernels::DeviceBuffer& buffer, int64_t bytes) -> absl::Status {
    if (buffer.bytes() >= static_cast<size_t>(bytes)) return absl::OkStatus();
    SLOTSERVE_ASSIGN_OR_RETURN(
        buffer, kernels::DeviceBuffer::Allocate(backend_, static_cast<size_t>(bytes)));
    return absl::OkStatus();
  };
  if (rows > scratch_.rows) {
    const int64_t f = sizeof(float);
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.tokens, rows * int64_t{sizeof(int32_t)}));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.positions, rows * int64_t{sizeof(int32_t)}));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.slots, rows * int64_t{sizeof(int32_t)}));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.hidden, rows * f * fla_.hidden_size));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.normed, rows * f * fla_.hidden_size));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.projections, rows * f * columns_.width));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.attention, rows * f * fla_.value_dim));
    SLOTSERVE_RETURN_IF_ERROR(grow(scratch_.ffn, rows * f * 2 * fla_.intermediate_size));
    scratch_.rows = rows;
  }
  if (logit_rows > scratch_.logit_rows) {
    SLOTSERVE_RETURN_IF_ERROR(
        grow(scratch_.logits, logit_rows * int64_t{sizeof(float)} * fla_.vocab_size));
    scratch_.logit_rows = logit_rows;
  }
  return absl::OkStatus();
}

absl::Status FlaModel::Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                               LogitsWanted wanted, std::span<float> logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, "Prefill"));
  if (slot < 0 || slot >= states.num_slots()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Prefill: slot ", slot, " is outside the state arena [0, ", states.num_slots(), ")"));
  }
  if (tokens.empty()) return absl::InvalidArgumentError("Prefill: no tokens to feed");
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(tokens, fla_.vocab_size, "Prefill"));
  const int64_t vocab = fla_.vocab_size;
  const bool every_logit = wanted == LogitsWanted::kEveryToken;
  const int64_t expected = every_logit ? static_cast<int64_t>(tokens.size()) * vocab : vocab;
  if (static_cast<int64_t>(logits.size()) != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("Prefill: logits holds ", logits.size(), " floats, expected ", expected));
  }
  if (int64_t{states.position(slot)} + static_cast<int64_t>(tokens.size()) > max_positions()) {
    return absl::InvalidArgumentError(absl::StrCat("Prefill: slot ", slot, " is at position ",
                                                   states.position(slot), " and cannot take ",
                                                   tokens.size(), " more tokens"));
  }
  return ForEachPrefillPass(
      tokens.size(), kMaxRowsPerPass, every_logit, vocab, logits,
      [&](size_t first, size_t rows, bool every, bool last, std::span<float> pass_logits) {
        return PrefillPass(states, slot, tokens.subspan(first, rows), every, last, pass_logits);
      });
}

absl::Status FlaModel::PrefillPass(StateArena& states, int slot, std::span<const int32_t> tokens,
                                   bool every_logit, bool last_logit, std::span<float> logits) {
  const int rows = static_cast<int>(tokens.size());
  SLOTSERVE_RETURN_IF_ERROR(Reserve(rows, every_logit ? rows : 1));
  const int32_t start = states.position(slot);
  std::vector<int32_t> positions(rows);
  for (int i = 0; i < rows; ++i) positions[i] = start + i;
  kernels::CopyHostToDevice(backend_, scratch_.tokens.data(), tokens.data(), tokens.size_bytes());
  kernels::CopyHostToDevice(backend_, scratch_.positions.data(), positions.data(),
                            positions.size() * sizeof(int32_t));
  MixerCall call;
  call.prefill = true;
  call.prefill_target.state.pool = states.device_data();
  call.prefill_target.state.slot_stride = states.floats_per_slot();
  call.prefill_target.slot = slot;
  call.prefill_target.start_position = start;
  RunLayers(rows, call, /*stream=*/nullptr);
  if (every_logit || last_logit) {
    const int logit_rows = every_logit ? rows : 1;
    ComputeLogits(rows - logit_rows, logit_rows, /*stream=*/nullptr);
    kernels::CopyDeviceToHost(backend_, logits.data(), scratch_.logits.data(), logits.size_bytes());
  }
  kernels::Synchronize(backend_);
  states.set_position(slot, start + rows);
  return absl::OkStatus();
}

absl::Status FlaModel::Step(StateArena& states, std::span<const int32_t> slots,
                            std::span<const int32_t> tokens, std::span<float> logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, "Step"));
  if (slots.empty()) return absl::InvalidArgumentError("Step: no requests to step");
  if (tokens.size() != slots.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Step: ", tokens.size(), " tokens for ",
                                                   slots.size(), " slots, expected one each"));
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(tokens, fla_.vocab_size, "Step"));
  const int64_t vocab = fla_.vocab_size;
  if (static_cast<int64_t>(logits.size()) != static_cast<int64_t>(slots.size()) * vocab) {
    return absl::InvalidArgumentError(absl::StrCat("Step: logits holds ", logits.size(),
                                                   " floats, expected ", slots.size() * vocab));
  }
  SLOTSERVE_RETURN_IF_ERROR(slot_check_.Check(states, slots, max_positions(), "Step"));
  // Kept between steps, so a decode step allocates nothing here.
  step_positions_.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) step_positions_[i] = states.position(slots[i]);
  const int rows = static_cast<int>(slots.size());
  SLOTSERVE_RETURN_IF_ERROR(Reserve(rows, rows));
  const kernels::Stream stream = stream_.get();
  const size_t index_bytes = static_cast<size_t>(rows) * sizeof(int32_t);
  kernels::CopyHostToDevice(backend_, scratch_.tokens.data(), tokens.data(), index_bytes, stream);
  kernels::CopyHostToDevice(backend_, scratch_.slots.data(), slots.data(), index_bytes, stream);
  kernels::CopyHostToDevice(backend_, scratch_.positions.data(), step_positions_.data(),
                            index_bytes, stream);
  MixerCall call;
  call.step_target.state.pool = states.device_data();
  call.step_target.state.slot_stride = states.floats_per_slot();
  call.step_target.slots = scratch_.slots.as<int32_t>();
  call.step_target.positions = scratch_.positions.as<int32_t>();
  RunLayers(rows, call, stream);
  ComputeLogits(0, rows, stream);
  kernels::CopyDeviceToHost(backend_, logits.data(), scratch_.logits.data(), logits.size_bytes(),
                            stream);
  kernels::Synchronize(backend_, stream);
  for (size_t i = 0; i < slots.size(); ++i) states.set_position(slots[i], step_positions_[i] + 1);
  return absl::OkStatus();
}

void FlaModel::RunLayers(int rows, MixerCall call, kernels::Stream stream) {
  const int width = fla_.hidden_size;
  float* hidden = scratch_.hidden.as<float>();
  float* normed = scratch_.normed.as<float>();
  kernels::EmbeddingParams embed;
  embed.table = weights_.embeddings.buffer.data();
  embed.table_int8_packed = weights_.embeddings.int8_packed.as<uint8_t>();
  embed.table_dtype = weights_.embeddings.dtype;
  embed.table_scale =
      weights_.embeddings.scale.data() == nullptr ? nullptr : weights_.embeddings.scale.as<float>();
  embed.vocab = fla_.vocab_size;
  embed.dim = width;
  embed.tokens = scratch_.tokens.as<int32_t>();
  embed.rows = rows;
  embed.out = hidden;
  embed.out_stride = width;
  kernels::LaunchEmbedding(backend_, embed, stream);

  const int ffn = fla_.intermediate_size;
  float* ffn_buffer = scratch_.ffn.as<float>();
  for (int i = 0; i < fla_.num_layers; ++i) {
    const FlaLayerWeights& layer = weights_.layers[i];
    // h = h + attn(rms_norm(h))
    RunRmsNorm(backend_, stream, hidden, normed, rows, width, layer.attn_norm, fla_.norm_eps);
    RunMixer(layer, i, rows, call, stream);
    RunLinear(backend_, stream, layer.o_proj, /*bias=*/nullptr, scratch_.attention.as<float>(),
              fla_.value_dim, rows, hidden, width, /*accumulate=*/true);
    // h = h + down(silu(gate(u)) * up(u)), u = rms_norm(h)
    RunRmsNorm(backend_, stream, hidden, normed, rows, width, layer.mlp_norm, fla_.mlp_norm_eps);
    RunLinear(backend_, stream, layer.gate_up, /*bias=*/nullptr, normed, width, rows, ffn_buffer,
              2 * ffn, /*accumulate=*/false);
    kernels::SwiGluParams swiglu;
    swiglu.gate = ffn_buffer;
    swiglu.up = ffn_buffer + ffn;
    swiglu.in_stride = 2 * ffn;
    swiglu.out = ffn_buffer;  // over the gate half, read once per element
    swiglu.out_stride = 2 * ffn;
    swiglu.rows = rows;
    swiglu.cols = ffn;
    kernels::LaunchSwiGlu(backend_, swiglu, stream);
    RunLinear(backend_, stream, layer.down, /*bias=*/nullptr, ffn_buffer, 2 * ffn, rows, hidden,
              width, /*accumulate=*/true);
  }
}

void FlaModel::RunMixer(const FlaLayerWeights& layer, int layer_index, int rows, MixerCall call,
                        kernels::Stream stream) {
  const int64_t layer_offset = static_cast<int64_t>(layer_index) * layout_.floats;
  float* projections = scratch_.projections.as<float>();
  const int64_t stride = columns_.width;
  RunLinear(backend_, stream, layer.input_projection, /*bias=*/nullptr, scratch_.normed.as<float>(),
            fla_.hidden_size, rows, projections, stride,
            /*accumulate=*/false);
  const auto with_offset = [&](int64_t offset) {
    MixerCall at = call;
    at.prefill_target.state.layer_offset = layer_offset + offset;
    at.step_target.state.layer_offset = layer_offset + offset;
    return at;
  };
  if (fla_.use_short_conv) {
    const std::pair<int, const kernels::DeviceBuffer*> convs[] = {
        {columns_.q, &layer.q_conv}, {columns_.k, &layer.k_conv}, {columns_.v, &layer.v_conv}};
    const int channels[] = {fla_.key_dim, fla_.kv_key_dim(), fla_.kv_value_dim()};
    const int64_t offsets[] = {layout_.q_conv, layout_.k_conv, layout_.v_conv};
    for (int c = 0; c < 3; ++c) {
      kernels::ShortConvParams conv;
      conv.x = projections + convs[c].first;
      conv.stride = stride;
      conv.rows = rows;
      conv.channels = channels[c];
      conv.width = fla_.conv_size;
      conv.weight = convs[c].second->as<float>();
      const MixerCall at = with_offset(offsets[c]);
      if (call.prefill) {
        kernels::LaunchShortConvPrefill(backend_, conv, at.prefill_target, stream);
      } else {
        kernels::LaunchShortConvStep(backend_, conv, at.step_target, stream);
      }
    }
  }
  const MixerCall mixer = with_offset(layout_.mixer);
  FlaMixerRun run;
  run.backend = backend_;
  run.stream = stream;
  run.config = &fla_;
  run.layer = &layer;
  run.rows = rows;
  run.projections = projections;
  run.columns = &columns_;
  run.positions = scratch_.positions.as<int32_t>();
  run.attention = scratch_.attention.as<float>();
  run.prefill = mixer.prefill;
  run.prefill_target = mixer.prefill_target;
  run.step_target = mixer.step_target;
  fla_.mixer->run(run);
}

void FlaModel::ComputeLogits(int first_row, int rows, kernels::Stream stream) {
  const int width = fla_.hidden_size;
  const float* hidden = scratch_.hidden.as<float>() + static_cast<int64_t>(first_row) * width;
  RunRmsNorm(backend_, stream, hidden, scratch_.normed.as<float>(), rows, width,
             weights_.final_norm, fla_.norm_eps);
  RunLinear(backend_, stream, weights_.head(), /*bias=*/nullptr, scratch_.normed.as<float>(), width,
            rows, scratch_.logits.as<float>(), fla_.vocab_size, /*accumulate=*/false);
}

}  // namespace slotserve::models
