"""config.json of an encoder–decoder model directory (docs/ARCHITECTURE.md "Encoder–decoder models",
"format": "slotserve-seq2seq").

The shared top-level keys, their checks and the decoder's self-attention object are parsed by
the decoder-only config's own code (config.py), so both formats refuse the same mistakes with
the same messages; this module adds the encoder, decoder and cross_attention objects.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, Optional

from .config import (ATTENTION_KINDS, SHARED_TOP_LEVEL_KEYS, AttentionConfig, ConfigError,
                     ConfigFile, ModelConfig, _check_shared_top_level, _parse_attention,
                     _Reader, _take_format, _take_shared_top_level, default_config_dict)

FORMAT_NAME = "slotserve-seq2seq"
FORMAT_VERSION = 1

CROSS_KINDS = ("softmax", "abc", "rfa", "luna", "srformer")
FILTER_OPS = ("conv", "maxpool")


@dataclasses.dataclass
class FilterConfig:
    """ConvLuna's filter along the source axis (docs/ARCHITECTURE.md "Encoder–decoder models", cross
    kind luna)."""
    op: str = "conv"
    kernel: int = 1
    stride: int = 1

    def to_dict(self) -> Dict[str, Any]:
        return {"op": self.op, "kernel": self.kernel, "stride": self.stride}


@dataclasses.dataclass
class CrossAttentionConfig:
    kind: str = "softmax"
    # abc
    slots: int = 0
    # rfa (as the self-attention kind, without the gate)
    features: int = 0
    feature_scale: float = 0.1
    eps: float = 1.0
    norm_eps: float = 1e-3
    layout: str = "concat"
    # luna
    length: int = 0
    temperature: float = 1.0
    filter: Optional[FilterConfig] = None
    # srformer
    segment: int = 0
    target_length: int = 0

    KEYS_BY_KIND = {
        "softmax": (),
        "abc": ("slots",),
        "rfa": ("features", "feature_scale", "eps", "norm_eps", "layout"),
        "luna": ("length", "temperature", "filter"),
        "srformer": ("segment", "target_length"),
    }

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind}
        for key in self.KEYS_BY_KIND[self.kind]:
            value = getattr(self, key)
            out[key] = value.to_dict() if isinstance(value, FilterConfig) else value
        return out


@dataclasses.dataclass
class EncoderConfig:
    n_layers: int
    max_source_tokens: int

    def to_dict(self) -> Dict[str, Any]:
        return {"n_layers": self.n_layers, "max_source_tokens": self.max_source_tokens}


@dataclasses.dataclass
class DecoderConfig:
    n_layers: int
    attention: AttentionConfig

    def to_dict(self) -> Dict[str, Any]:
        return {"n_layers": self.n_layers, "attention": self.attention.to_dict()}


@dataclasses.dataclass
class Seq2seqConfig(ConfigFile):
    vocab_size: int
    d_model: int
    n_heads: int
    d_ffn: int
    encoder: EncoderConfig
    decoder: DecoderConfig
    cross_attention: CrossAttentionConfig
    decoder_start_id: int = 1
    activation: str = "gelu"
    norm_eps: float = 1e-5
    position: str = "sinusoidal"
    position_offset: int = 0
    tie_embeddings: bool = True
    embed_scale: float = 1.0
    bos_id: int = 1
    eos_id: int = 2

    TOP_LEVEL_KEYS = ("format", "format_version") + SHARED_TOP_LEVEL_KEYS + (
        "decoder_start_id", "encoder", "decoder", "cross_attention")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def _stack_view(self, n_layers: int, attention: AttentionConfig) -> ModelConfig:
        shared = {key: getattr(self, key) for key in SHARED_TOP_LEVEL_KEYS}
        return ModelConfig(n_layers=n_layers, attention=attention, **shared)

    def encoder_view(self) -> ModelConfig:
        """The encoder as a decoder-only config: softmax attention over max_source_tokens (the
        mask is what differs: the encoder's is bidirectional)."""
        return self._stack_view(self.encoder.n_layers, AttentionConfig(
            kind="softmax", max_context=self.encoder.max_source_tokens))

    def decoder_view(self) -> ModelConfig:
        """The decoder's self-attention stack as a decoder-only config, so the §3 attention
        modules, blocks and tensor table are reused unchanged."""
        return self._stack_view(self.decoder.n_layers, self.decoder.attention)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION}
        for key in self.TOP_LEVEL_KEYS[2:]:
            value = getattr(self, key)
            out[key] = value.to_dict() if hasattr(value, "to_dict") else value
        return out


def _parse_filter(data: Any, source: str) -> Optional[FilterConfig]:
    if data is None:
        return None
    r = _Reader(data, "cross_attention.filter", source)
    result = FilterConfig(op=r.take_choice("op", FILTER_OPS), kernel=r.take_int("kernel", 1),
                          stride=r.take_int("stride", 1))
    r.finish()
    return result


