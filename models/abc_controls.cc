#include "models/abc_controls.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::models {
namespace {

// Bounds that keep linformer_proj and the compressive context far from integer overflow.
constexpr int64_t kMaxLinformerPositions = 1 << 20;
constexpr int64_t kMaxStride = 1 << 14;

struct ControlName {
  const char* name;
  MemoryControl control;  // for "learned", the exp activation; "activation" picks the others
};

constexpr ControlName kControls[] = {{"learned", MemoryControl::kLearnedExp},
                                     {"window", MemoryControl::kWindow},
                                     {"linformer", MemoryControl::kLinformer},
                                     {"compressive", MemoryControl::kCompressive},
                                     {"random", MemoryControl::kRandom}};

// The key each non-default control requires, and which no other control takes.
struct ControlKey {
  const char* key;
  MemoryControl control;
  const char* control_name;
};

constexpr ControlKey kControlKeys[] = {{"max_positions", MemoryControl::kLinformer, "linformer"},
                                       {"stride", MemoryControl::kCompressive, "compressive"},
                                       {"seed", MemoryControl::kRandom, "random"}};

}  // namespace

std::vector<std::string> AbcOptionKeys() {
  return {"control", "activation", "max_positions", "stride", "seed"};
}

bool AbcControlIsLearned(MemoryControl control) {
  return control == MemoryControl::kLearnedExp || control == MemoryControl::kLearnedRelu ||
         control == MemoryControl::kLearnedSigmoid;
}

absl::Status ParseAbcOptions(base::JsonFields& fields, AttentionConfig& attention) {
  attention.control = MemoryControl::kLearnedExp;
  std::string control_name = "learned";
  if (fields.Has("control")) {
    std::vector<std::string> names;
    for (const ControlName& control : kControls) names.push_back(control.name);
    SLOTSERVE_ASSIGN_OR_RETURN(const int index, fields.Choice("control", names));
    attention.control = kControls[index].control;
    control_name = kControls[index].name;
  }
  if (fields.Has("activation")) {
    if (attention.control != MemoryControl::kLearnedExp) {
      return fields.Error("activation", absl::StrCat("is only for control \"learned\", not \"",
                                                     control_name, "\""));
    }
    SLOTSERVE_ASSIGN_OR_RETURN(const int activation,
                               fields.Choice("activation", {"exp", "relu", "sigmoid"}));
    constexpr MemoryControl kActivations[] = {
        MemoryControl::kLearnedExp, MemoryControl::kLearnedRelu, MemoryControl::kLearnedSigmoid};
    attention.control = kActivations[activation];
  }
  for (const ControlKey& key : kControlKeys) {
    if (attention.control != key.control) {
      if (fields.Has(key.key)) {
        return fields.Error(key.key, absl::StrCat("is only for control \"", key.control_name,
                                                  "\", not \"", control_name, "\""));
      }
      continue;
    }
    switch (key.control) {
      case MemoryControl::kLinformer: {
        SLOTSERVE_ASSIGN_OR_RETURN(attention.max_positions,
                                   fields.Integer(key.key, 1, kMaxLinformerPositions));
        break;
      }
      case MemoryControl::kCompressive: {
        SLOTSERVE_ASSIGN_OR_RETURN(attention.stride, fields.Integer(key.key, 1, kMaxStride));
        break;
      }
      default: {
        SLOTSERVE_ASSIGN_OR_RETURN(const int64_t seed,
                                   fields.Integer(key.key, 0, std::numeric_limits<int64_t>::max()));
        attention.seed = static_cast<uint64_t>(seed);
        break;
      }
    }
  }
  return absl::OkStatus();
}

std::string AbcControlName(MemoryControl control) {
  if (AbcControlIsLearned(control)) return "learned";
  for (const ControlName& name : kControls) {
    if (name.control == control) return name.name;
  }
  return "";
}

std::string AbcControlActivationName(MemoryControl control) {
  switch (control) {
    case MemoryControl::kLearnedExp:
      return "exp";
    case MemoryControl::kLearnedRelu:
      return "relu";
    case MemoryControl::kLearnedSigmoid:
      return "sigmoid";
    default:
      return "";
  }
}

std::vector<InputProjection> AbcInputProjections(const ModelConfig& config) {
  const int64_t width = config.d_model;
  std::vector<InputProjection> projections = {
      {"q_proj", width}, {"k_proj", width}, {"v_proj", width}};
  if (AbcControlIsLearned(config.attention.control)) {
    projections.push_back(
        {"slot_proj", static_cast<int64_t>(config.n_heads) * config.attention.memory_rows});
  }
  return projections;
}

std::vector<AttentionTensor> AbcConstants(const ModelConfig& config) {
  if (config.attention.control != MemoryControl::kLinformer) return {};
  return {{"linformer_proj",
           {config.n_heads, config.attention.memory_rows, config.attention.max_positions}}};
}

int64_t AbcContextLimit(const AttentionConfig& attention) {
  switch (attention.control) {
    case MemoryControl::kLinformer:
      return attention.max_positions;
    case MemoryControl::kCompressive:
      return static_cast<int64_t>(attention.memory_rows) * attention.stride;
    default:
      return 0;
  }
}

std::string DescribeAbcControl(const AttentionConfig& attention) {
  switch (attention.control) {
    case MemoryControl::kLearnedExp:
      return "";
    case MemoryControl::kLearnedRelu:
      return ", learned relu control";
    case MemoryControl::kLearnedSigmoid:
      return ", learned sigmoid control";
    case MemoryControl::kWindow:
      return ", window control";
    case MemoryControl::kLinformer:
      return absl::StrCat(", linformer control over ", attention.max_positions, " positions");
    case MemoryControl::kCompressive:
      return absl::StrCat(", compressive control with stride ", attention.stride);
    case MemoryControl::kRandom:
      return absl::StrCat(", random control (seed ", attention.seed, ")");
  }
  return "";
}

}  // namespace slotserve::models
