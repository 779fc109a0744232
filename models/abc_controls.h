// abc's memory controls (docs/ABC_CONTROLS.md) as config.json states them: attention.control
// ("learned" by default, "window", "linformer", "compressive", "random") with its own keys
// (activation, max_positions, stride, seed), and what each implies for the model: the
// projections and constants of a layer, and the longest context it can hold. The abc entry of
// the attention kind table (attention_kind.cc) points here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/json_fields.h"
#include "models/attention_kind.h"
#include "models/model_config.h"

namespace slotserve::models {

// The optional keys of an abc attention object besides "slots".
std::vector<std::string> AbcOptionKeys();
absl::Status ParseAbcOptions(base::JsonFields& fields, AttentionConfig& attention);

// True for the learned controls, which project the input into memory logits (slot_proj).
bool AbcControlIsLearned(MemoryControl control);

std::vector<InputProjection> AbcInputProjections(const ModelConfig& config);
// linformer: linformer_proj [H, M, max_positions]; the other controls have none.
std::vector<AttentionTensor> AbcConstants(const ModelConfig& config);

// The positions a request can reach: max_positions (linformer), slots x stride (compressive),
// 0 for the controls without a bound.
int64_t AbcContextLimit(const AttentionConfig& attention);

// The control's config.json name ("learned", "window", ...) and, for the learned ones, the
// activation's ("exp", "relu", "sigmoid"; empty otherwise): what GetModelInfo reports.
std::string AbcControlName(MemoryControl control);
std::string AbcControlActivationName(MemoryControl control);

// ", window control" for the start-up line; empty for the default learned exp control.
std::string DescribeAbcControl(const AttentionConfig& attention);

}  // namespace slotserve::models
