"""Small fla configs shared by the test_fla_* tests: together they switch on every option the
reference supports (RoPE, clamp, short conv, GQA, each feature map, tied, no norm weight)."""

from slotserve_ref.fla.config import FlaConfig
from slotserve_ref.fla.model import FlaModel
from slotserve_ref.fla.random_weights import random_tensors

BASE = {"hidden_size": 16, "num_hidden_layers": 2, "num_heads": 2, "num_slots": 3,
        "vocab_size": 29, "intermediate_size": 24, "conv_size": 3}

VARIANTS = {
    "abc_rope_clamp": {"model_type": "abc", "use_rope": True, "clamp_min": -1.0, "clamp_max": 0.5},
    "abc_conv_tied": {"model_type": "abc", "use_rope": False, "use_short_conv": True,
                      "tie_word_embeddings": True, "elementwise_affine": False,
                      "clamp_min": None, "clamp_max": None},
    "abc_conv_rope_wide_k": {"model_type": "abc", "use_short_conv": True, "expand_k": 1.0,
                             "expand_v": 0.5, "conv_size": 2},
    "gsa_swish": {"model_type": "gsa", "gate_logit_normalizer": 8},
    "gsa_relu_conv_gqa": {"model_type": "gsa", "feature_map": "relu", "num_heads": 4,
                          "num_kv_heads": 2, "use_short_conv": True, "expand_k": 0.5,
                          "gate_logit_normalizer": 4},
    "gsa_t2r_tied": {"model_type": "gsa", "feature_map": "t2r", "tie_word_embeddings": True,
                     "elementwise_affine": False, "num_kv_heads": 1},
}


def small_config(name: str, **changes) -> FlaConfig:
    return FlaConfig.from_dict({**BASE, **VARIANTS[name], **changes}, source=name)


def small_model(name: str, seed: int = 0, **changes) -> FlaModel:
    cfg = small_config(name, **changes)
    return FlaModel(cfg, random_tensors(cfg, seed))
