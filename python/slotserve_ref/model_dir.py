"""The model directory (docs/MODEL_FORMAT.md): config.json + model.safetensors (+ tokenizer.model).

expected_tensors() is the table of docs/MODEL_FORMAT.md written out independently of the nn.Module
tree, so
that save and load both check the module's state_dict against the contract by name and shape.
Weights are stored as F32, F16 or BF16, or in the int8 weight-only format of int8_weights.py
(I8 matrices with per-row F32 scales; decoder-only models only).
"""

import shutil
from pathlib import Path
from typing import Dict, Optional, Tuple, Union

import torch

from .config import ModelConfig
from .int8_weights import Int8WeightsError, dequantize_tensors, quantize_tensors
from .model import LanguageModel
from .safetensors_io import load_file, safetensors_dtype_name, save_file

# --dtype name -> the stored dtype of the weights ("int8": of the quantized matrices only; the
# other tensors stay F32, see int8_weights.py).
INT8 = "int8"
FLOAT_WEIGHT_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
WEIGHT_DTYPES = dict(FLOAT_WEIGHT_DTYPES, **{INT8: torch.int8})
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.model"


class ModelDirError(ValueError):
    """A model directory or checkpoint does not match the docs/MODEL_FORMAT.md contract."""


def add_linear(out: Dict[str, Tuple[int, ...]], name: str, rows: int, cols: int) -> None:
    out[f"{name}.weight"] = (rows, cols)
    out[f"{name}.bias"] = (rows,)


def block_tensors(cfg: ModelConfig, prefix: str) -> Dict[str, Tuple[int, ...]]:
    """The tensors of one §2 block (attn_norm, attn by cfg's kind, ffn_norm, ffn) under
    `prefix` ("layers.{i}"; the seq2seq directories use "encoder.layers.{i}" and
    "decoder.layers.{i}")."""
    e, h, d, f = cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.d_ffn
    att = cfg.attention
    out: Dict[str, Tuple[int, ...]] = {}
    p = prefix
    out[f"{p}.attn_norm.weight"] = (e,)
    out[f"{p}.attn_norm.bias"] = (e,)
    projections = "qko" if att.kind == "luna" and att.tie_kv else "qkvo"
    for name in projections:
        add_linear(out, f"{p}.attn.{name}_proj", e, e)
    if att.kind == "abc":
        # docs/ABC_CONTROLS.md: the learned controls project the slot logits; linformer has
        # its projection over positions instead; the other controls have no tensor of their own.
        if att.control == "learned":
            add_linear(out, f"{p}.attn.slot_proj", h * att.slots, e)
        elif att.control == "linformer":
            out[f"{p}.attn.linformer_proj"] = (h, att.slots, att.max_positions)
    elif att.kind == "rfa":
        out[f"{p}.attn.rfa_random"] = (h, att.features, d)
        out[f"{p}.attn.rfa_sigma"] = (h, d)
        if att.gate:
            add_linear(out, f"{p}.attn.gate_proj", h, e)
    elif att.kind == "luna":
        out[f"{p}.attn.luna_p"] = (att.length, e)
        add_linear(out, f"{p}.attn.pq_proj", e, e)
        add_linear(out, f"{p}.attn.pc_proj", e, e)
    out[f"{p}.ffn_norm.weight"] = (e,)
    out[f"{p}.ffn_norm.bias"] = (e,)
    add_linear(out, f"{p}.ffn.up", f, e)
    add_linear(out, f"{p}.ffn.down", e, f)
    return out


def expected_tensors(cfg: ModelConfig) -> Dict[str, Tuple[int, ...]]:
    """Every tensor name of the model and its shape (docs/MODEL_FORMAT.md)."""
    e, v = cfg.d_model, cfg.vocab_size
    out: Dict[str, Tuple[int, ...]] = {"tok_embed.weight": (v, e)}
    for i in range(cfg.n_layers):
        out.update(block_tensors(cfg, f"layers.{i}"))
    out["final_norm.weight"] = (e,)
    out["final_norm.bias"] = (e,)
    if not cfg.tie_embeddings:
        out["lm_head.weight"] = (v, e)
    return out


