"""config.json of a model directory (docs/MODEL_FORMAT.md), mirrored as dataclasses.

Loading is as strict as the C++ loader: every key is required, unknown keys are an error and
each error says which key was wrong, what was expected and what was found, so a typo never
silently changes the model.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Dict, Union

FORMAT_NAME = "slotserve-lm"
FORMAT_VERSION = 1

ATTENTION_KINDS = ("abc", "rfa", "luna", "softmax")

# ABC's memory controls (docs/ABC_CONTROLS.md). "learned" with "exp" is the default: a config
# naming neither is today's ABC, and writing one leaves both out, so older directories and
# golden files stay byte-identical.
ABC_CONTROLS = ("learned", "window", "linformer", "compressive", "random")
ABC_ACTIVATIONS = ("exp", "relu", "sigmoid")
# The one extra key each control takes (window takes none), in config.json's spelling.
ABC_CONTROL_KEYS = {"learned": "activation", "linformer": "max_positions",
                    "compressive": "stride", "random": "seed"}
# Upper bounds, as the C++ loader's (models/abc_controls.cc): they keep linformer_proj and the
# compressive context far from integer overflow; seeds are non-negative int64s.
ABC_MAX_POSITIONS_LIMIT = 1 << 20
ABC_STRIDE_LIMIT = 1 << 14
ABC_SEED_LIMIT = 1 << 63  # exclusive


class ConfigError(ValueError):
    """config.json does not describe a valid model."""


@dataclasses.dataclass
class AttentionConfig:
    kind: str = "abc"
    # abc
    slots: int = 0
    control: str = "learned"
    abc_activation: str = "exp"  # config.json key "activation" (control "learned" only)
    max_positions: int = 0       # control "linformer"
    stride: int = 0              # control "compressive"
    seed: int = 0                # control "random"
    # rfa
    features: int = 0
    gate: bool = False
    feature_scale: float = 0.1
    eps: float = 1.0
    norm_eps: float = 1e-3
    layout: str = "concat"
    # luna
    length: int = 0
    activation: str = "softplus"
    tie_kv: bool = False
    # softmax
    max_context: int = 0

    # The keys config.json carries for each kind, in the order they are written.
    KEYS_BY_KIND = {
        "abc": ("slots",),
        "rfa": ("features", "gate", "feature_scale", "eps", "norm_eps", "layout"),
        "luna": ("length", "activation", "tie_kv"),
        "softmax": ("max_context",),
    }

    @property
    def default_abc_control(self) -> bool:
        """Today's ABC: the learned control with the exponential activation."""
        return self.control == "learned" and self.abc_activation == "exp"

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind}
        for key in self.KEYS_BY_KIND[self.kind]:
            out[key] = getattr(self, key)
        if self.kind == "abc" and not self.default_abc_control:
            out["control"] = self.control
            key = ABC_CONTROL_KEYS.get(self.control)
            if key is not None:
                out[key] = self.abc_activation if key == "activation" else getattr(self, key)
        return out


class ConfigFile:
    """config.json text and files for a config class that defines to_dict() and a
    `_parse(data, source)` static method (the decoder-only and the seq2seq configs)."""

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def save(self, path: Union[str, Path]) -> None:
        Path(path).write_text(self.to_json())

    @classmethod
    def from_dict(cls, data: Any, source: str = "config.json"):
        return cls._parse(data, source)

    @classmethod
    def from_json(cls, text: str, source: str = "config.json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{source}: not valid JSON: {e}") from None
        return cls._parse(data, source)

    @classmethod
    def load(cls, path: Union[str, Path]):
        path = Path(path)
        return cls.from_json(path.read_text(), str(path))


@dataclasses.dataclass
class ModelConfig(ConfigFile):
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    d_ffn: int
    attention: AttentionConfig
    activation: str = "gelu"
    norm_eps: float = 1e-5
    position: str = "sinusoidal"
    position_offset: int = 0
    tie_embeddings: bool = True
    embed_scale: float = 1.0
    bos_id: int = 1
    eos_id: int = 2

    # Top-level keys in the order config.json lists them (docs/MODEL_FORMAT.md).
    TOP_LEVEL_KEYS = (
        "format", "format_version", "vocab_size", "d_model", "n_layers", "n_heads", "d_ffn",
        "activation", "norm_eps", "position", "position_offset", "tie_embeddings",
        "embed_scale", "bos_id", "eos_id", "attention",
    )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION}
        for key in self.TOP_LEVEL_KEYS[2:]:
            value = getattr(self, key)
            out[key] = value.to_dict() if key == "attention" else value
        return out


# ---------------------------------------------------------------------------------------------
# Parsing and validation.


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


