"""Small configurations of every attention kind and variant, shared by the tests."""

import torch

from slotserve_ref.config import ModelConfig, merge_config_dict
from slotserve_ref.init import randomize_
from slotserve_ref.model import LanguageModel

RFA = {"kind": "rfa", "features": 5, "feature_scale": 0.5, "eps": 0.05, "norm_eps": 1e-3}

# name -> config overrides; together they cover every option of docs/MODEL_FORMAT.md.
VARIANTS = {
    "abc": {"attention": {"kind": "abc", "slots": 5}, "position_offset": 2},
    "rfa_concat": {"attention": dict(RFA, gate=False, layout="concat"), "activation": "relu",
                   "tie_embeddings": False},
    "rfa_interleave": {"attention": dict(RFA, gate=False, layout="interleave")},
    "rfa_gate_concat": {"attention": dict(RFA, gate=True, layout="concat")},
    "rfa_gate_interleave": {"attention": dict(RFA, gate=True, layout="interleave")},
    "luna_softplus": {"attention": {"kind": "luna", "length": 3, "activation": "softplus",
                                    "tie_kv": False}},
    "luna_softplus_tiekv": {"attention": {"kind": "luna", "length": 3,
                                          "activation": "softplus", "tie_kv": True}},
    "luna_elu1": {"attention": {"kind": "luna", "length": 4, "activation": "elu1",
                                "tie_kv": False}, "position": "none"},
    "luna_elu1_tiekv": {"attention": {"kind": "luna", "length": 4, "activation": "elu1",
                                      "tie_kv": True}},
    "softmax": {"attention": {"kind": "softmax", "max_context": 32}},
}

BASE = {"vocab_size": 23, "d_model": 12, "n_heads": 3, "n_layers": 2, "d_ffn": 20,
        "embed_scale": 3.0}


def small_config(name: str, **top_level) -> ModelConfig:
    return ModelConfig.from_dict(merge_config_dict(dict(BASE, **VARIANTS[name], **top_level)))


def small_model(name: str, seed: int = 0, dtype=torch.float64) -> LanguageModel:
    return randomize_(LanguageModel(small_config(name)), seed=seed).to(dtype).eval()
