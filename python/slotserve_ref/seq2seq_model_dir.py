"""The encoder–decoder model directory (docs/ARCHITECTURE.md "Encoder–decoder models"): config.json
("slotserve-seq2seq") +
model.safetensors (+ tokenizer.model), checked tensor by tensor like the decoder-only one.

expected_seq2seq_tensors() writes the docs/ARCHITECTURE.md "Encoder–decoder models" table out
independently of the nn.Module tree;
the encoder and decoder blocks reuse the §2 block table of model_dir.py. Weights are F32, F16,
BF16 or the int8 weight-only format (int8_weights.py: the same rule as the decoder-only
directories, every 2-D `*.weight` of the table as I8 rows with an F32 `_scale`).
"""

from pathlib import Path
from typing import Dict, Optional, Tuple, Union

import torch

from .int8_weights import Int8WeightsError, dequantize_tensors
from .model_dir import (CONFIG_FILE, WEIGHT_DTYPES, WEIGHTS_FILE, ModelDirError, add_linear,
                        block_tensors, build_from_tensors, check_tensor_set, stored_tensors,
                        write_model_dir)
from .safetensors_io import load_file
from .seq2seq_config import Seq2seqConfig
from .seq2seq_model import Seq2seqModel

__all__ = ["ModelDirError", "SEQ2SEQ_WEIGHT_DTYPES", "expected_seq2seq_tensors",
           "check_seq2seq_tensors", "save_seq2seq_model_dir", "load_seq2seq_model_dir"]

# The --dtype names a seq2seq directory can be written in: those of a decoder-only one.
SEQ2SEQ_WEIGHT_DTYPES = dict(WEIGHT_DTYPES)


def cross_tensors(cfg: Seq2seqConfig, prefix: str) -> Dict[str, Tuple[int, ...]]:
    """cross_norm and cross.* of one decoder layer (docs/ARCHITECTURE.md "Encoder–decoder models",
    by cross kind)."""
    e, h, d = cfg.d_model, cfg.n_heads, cfg.head_dim
    cross = cfg.cross_attention
    out: Dict[str, Tuple[int, ...]] = {f"{prefix}.cross_norm.weight": (e,),
                                       f"{prefix}.cross_norm.bias": (e,)}
    c = f"{prefix}.cross"
    for name in "qkvo":
        add_linear(out, f"{c}.{name}_proj", e, e)
    if cross.kind == "abc":
        add_linear(out, f"{c}.slot_proj", h * cross.slots, e)
    elif cross.kind == "rfa":
        out[f"{c}.rfa_random"] = (h, cross.features, d)
        out[f"{c}.rfa_sigma"] = (h, d)
    elif cross.kind == "luna":
        out[f"{c}.luna_p"] = (cross.length, e)
        add_linear(out, f"{c}.pq_proj", e, e)
        if cross.filter is not None and cross.filter.op == "conv":
            out[f"{c}.filter.weight"] = (cross.filter.kernel,)
            out[f"{c}.filter.bias"] = (1,)
    elif cross.kind == "srformer":
        add_linear(out, f"{c}.raf_proj", d, d)
        out[f"{c}.raf_leak"] = (1,)
        out[f"{c}.raf_thre"] = (1,)
    return out


def expected_seq2seq_tensors(cfg: Seq2seqConfig) -> Dict[str, Tuple[int, ...]]:
    """Every tensor name of the model and its shape (docs/ARCHITECTURE.md "Encoder–decoder
    models")."""
    e, v = cfg.d_model, cfg.vocab_size
    out: Dict[str, Tuple[int, ...]] = {"tok_embed.weight": (v, e)}
    encoder_view, decoder_view = cfg.encoder_view(), cfg.decoder_view()
    for i in range(cfg.encoder.n_layers):
        out.update(block_tensors(encoder_view, f"encoder.layers.{i}"))
    out["encoder.final_norm.weight"] = (e,)
    out["encoder.final_norm.bias"] = (e,)
    for i in range(cfg.decoder.n_layers):
        out.update(block_tensors(decoder_view, f"decoder.layers.{i}"))
        out.update(cross_tensors(cfg, f"decoder.layers.{i}"))
    out["decoder.final_norm.weight"] = (e,)
    out["decoder.final_norm.bias"] = (e,)
    if not cfg.tie_embeddings:
        out["lm_head.weight"] = (v, e)
    return out


def check_seq2seq_tensors(cfg: Seq2seqConfig, tensors: Dict[str, torch.Tensor],
                          source: str) -> None:
    kinds = f"a seq2seq model ({cfg.decoder.attention.kind} self, " \
            f"{cfg.cross_attention.kind} cross)"
    check_tensor_set(expected_seq2seq_tensors(cfg), tensors, source, kinds)


def save_seq2seq_model_dir(model: Seq2seqModel, out_dir: Union[str, Path], dtype: str = "f32",
                           tokenizer: Optional[Union[str, Path]] = None) -> Path:
    """Writes config.json and model.safetensors (weights rounded to `dtype`: f32, f16, bf16, or
    int8 weight-only), and copies `tokenizer` to tokenizer.model when given."""
    if dtype not in SEQ2SEQ_WEIGHT_DTYPES:
        raise ModelDirError(f"weight dtype must be one of {', '.join(SEQ2SEQ_WEIGHT_DTYPES)}, "
                            f"got {dtype!r}")
    expected = expected_seq2seq_tensors(model.config)
    check_seq2seq_tensors(model.config, model.state_dict(), "model state_dict")
    tensors = stored_tensors(model, dtype, expected)
    return write_model_dir(model.config, tensors, out_dir, tokenizer)


def load_seq2seq_model_dir(model_dir: Union[str, Path],
                           dtype: torch.dtype = torch.float64) -> Seq2seqModel:
    """Loads a seq2seq model directory, refusing a bad config or tensor set by name (I8
    matrices become q * scale computed in float64, so the model sees the stored values)."""
    model_dir = Path(model_dir)
    cfg = Seq2seqConfig.load(model_dir / CONFIG_FILE)
    source = str(model_dir / WEIGHTS_FILE)
    try:
        tensors = dequantize_tensors(load_file(model_dir / WEIGHTS_FILE),
                                     expected_seq2seq_tensors(cfg), source)
    except Int8WeightsError as e:
        raise ModelDirError(str(e)) from None
    check_seq2seq_tensors(cfg, tensors, source)
    return build_from_tensors(Seq2seqModel, cfg, tensors, dtype)
