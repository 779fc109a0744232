"""Small encoder–decoder configurations of every cross kind and variant, shared by the tests."""

import torch

from slotserve_ref.init import randomize_
from slotserve_ref.seq2seq_config import Seq2seqConfig, merge_seq2seq_config_dict
from slotserve_ref.seq2seq_model import Seq2seqModel

# name -> cross_attention object; together they cover every option of docs/ARCHITECTURE.md
# "Encoder–decoder models".
CROSS_VARIANTS = {
    "softmax": {"kind": "softmax"},
    "abc": {"kind": "abc", "slots": 4},
    "rfa_concat": {"kind": "rfa", "features": 5, "feature_scale": 0.5, "eps": 0.05,
                   "norm_eps": 1e-3, "layout": "concat"},
    "rfa_interleave": {"kind": "rfa", "features": 5, "feature_scale": 0.5, "eps": 0.05,
                       "norm_eps": 1e-3, "layout": "interleave"},
    "luna": {"kind": "luna", "length": 3, "temperature": 1.0, "filter": None},
    "luna_conv": {"kind": "luna", "length": 3, "temperature": 0.5,
                  "filter": {"op": "conv", "kernel": 3, "stride": 2}},
    "luna_maxpool": {"kind": "luna", "length": 4, "temperature": 0.8,
                     "filter": {"op": "maxpool", "kernel": 2, "stride": 3}},
    "srformer": {"kind": "srformer", "segment": 3, "target_length": 6},
    # more segments than target positions: some segments are skipped
    "srformer_skip": {"kind": "srformer", "segment": 2, "target_length": 3},
}

SELF_VARIANTS = {
    "abc": {"kind": "abc", "slots": 4},
    "softmax": {"kind": "softmax", "max_context": 24},
    "rfa_gate": {"kind": "rfa", "features": 4, "gate": True, "feature_scale": 0.5, "eps": 0.05,
                 "norm_eps": 1e-3, "layout": "concat"},
    "luna_tiekv": {"kind": "luna", "length": 3, "activation": "elu1", "tie_kv": True},
}

BASE = {"vocab_size": 23, "d_model": 12, "n_heads": 3, "d_ffn": 20, "embed_scale": 3.0,
        "encoder": {"n_layers": 2, "max_source_tokens": 16}}


def small_seq2seq_config(cross: str, self_kind: str = "abc", **top_level) -> Seq2seqConfig:
    overrides = dict(BASE, cross_attention=CROSS_VARIANTS[cross],
                     decoder={"n_layers": 2, "attention": SELF_VARIANTS[self_kind]})
    overrides.update(top_level)
    return Seq2seqConfig.from_dict(merge_seq2seq_config_dict(overrides))


def small_seq2seq_model(cross: str, self_kind: str = "abc", seed: int = 0,
                        dtype=torch.float64, **top_level) -> Seq2seqModel:
    model = Seq2seqModel(small_seq2seq_config(cross, self_kind, **top_level))
    return randomize_(model, seed=seed).to(dtype).eval()


def random_ids(vocab: int, seed: int, shape) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))
