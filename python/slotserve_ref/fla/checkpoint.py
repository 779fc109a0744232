"""An fla checkpoint directory in the Hugging Face layout: config.json plus model.safetensors, or
shards model-0000i-of-0000n.safetensors listed by model.safetensors.index.json.

expected_tensors() is fla's parameter tree for one config written out by hand (names as
ABCForCausalLM / GSAForCausalLM's state_dict gives them), so loading checks every name and
shape and refuses missing, extra or mis-shaped tensors by name. Checkpoints written before
February 2025 use an older layout (norms inside attn and mlp, one fused gate/up projection);
normalize_legacy_names() maps it onto today's names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Mapping, Tuple, Union

import torch

from ..safetensors_io import load_file, save_file
from .config import FlaConfig

CONFIG_FILE = "config.json"
SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"


class FlaCheckpointError(ValueError):
    """The weights of an fla checkpoint directory do not match its config."""


def layer_prefix(i: int) -> str:
    return f"model.layers.{i}"


def expected_tensors(cfg: FlaConfig) -> Dict[str, Tuple[int, ...]]:
    """Every tensor of the checkpoint and its shape (Linear weights are [out, in]).
    lm_head.weight is listed even when tied: it is optional then (see check_tensors)."""
    e, w = cfg.hidden_size, cfg.conv_size
    kv_key_dim = cfg.num_kv_heads * cfg.head_k_dim
    kv_value_dim = cfg.num_kv_heads * cfg.head_v_dim
    out: Dict[str, Tuple[int, ...]] = {"model.embeddings.weight": (cfg.vocab_size, e)}
    for i in range(cfg.num_hidden_layers):
        p = layer_prefix(i)
        out[f"{p}.attn_norm.weight"] = (e,)
        out[f"{p}.attn.q_proj.weight"] = (cfg.key_dim, e)
        out[f"{p}.attn.k_proj.weight"] = (kv_key_dim, e)
        out[f"{p}.attn.v_proj.weight"] = (kv_value_dim, e)
        if cfg.use_short_conv:  # depthwise nn.Conv1d weights [channels, 1, conv_size], no bias
            out[f"{p}.attn.q_conv1d.weight"] = (cfg.key_dim, 1, w)
            out[f"{p}.attn.k_conv1d.weight"] = (kv_key_dim, 1, w)
            out[f"{p}.attn.v_conv1d.weight"] = (kv_value_dim, 1, w)
        if cfg.model_type == "abc":
            out[f"{p}.attn.s_proj.weight"] = (cfg.num_heads * cfg.num_slots, e)
            out[f"{p}.attn.g_proj.weight"] = (cfg.value_dim, e)
            if cfg.elementwise_affine:
                out[f"{p}.attn.g_norm.weight"] = (cfg.head_v_dim,)
        else:
            out[f"{p}.attn.f_proj.weight"] = (cfg.num_kv_heads * cfg.num_slots, e)
            if cfg.feature_map == "t2r":
                out[f"{p}.attn.feature_map.layer.weight"] = (cfg.head_k_dim, cfg.head_k_dim)
            if cfg.elementwise_affine:
                out[f"{p}.attn.g_norm.weight"] = (e,)
        out[f"{p}.attn.o_proj.weight"] = (e, cfg.value_dim)
        out[f"{p}.mlp_norm.weight"] = (e,)
        out[f"{p}.mlp.gate_proj.weight"] = (cfg.intermediate_size, e)
        out[f"{p}.mlp.up_proj.weight"] = (cfg.intermediate_size, e)
        out[f"{p}.mlp.down_proj.weight"] = (e, cfg.intermediate_size)
    out["model.norm.weight"] = (e,)
    out["lm_head.weight"] = (cfg.vocab_size, e)
    return out


def normalize_legacy_names(cfg: FlaConfig, tensors: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """Maps fla's pre-2025-02 layout onto today's names, leaving today's layout untouched:
    with norm_first the block norms were attn.norm and mlp.norm (fla commit 13ced952 removed
    them), and GatedMLP had one gate_proj [2*I, E] whose output was split in half, gate first
    (fla commit b48ca31d split it into gate_proj and up_proj)."""
    out = dict(tensors)
    for i in range(cfg.num_hidden_layers):
        p = layer_prefix(i)
        if cfg.norm_first:
            for old, new in ((f"{p}.attn.norm.weight", f"{p}.attn_norm.weight"),
                             (f"{p}.mlp.norm.weight", f"{p}.mlp_norm.weight")):
                if old in out and new not in out:
                    out[new] = out.pop(old)
        gate, up = f"{p}.mlp.gate_proj.weight", f"{p}.mlp.up_proj.weight"
        if (up not in out and gate in out and
                tuple(out[gate].shape) == (2 * cfg.intermediate_size, cfg.hidden_size)):
            out[gate], out[up] = out[gate][:cfg.intermediate_size], out[gate][cfg.intermediate_size:]
    return out


def check_tensors(cfg: FlaConfig, tensors: Mapping[str, torch.Tensor], source: str) -> None:
    expected = expected_tensors(cfg)
    optional = {"lm_head.weight"} if cfg.tie_word_embeddings else set()
    missing = sorted(set(expected) - set(tensors) - optional)
    extra = sorted(set(tensors) - set(expected))
    if missing:
        raise FlaCheckpointError(f"{source}: missing tensor(s) {', '.join(missing)}")
    if extra:
        raise FlaCheckpointError(
            f"{source}: unexpected tensor(s) {', '.join(extra)} (not part of an fla "
            f"{cfg.model_type} model with this config; unsupported options add tensors)")
    for name, shape in expected.items():
        if name in tensors and tuple(tensors[name].shape) != shape:
            raise FlaCheckpointError(f"{source}: tensor {name} has shape "
                                     f"{list(tensors[name].shape)}, expected {list(shape)}")


def read_weight_files(model_dir: Union[str, Path]) -> Dict[str, torch.Tensor]:
    """Every tensor of the directory in its stored dtype. Like transformers, a single
    model.safetensors wins over an index; the index must list exactly the shards' tensors."""
    model_dir = Path(model_dir)
    if (model_dir / SINGLE_FILE).exists():
        return load_file(model_dir / SINGLE_FILE)
    index_path = model_dir / INDEX_FILE
    if not index_path.exists():
        raise FlaCheckpointError(f"{model_dir}: neither {SINGLE_FILE} nor {INDEX_FILE} exists")
    try:
        weight_map = json.loads(index_path.read_text())["weight_map"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise FlaCheckpointError(f"{index_path}: expected a JSON object with a weight_map, "
                                 f"got an error: {e!r}") from None
    tensors: Dict[str, torch.Tensor] = {}
    for shard in sorted(set(weight_map.values())):
        if not isinstance(shard, str) or "/" in shard or shard.startswith("."):
            raise FlaCheckpointError(f"{index_path}: shard name {shard!r} must be a plain file "
                                     f"name inside the directory")
        shard_tensors = load_file(model_dir / shard)
        listed = {name for name, file in weight_map.items() if file == shard}
        if set(shard_tensors) != listed:
            surplus = sorted(set(shard_tensors) - listed)
            absent = sorted(listed - set(shard_tensors))
            raise FlaCheckpointError(
                f"{index_path}: shard {shard} does not hold what the index lists "
                f"(in the shard, not the index: {surplus}; in the index, not the shard: {absent})")
        tensors.update(shard_tensors)
    return tensors


def load_checkpoint(model_dir: Union[str, Path], dtype: torch.dtype = torch.float64):
    """(config, tensors widened exactly to `dtype`, named as today's fla names them)."""
    model_dir = Path(model_dir)
    cfg = FlaConfig.load(model_dir / CONFIG_FILE)
    tensors = normalize_legacy_names(cfg, read_weight_files(model_dir))
    # safetensors_io also reads I8 (our int8 model directories); widening raw int8 values
    # would silently give wrong weights.
    ints = sorted(name for name, t in tensors.items() if not t.is_floating_point())
    if ints:
        raise FlaCheckpointError(f"{model_dir}: tensor(s) {', '.join(ints)} are not float; fla "
                                 f"checkpoints are read with F32, F16 or BF16 weights only")
    check_tensors(cfg, tensors, str(model_dir))
    return cfg, {name: t.to(dtype) for name, t in tensors.items()}


def shard_names(count: int) -> List[str]:
    return [f"model-{i + 1:05d}-of-{count:05d}.safetensors" for i in range(count)]


def write_checkpoint(model_dir: Union[str, Path], config: Mapping, tensors: Mapping[str, torch.Tensor],
                     shards: int = 1) -> Path:
    """Writes config.json and the weights as given (dtype kept): one model.safetensors, or
    `shards` files of about equal size plus the index transformers writes."""
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    if shards == 1:
        save_file(tensors, model_dir / SINGLE_FILE, metadata={"format": "pt"})
        return model_dir
    names = sorted(tensors)
    total = sum(tensors[n].numel() * tensors[n].element_size() for n in names)
    files = shard_names(shards)
    groups: List[List[str]] = [[] for _ in files]
    written = 0
    for name in names:  # fill shards in name order, moving on at each 1/shards of the bytes
        index = min(shards - 1, written * shards // total)
        groups[index].append(name)
        written += tensors[name].numel() * tensors[name].element_size()
    weight_map = {}
    for file, group in zip(files, groups):
        if not group:
            raise FlaCheckpointError(f"cannot split {len(names)} tensors into {shards} shards")
        save_file({n: tensors[n] for n in group}, model_dir / file, metadata={"format": "pt"})
        weight_map.update({n: file for n in group})
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (model_dir / INDEX_FILE).write_text(json.dumps(index, indent=2) + "\n")
    return model_dir