def _parse_cross(data: Any, source: str) -> CrossAttentionConfig:
    r = _Reader(data, "cross_attention", source)
    cross = CrossAttentionConfig(kind=r.take_choice("kind", CROSS_KINDS))
    if cross.kind == "abc":
        cross.slots = r.take_int("slots", 1)
    elif cross.kind == "rfa":
        cross.features = r.take_int("features", 1)
        cross.feature_scale = r.take_float("feature_scale", positive=True)
        cross.eps = r.take_float("eps", positive=True)
        cross.norm_eps = r.take_float("norm_eps", positive=False)
        if cross.norm_eps < 0:
            raise r.error("norm_eps", f"must be >= 0, got {cross.norm_eps}")
        cross.layout = r.take_choice("layout", ("concat", "interleave"))
    elif cross.kind == "luna":
        cross.length = r.take_int("length", 1)
        cross.temperature = r.take_float("temperature", positive=True)
        cross.filter = _parse_filter(r.take("filter"), source)
    elif cross.kind == "srformer":
        cross.segment = r.take_int("segment", 1)
        cross.target_length = r.take_int("target_length", 1)
    r.finish()
    return cross


def _parse_seq2seq_config(data: Any, source: str) -> Seq2seqConfig:
    r = _Reader(data, "", source)
    _take_format(r, FORMAT_NAME, FORMAT_VERSION)
    shared = _take_shared_top_level(r)
    decoder_start_id = r.take_int("decoder_start_id", 0)
    enc = _Reader(r.take("encoder"), "encoder", source)
    encoder = EncoderConfig(n_layers=enc.take_int("n_layers", 1),
                            max_source_tokens=enc.take_int("max_source_tokens", 1))
    enc.finish()
    dec = _Reader(r.take("decoder"), "decoder", source)
    decoder = DecoderConfig(n_layers=dec.take_int("n_layers", 1),
                            attention=_parse_attention(dec.take("attention"), source,
                                                       where="decoder.attention"))
    dec.finish()
    cross = _parse_cross(r.take("cross_attention"), source)
    r.finish()
    cfg = Seq2seqConfig(encoder=encoder, decoder=decoder, cross_attention=cross,
                        decoder_start_id=decoder_start_id, **shared)
    _check_shared_top_level(cfg, source, id_keys=("bos_id", "eos_id", "decoder_start_id"))
    return cfg


Seq2seqConfig._parse = staticmethod(_parse_seq2seq_config)


DEFAULT_CROSS = {
    "softmax": {"kind": "softmax"},
    "abc": {"kind": "abc", "slots": 32},
    "rfa": {"kind": "rfa", "features": 32, "feature_scale": 0.1, "eps": 1.0, "norm_eps": 1e-3,
            "layout": "concat"},
    "luna": {"kind": "luna", "length": 32, "temperature": 1.0, "filter": None},
    "srformer": {"kind": "srformer", "segment": 16, "target_length": 64},
}


def merge_seq2seq_config_dict(overrides: Dict[str, Any]) -> Dict[str, Any]:
    """Completes a partial seq2seq config: the decoder-only defaults for the shared keys and the
    decoder's attention (abc unless named), the cross kind's defaults (softmax unless named),
    overridden key by key. Unknown keys survive, so parsing the result still refuses them."""
    if not isinstance(overrides, dict):
        raise ConfigError(f"config overrides must be an object, got {json.dumps(overrides)}")
    decoder = overrides.get("decoder", {})
    decoder = dict(decoder) if isinstance(decoder, dict) else {}
    self_attention = decoder.get("attention", {})
    self_kind = self_attention.get("kind", "abc") if isinstance(self_attention, dict) else "abc"
    base = default_config_dict(self_kind if self_kind in ATTENTION_KINDS else "abc")
    cross = overrides.get("cross_attention", {})
    cross_kind = cross.get("kind", "softmax") if isinstance(cross, dict) else "softmax"
    merged: Dict[str, Any] = {key: base[key] for key in SHARED_TOP_LEVEL_KEYS}
    merged.update({
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "decoder_start_id": 2,
        "encoder": {"n_layers": 4, "max_source_tokens": 1024},
        "decoder": {"n_layers": 4, "attention": (
            dict(base["attention"], **self_attention) if isinstance(self_attention, dict)
            else self_attention)},
    })
    for key, value in overrides.items():
        if key in ("encoder", "decoder") and isinstance(value, dict):
            merged[key].update({k: v for k, v in value.items() if k != "attention"})
        else:
            merged[key] = value  # a non-object still reaches the parser, which refuses it
    if isinstance(cross, dict):
        merged["cross_attention"] = dict(DEFAULT_CROSS.get(cross_kind, {}), **cross)
    return merged
