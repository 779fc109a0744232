"""config.json of a flash-linear-attention (fla) `abc` or `gsa` checkpoint, read strictly.

fla's config classes (fla/models/abc/configuration_abc.py ABCConfig, fla/models/gsa/
configuration_gsa.py GSAConfig) accept anything and ignore what they do not know. We do the
opposite, as for our own format (docs/MODEL_FORMAT.md): every key is either understood, known to
have no
effect on inference, or refused by name, so a checkpoint that needs something we do not compute
never loads silently wrong. docs/FLA_CHECKPOINTS.md lists every field with its default and
status.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

MODEL_TYPES = ("abc", "gsa")

# Written by transformers' PretrainedConfig.save_pretrained; none changes the computation.
HF_GENERIC_KEYS = frozenset({
    "architectures", "auto_map", "torch_dtype", "dtype", "transformers_version", "_name_or_path",
    "_attn_implementation_autoset", "use_cache", "initializer_range", "output_attentions",
    "output_hidden_states", "return_dict", "pad_token_id", "model_type",
})

# Fields whose value only selects a kernel or a training loss in fla: same inference math.
KERNEL_CHOICE_KEYS = frozenset({
    "fuse_norm", "fuse_swiglu", "fuse_cross_entropy", "fuse_linear_cross_entropy", "use_l2warp",
    "max_position_embeddings",
})

# Defaults of fla's config classes for the fields that matter (None = JSON null).
ABC_DEFAULTS: Dict[str, Any] = {
    "hidden_size": 2048, "gate_low_rank_dim": 16, "clamp_min": -32, "clamp_max": 32,
    "hidden_ratio": 4, "intermediate_size": None, "num_hidden_layers": 24, "num_heads": 4,
    "num_slots": 64, "use_short_conv": False, "conv_size": 4, "expand_k": 0.5, "expand_v": 1,
    "hidden_act": "swish", "elementwise_affine": True, "norm_eps": 1e-6, "use_rope": True,
    "attn": None, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False,
    "vocab_size": 32000, "attnres_block_size": None,
}
GSA_DEFAULTS: Dict[str, Any] = {
    "hidden_size": 2048, "gate_logit_normalizer": 8, "clamp_min": None, "clamp_max": None,
    "hidden_ratio": 4, "intermediate_size": None, "num_hidden_layers": 24, "num_heads": 4,
    "num_kv_heads": None, "num_slots": 64, "use_short_conv": False, "conv_size": 4,
    "expand_k": 1, "expand_v": 1, "feature_map": "swish", "use_output_gate": False,
    "use_norm": True, "hidden_act": "swish", "elementwise_affine": True, "norm_eps": 1e-6,
    "attn": None, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False,
    "vocab_size": 32000, "attnres_block_size": None,
    # Fields of older fla versions that public checkpoints may still carry.
    "norm_first": False, "gate_low_rank_dim": None, "use_rope": False,
    "share_conv_kernel": False,
}
GSA_FEATURE_MAPS = ("swish", "relu", "t2r")
ROPE_BASE = 10000.0            # fla/layers/abc.py builds RotaryEmbedding(head_k_dim) with its default
GSA_OUTPUT_NORM_EPS = 1e-5     # fla/layers/gsa.py calls rms_norm_linear without eps: its default
LEGACY_MLP_NORM_EPS = 1e-5     # the pre-2025-02 GSAMLP called rms_norm_linear without eps too


class FlaConfigError(ValueError):
    """config.json asks for something this reader does not support or is malformed."""


@dataclass(frozen=True)
class FlaConfig:
    """The fields of an fla checkpoint that decide the computation, with defaults resolved and
    the derived dimensions of fla/layers/{abc,gsa}.py spelled out."""
    model_type: str
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_heads: int
    num_kv_heads: int            # abc: == num_heads (fla's ABC has no grouped kv heads)
    num_slots: int
    key_dim: int                 # int(hidden_size * expand_k), all query heads together
    value_dim: int               # int(hidden_size * expand_v)
    intermediate_size: int
    norm_eps: float
    mlp_norm_eps: float          # == norm_eps except in the legacy norm_first layout
    use_short_conv: bool
    conv_size: int
    use_rope: bool               # abc only
    clamp_min: Optional[float]   # abc only: bounds of the slot logits
    clamp_max: Optional[float]
    gate_logit_normalizer: float  # gsa only
    feature_map: str             # gsa only: swish | relu | t2r
    elementwise_affine: bool     # whether the attention's output norm has a weight
    tie_word_embeddings: bool
    norm_first: bool             # gsa legacy layout: the norms live inside attn and mlp
    bos_token_id: Optional[int]
    eos_token_id: Optional[int]

    @property
    def head_k_dim(self) -> int:
        return self.key_dim // self.num_heads

    @property
    def head_v_dim(self) -> int:
        return self.value_dim // self.num_heads

    @property
    def num_kv_groups(self) -> int:
        return self.num_heads // self.num_kv_heads

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], source: str = "config.json") -> "FlaConfig":
        return _parse(dict(raw), source)

    @classmethod
    def load(cls, path: Union[str, Path]) -> "FlaConfig":
        path = Path(path)
        try:
            raw = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise FlaConfigError(f"{path}: not valid JSON: {e}") from None
        if not isinstance(raw, dict):
            raise FlaConfigError(f"{path}: must hold a JSON object")
        return _parse(raw, str(path))


def _parse(raw: Dict[str, Any], source: str) -> FlaConfig:
    model_type = raw.get("model_type")
    if model_type not in MODEL_TYPES:
        raise FlaConfigError(f"{source}: model_type must be one of {', '.join(MODEL_TYPES)} "
                             f"(flash-linear-attention's ABC and GSA models), got {model_type!r}")
    defaults = ABC_DEFAULTS if model_type == "abc" else GSA_DEFAULTS
    # fla's constructors take the misspelled `exapnd_k`/`exapnd_v` but store and save
    # `expand_k`/`expand_v`; transformers then sets the saved spelling over the parameter.
    for field in ("k", "v"):
        typo, right = f"exapnd_{field}", f"expand_{field}"
        if typo in raw:
            value = raw.pop(typo)
            raw.setdefault(right, value)
    unknown = sorted(set(raw) - set(defaults) - HF_GENERIC_KEYS - KERNEL_CHOICE_KEYS)
    if unknown:
        raise FlaConfigError(f"{source}: unsupported field(s) {', '.join(unknown)} for "
                             f"model_type {model_type!r} (not fields of fla's "
                             f"{model_type.upper()}Config this reader knows)")
    value = dict(defaults, **{k: raw[k] for k in raw if k in defaults})
    return _resolve(model_type, value, source)


def _positive_int(value: Dict[str, Any], key: str, source: str) -> int:
    v = value[key]
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise FlaConfigError(f"{source}: {key} must be a positive integer, got {v!r}")
    return v


def _number(value: Dict[str, Any], key: str, source: str, allow_null=False) -> Optional[float]:
    v = value[key]
    if v is None and allow_null:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise FlaConfigError(f"{source}: {key} must be a number{' or null' if allow_null else ''}, "
                             f"got {v!r}")
    return float(v)


def _flag(value: Dict[str, Any], key: str, source: str) -> bool:
    v = value[key]
    if not isinstance(v, bool):
        raise FlaConfigError(f"{source}: {key} must be true or false, got {v!r}")
    return v


def _refuse_unless(condition: bool, source: str, message: str) -> None:
    if not condition:
        raise FlaConfigError(f"{source}: {message}")


def _resolve(model_type: str, v: Dict[str, Any], source: str) -> FlaConfig:
    is_gsa = model_type == "gsa"
    hidden = _positive_int(v, "hidden_size", source)
    heads = _positive_int(v, "num_heads", source)
    _refuse_unless(v["attn"] is None, source,
                   "attn (hybrid softmax-attention layers) is not supported, expected null")
    _refuse_unless(v["attnres_block_size"] is None, source,
                   f"attnres_block_size (attention residuals) is not supported, expected null, "
                   f"got {v['attnres_block_size']!r}")
    _refuse_unless(v["hidden_act"] == "swish", source,
                   f"hidden_act {v['hidden_act']!r} is not supported, expected \"swish\" "
                   f"(the SwiGLU MLP)")
    kv_heads = heads
    if is_gsa and v["num_kv_heads"] is not None:
        kv_heads = _positive_int(v, "num_kv_heads", source)
        _refuse_unless(heads % kv_heads == 0, source,
                       f"num_kv_heads {kv_heads} must divide num_heads {heads}")
    expand_k = _number(v, "expand_k", source)
    expand_v = _number(v, "expand_v", source)
    key_dim, value_dim = int(hidden * expand_k), int(hidden * expand_v)
    _refuse_unless(key_dim > 0 and key_dim % heads == 0 and value_dim > 0 and
                   value_dim % heads == 0, source,
                   f"hidden_size * expand_k = {key_dim} and hidden_size * expand_v = {value_dim} "
                   f"must be positive multiples of num_heads {heads}")
    slots = v["num_slots"]
    slots = key_dim // heads if slots is None else _positive_int(v, "num_slots", source)
    intermediate = v["intermediate_size"]
    if intermediate is None:
        ratio = 4 if v["hidden_ratio"] is None else _number(v, "hidden_ratio", source)
        # fla/modules/mlp.py GatedMLP: 2/3 of hidden * ratio, rounded up to a multiple of 256.
        intermediate = int(hidden * ratio * 2 / 3)
        intermediate = 256 * ((intermediate + 256 - 1) // 256)
    else:
        intermediate = _positive_int(v, "intermediate_size", source)
    affine = v["elementwise_affine"]
    _refuse_unless(affine is None or isinstance(affine, bool), source,
                   f"elementwise_affine must be true, false or null, got {affine!r}")
    affine = bool(affine)  # fla tests it with `if elementwise_affine:`, so null means false
    norm_first = False
    feature_map = "swish"
    normalizer = 1.0
    if is_gsa:
        feature_map = v["feature_map"]
        _refuse_unless(feature_map in GSA_FEATURE_MAPS, source,
                       f"feature_map {feature_map!r} is not supported, expected one of "
                       f"{', '.join(GSA_FEATURE_MAPS)}")
        normalizer = _number(v, "gate_logit_normalizer", source)
        _refuse_unless(normalizer != 0, source, "gate_logit_normalizer must not be 0")
        norm_first = _flag(v, "norm_first", source)
        _refuse_unless(v["use_rope"] is False, source,
                       "use_rope true is not supported for gsa (fla's GSA layer has no rotary)")
        _refuse_unless(not (v["share_conv_kernel"] and v["use_short_conv"]), source,
                       "share_conv_kernel true with use_short_conv true (a layout of fla before "
                       "July 2024) is not supported")
        # fla/layers/gsa.py normalises the value_dim-wide output with a hidden_size-wide weight.
        _refuse_unless(not affine or value_dim == hidden, source,
                       f"elementwise_affine with hidden_size * expand_v = {value_dim} != "
                       f"hidden_size {hidden}: fla's output norm weight would not fit")
    use_rope = False if is_gsa else _flag(v, "use_rope", source)
    # fla/modules/rotary.py rotates ceil(d/2) pairs and asserts they fit in d.
    _refuse_unless(not use_rope or (key_dim // heads) % 2 == 0, source,
                   f"use_rope needs an even head key dimension, got {key_dim // heads}")
    clamp_min = _number(v, "clamp_min", source, allow_null=True) if not is_gsa else None
    clamp_max = _number(v, "clamp_max", source, allow_null=True) if not is_gsa else None
    norm_eps = _number(v, "norm_eps", source)
    return FlaConfig(
        model_type=model_type,
        vocab_size=_positive_int(v, "vocab_size", source),
        hidden_size=hidden,
        num_hidden_layers=_positive_int(v, "num_hidden_layers", source),
        num_heads=heads,
        num_kv_heads=kv_heads,
        num_slots=slots,
        key_dim=key_dim,
        value_dim=value_dim,
        intermediate_size=intermediate,
        norm_eps=norm_eps,
        mlp_norm_eps=LEGACY_MLP_NORM_EPS if norm_first else norm_eps,
        use_short_conv=_flag(v, "use_short_conv", source),
        conv_size=_positive_int(v, "conv_size", source),
        use_rope=use_rope,
        clamp_min=clamp_min,
        clamp_max=clamp_max,
        gate_logit_normalizer=normalizer,
        feature_map=feature_map,
        elementwise_affine=affine,
        tie_word_embeddings=_flag(v, "tie_word_embeddings", source),
        norm_first=norm_first,
        bos_token_id=v["bos_token_id"],
        eos_token_id=v["eos_token_id"],
    )
