// The entries of the fla mixer registry (models/fla_mixer.h), one per family, each defined in
// its own models/fla_<family>_mixer.cc. FlaMixerFamilies() lists them.
#pragma once

#include "models/fla_mixer.h"

namespace slotserve::models {

// fla's ABC (model_type "abc"): RoPE, clamped slot logits, the gated per-head output norm.
const FlaMixerFamily& FlaAbcMixer();
// fla's GSA (model_type "gsa"): feature maps, forget gates, grouped kv heads, the whole-width
// output norm.
const FlaMixerFamily& FlaGsaMixer();

}  // namespace slotserve::models