class _Reader:
    """Takes keys out of one JSON object and reports leftovers as unknown keys."""

    def __init__(self, data: Any, where: str, source: str):
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: {where or 'the top level'} must be an object, "
                              f"got {_type_name(data)}")
        self.data = dict(data)
        self.where = where
        self.source = source

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source}: {self._name(key)} {message}")

    def take(self, key: str) -> Any:
        if key not in self.data:
            raise ConfigError(f"{self.source}: missing required key {self._name(key)}")
        return self.data.pop(key)

    def take_int(self, key: str, minimum: int) -> int:
        value = self.take(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer, got {_type_name(value)}")
        if value < minimum:
            raise self.error(key, f"must be >= {minimum}, got {value}")
        return value

    def take_float(self, key: str, positive: bool) -> float:
        value = self.take(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"must be a number, got {_type_name(value)}")
        value = float(value)
        if not math.isfinite(value) or (positive and value <= 0):
            raise self.error(key, f"must be a {'positive ' if positive else ''}finite number, "
                                  f"got {value}")
        return value

    def take_bool(self, key: str) -> bool:
        value = self.take(key)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {_type_name(value)}")
        return value

    def take_choice(self, key: str, choices) -> str:
        value = self.take(key)
        if value not in choices:
            expected = " or ".join(f'"{c}"' for c in choices)
            raise self.error(key, f"must be {expected}, got {json.dumps(value)}")
        return value

    def finish(self) -> None:
        if self.data:
            unknown = ", ".join(sorted(self._name(k) for k in self.data))
            raise ConfigError(f"{self.source}: unknown key(s) {unknown}")


def _parse_attention(data: Any, source: str, where: str = "attention") -> AttentionConfig:
    """One docs/MODEL_FORMAT.md attention object; `where` is its dotted name in error messages (the
    seq2seq config keeps it under decoder.attention)."""
    r = _Reader(data, where, source)
    kind = r.take_choice("kind", ATTENTION_KINDS)
    att = AttentionConfig(kind=kind)
    if kind == "abc":
        att.slots = r.take_int("slots", 1)
        _parse_abc_control(r, att)
    elif kind == "rfa":
        att.features = r.take_int("features", 1)
        att.gate = r.take_bool("gate")
        att.feature_scale = r.take_float("feature_scale", positive=True)
        att.eps = r.take_float("eps", positive=True)
        att.norm_eps = r.take_float("norm_eps", positive=False)
        if att.norm_eps < 0:
            raise r.error("norm_eps", f"must be >= 0, got {att.norm_eps}")
        att.layout = r.take_choice("layout", ("concat", "interleave"))
    elif kind == "luna":
        att.length = r.take_int("length", 1)
        att.activation = r.take_choice("activation", ("softplus", "elu1"))
        att.tie_kv = r.take_bool("tie_kv")
    else:
        att.max_context = r.take_int("max_context", 1)
    r.finish()
    return att


def _parse_abc_control(r: "_Reader", att: AttentionConfig) -> None:
    """The optional control of an abc object and the one key that control takes (required
    with it, refused with every other control)."""
    if "control" in r.data:
        att.control = r.take_choice("control", ABC_CONTROLS)
    own_key = ABC_CONTROL_KEYS.get(att.control)
    for control, key in ABC_CONTROL_KEYS.items():
        if key in r.data and key != own_key:
            raise r.error(key, f'is only allowed with {r._name("control")} "{control}", got '
                               f'control "{att.control}"')
    if att.control == "learned":
        if "activation" in r.data:
            att.abc_activation = r.take_choice("activation", ABC_ACTIVATIONS)
    elif att.control == "linformer":
        att.max_positions = _take_bounded_int(r, "max_positions", 1, ABC_MAX_POSITIONS_LIMIT)
    elif att.control == "compressive":
        att.stride = _take_bounded_int(r, "stride", 1, ABC_STRIDE_LIMIT)
    elif att.control == "random":
        att.seed = _take_bounded_int(r, "seed", 0, ABC_SEED_LIMIT - 1)


def _take_bounded_int(r: "_Reader", key: str, minimum: int, maximum: int) -> int:
    value = r.take_int(key, minimum)
    if value > maximum:
        raise r.error(key, f"must be <= {maximum}, got {value}")
    return value


# The §2 top-level keys a seq2seq config shares (all but format, n_layers and attention).
SHARED_TOP_LEVEL_KEYS = (
    "vocab_size", "d_model", "n_heads", "d_ffn", "activation", "norm_eps", "position",
    "position_offset", "tie_embeddings", "embed_scale", "bos_id", "eos_id",
)


def _take_format(r: "_Reader", name: str, version: int) -> None:
    fmt = r.take("format")
    if fmt != name:
        raise r.error("format", f'must be "{name}", got {json.dumps(fmt)}')
    found = r.take("format_version")
    if found != version or isinstance(found, bool):
        raise r.error("format_version", f"must be {version}, got {json.dumps(found)}")


def _take_shared_top_level(r: "_Reader") -> Dict[str, Any]:
    """The SHARED_TOP_LEVEL_KEYS, each validated, as constructor arguments."""
    return dict(
        vocab_size=r.take_int("vocab_size", 1),
        d_model=r.take_int("d_model", 1),
        n_heads=r.take_int("n_heads", 1),
        d_ffn=r.take_int("d_ffn", 1),
        activation=r.take_choice("activation", ("gelu", "relu")),
        norm_eps=r.take_float("norm_eps", positive=True),
        position=r.take_choice("position", ("sinusoidal", "none")),
        position_offset=r.take_int("position_offset", 0),
        tie_embeddings=r.take_bool("tie_embeddings"),
        embed_scale=r.take_float("embed_scale", positive=True),
        bos_id=r.take_int("bos_id", 0),
        eos_id=r.take_int("eos_id", 0),
    )


def _check_shared_top_level(cfg: Any, source: str, id_keys=("bos_id", "eos_id")) -> None:
    """Constraints between the shared keys; `id_keys` are token ids that must be < vocab_size."""
    if cfg.d_model % cfg.n_heads != 0:
        raise ConfigError(f"{source}: d_model must be a multiple of n_heads, got d_model="
                          f"{cfg.d_model}, n_heads={cfg.n_heads}")
    if cfg.position == "sinusoidal" and (cfg.d_model % 2 != 0 or cfg.d_model < 4):
        raise ConfigError(f"{source}: sinusoidal positions need an even d_model >= 4, got "
                          f"{cfg.d_model}")
    for key in id_keys:
        if getattr(cfg, key) >= cfg.vocab_size:
            raise ConfigError(f"{source}: {key} must be < vocab_size ({cfg.vocab_size}), got "
                              f"{getattr(cfg, key)}")


def _parse_model_config(data: Any, source: str) -> ModelConfig:
    r = _Reader(data, "", source)
    _take_format(r, FORMAT_NAME, FORMAT_VERSION)
    shared = _take_shared_top_level(r)
    cfg = ModelConfig(n_layers=r.take_int("n_layers", 1),
                      attention=_parse_attention(r.take("attention"), source), **shared)
    r.finish()
    _check_shared_top_level(cfg, source)
    return cfg


ModelConfig._parse = staticmethod(_parse_model_config)


def default_config_dict(kind: str = "abc") -> Dict[str, Any]:
    """A complete config dict for a small model of `kind`; callers override keys they care about
    (see merge_config_dict)."""
    attention = {
        "abc": {"kind": "abc", "slots": 32},
        "rfa": {"kind": "rfa", "features": 32, "gate": True, "feature_scale": 0.1, "eps": 1.0,
                "norm_eps": 1e-3, "layout": "concat"},
        "luna": {"kind": "luna", "length": 32, "activation": "softplus", "tie_kv": False},
        "softmax": {"kind": "softmax", "max_context": 1024},
    }[kind]
    return {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
        "vocab_size": 8000, "d_model": 256, "n_layers": 4, "n_heads": 4, "d_ffn": 1024,
        "activation": "gelu", "norm_eps": 1e-5, "position": "sinusoidal", "position_offset": 0,
        "tie_embeddings": True, "embed_scale": 16.0, "bos_id": 1, "eos_id": 2,
        "attention": attention,
    }


def merge_config_dict(overrides: Dict[str, Any]) -> Dict[str, Any]:
    """Completes a partial config: the defaults of the attention kind it names (abc when it names
    none), overridden key by key. Unknown keys survive the merge, so parsing the result still
    rejects them."""
    if not isinstance(overrides, dict):
        raise ConfigError(f"config overrides must be an object, got {_type_name(overrides)}")
    attention = overrides.get("attention", {})
    if not isinstance(attention, dict):
        raise ConfigError(f"attention must be an object, got {_type_name(attention)}")
    kind = attention.get("kind", "abc")
    if kind not in ATTENTION_KINDS:
        raise ConfigError(f'attention.kind must be one of {", ".join(ATTENTION_KINDS)}, got '
                          f"{json.dumps(kind)}")
    merged = default_config_dict(kind)
    for key, value in overrides.items():
        if key != "attention":
            merged[key] = value
    merged["attention"].update(attention)
    return merged