def check_tensor_set(expected: Dict[str, Tuple[int, ...]], tensors: Dict[str, torch.Tensor],
                     source: str, model_kind: str) -> None:
    """Refuses missing, extra or mis-shaped tensors, naming them; `model_kind` describes the
    model in the message about extra tensors."""
    missing = sorted(set(expected) - set(tensors))
    extra = sorted(set(tensors) - set(expected))
    if missing:
        raise ModelDirError(f"{source}: missing tensor(s) {', '.join(missing)}")
    if extra:
        raise ModelDirError(f"{source}: unexpected tensor(s) {', '.join(extra)} "
                            f"(not part of {model_kind} with this config)")
    for name, shape in expected.items():
        if tuple(tensors[name].shape) != shape:
            raise ModelDirError(f"{source}: tensor {name} has shape {list(tensors[name].shape)}, "
                                f"expected {list(shape)}")


def check_tensors(cfg: ModelConfig, tensors: Dict[str, torch.Tensor], source: str) -> None:
    """Refuses missing, extra or mis-shaped tensors, naming them."""
    check_tensor_set(expected_tensors(cfg), tensors, source, f"a {cfg.attention.kind} model")


def write_model_dir(config, tensors: Dict[str, torch.Tensor], out_dir: Union[str, Path],
                    tokenizer: Optional[Union[str, Path]] = None) -> Path:
    """config.json (config.save), model.safetensors and the optional tokenizer.model; the
    tensors are already checked and in their stored dtype."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config.save(out_dir / CONFIG_FILE)
    save_file(tensors, out_dir / WEIGHTS_FILE, metadata={"format": "pt"})
    if tokenizer is not None:
        shutil.copyfile(tokenizer, out_dir / TOKENIZER_FILE)
    return out_dir


def stored_tensors(model: torch.nn.Module, dtype: str,
                   expected: Dict[str, Tuple[int, ...]]) -> Dict[str, torch.Tensor]:
    """The model's state_dict (already checked against the tensor table `expected`) ready to
    write: rounded to `dtype` (f32, f16 or bf16), or for int8 the quantized matrices as I8 plus
    their `_scale` and everything else F32 (int8_weights.py)."""
    if dtype not in WEIGHT_DTYPES:
        raise ModelDirError(f"weight dtype must be one of {', '.join(WEIGHT_DTYPES)}, got {dtype!r}")
    state = {name: t.detach() for name, t in model.state_dict().items()}
    if dtype == INT8:
        try:
            return quantize_tensors(state, expected)
        except Int8WeightsError as e:
            raise ModelDirError(str(e)) from None
    return {name: t.to(WEIGHT_DTYPES[dtype]).contiguous() for name, t in state.items()}


def save_model_dir(model: LanguageModel, out_dir: Union[str, Path], dtype: str = "f32",
                   tokenizer: Optional[Union[str, Path]] = None) -> Path:
    """Writes config.json and model.safetensors (weights rounded to `dtype`: f32, f16, bf16, or
    int8 weight-only), and copies `tokenizer` to tokenizer.model when given."""
    check_tensors(model.config, model.state_dict(), "model state_dict")
    tensors = stored_tensors(model, dtype, expected_tensors(model.config))
    return write_model_dir(model.config, tensors, out_dir, tokenizer)


def load_model_dir(model_dir: Union[str, Path], dtype: torch.dtype = torch.float64) -> LanguageModel:
    """Loads a model directory into a LanguageModel computing in `dtype` (weights stored as F16 or
    BF16 are widened exactly, I8 matrices become q * scale computed in float64, so the model
    sees the stored values)."""
    model_dir = Path(model_dir)
    cfg = ModelConfig.load(model_dir / CONFIG_FILE)
    source = str(model_dir / WEIGHTS_FILE)
    try:
        tensors = dequantize_tensors(load_file(model_dir / WEIGHTS_FILE), expected_tensors(cfg),
                                     source)
    except Int8WeightsError as e:
        raise ModelDirError(str(e)) from None
    check_tensors(cfg, tensors, source)
    return build_from_tensors(LanguageModel, cfg, tensors, dtype)


def build_from_tensors(model_class, cfg, tensors: Dict[str, torch.Tensor],
                       dtype: torch.dtype) -> torch.nn.Module:
    """model_class(cfg) in `dtype` holding `tensors` (already checked, float), in eval mode.
    An integer tensor here would be read as its raw values: refused."""
    for name, t in tensors.items():
        if not t.is_floating_point():
            raise ModelDirError(f"tensor {name} is {safetensors_dtype_name(t.dtype)}; only "
                                f"float tensors can be loaded into the model as they are")
    model = model_class(cfg).to(dtype)
    model.load_state_dict({name: t.to(dtype) for name, t in tensors.items()}, strict=True)
    return model.eval()
