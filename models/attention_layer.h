// One layer's attention mixer (docs/MODEL_FORMAT.md "The attention kinds"): where in the fused
// input projection it finds its inputs, its per-layer constants, and the prefill / step kernels it
// runs. Which projections are fused, in what order, and which tensors a layer has is the kind's
// description (attention_kind.h). The block around the mixer (norms, the fused input GEMM, o_proj,
// the FFN) is the same for every kind and lives in TransformerModel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/recurrent_state.h"
#include "models/model_config.h"
#include "models/safetensors_file.h"

namespace slotserve::models {

// Where one call's activations are: `rows` rows of the fused input projection (the outputs of
// the kind's input projections side by side, row stride `stride`) and the [rows, E] attention
// output.
struct AttentionIo {
  int rows = 0;
  const float* projections = nullptr;
  int64_t stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
};

class AttentionLayer {
 public:
  virtual ~AttentionLayer() = default;

  // One request's `io.rows` consecutive tokens, queued on `stream` (null: the backend's default).
  virtual void Prefill(const AttentionIo& io, const kernels::PrefillTarget& target,
                       kernels::Stream stream) const = 0;
  // One token for each of `io.rows` requests, queued on `stream` (the decode step's graph
  // capture needs every launch on the capturing stream).
  virtual void Step(const AttentionIo& io, const kernels::StepTarget& target,
                    kernels::Stream stream) const = 0;
};

// An AttentionLayer that runs one kernel pair (prefill, step) taking `Params`. Subclasses say
// how to fill the kind-specific fields; the fields every attention kernel shares (rows, heads,
// head_dim, q/k/v at columns 0, E, 2E of the fused projection, in_stride, out) are filled here.
template <typename Params,
          void (*kLaunchPrefill)(kernels::Backend, const Params&, const kernels::PrefillTarget&,
                                 kernels::Stream),
          void (*kLaunchStep)(kernels::Backend, const Params&, const kernels::StepTarget&,
                              kernels::Stream)>
class KernelAttentionLayer : public AttentionLayer {
 public:
  KernelAttentionLayer(const ModelConfig& config, kernels::Backend backend)
      : config_(config), backend_(backend) {}

  void Prefill(const AttentionIo& io, const kernels::PrefillTarget& target,
               kernels::Stream stream) const final {
    kLaunchPrefill(backend_, MakeParams(io), target, stream);
  }
  void Step(const AttentionIo& io, const kernels::StepTarget& target,
            kernels::Stream stream) const final {
    kLaunchStep(backend_, MakeParams(io), target, stream);
  }

 protected:
  // Sets the kind's own fields of `params` (the shared ones are already set).
  virtual void FillKindParams(const AttentionIo& io, Params& params) const = 0;

  const ModelConfig& config() const { return config_; }

 private:
  Params MakeParams(const AttentionIo& io) const {
    const int width = config_.d_model;
    Params params;
    params.rows = io.rows;
    params.heads = config_.n_heads;
    params.head_dim = config_.head_dim();
    params.q = io.projections;
    params.k = io.projections + width;
    params.v = io.projections + 2 * width;
    params.in_stride = io.stride;
    params.out = io.out;
    params.out_stride = io.out_stride;
    FillKindParams(io, params);
    return params;
  }

  ModelConfig config_;
  kernels::Backend backend_;
};

// Builds one layer's mixer for config.attention.kind (its description's create_layer), loading
// its constants from `file` (already checked by CheckWeights) to the backend's device.
// `attention_prefix` names the layer's attention tensors: "layers.3.attn." in a decoder-only
// model, "decoder.layers.3.attn." in an encoder-decoder one.
absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix);

// One per kind, in <kind>_attention_layer.cc; the kinds' descriptions point at them.
absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAbcAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix);
// abc with a control other than the learned exp one (abc_control_attention_layer.cc).
absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAbcControlAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix);
absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateRfaAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix);
absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateLunaAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix);
absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateSoftmaxAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix);

}  // namespace slotserve::models
