"""The query/key/value inputs both fla mixers share: q_proj/k_proj/v_proj of the normed hidden
state, each followed by its own short causal convolution + silu when use_short_conv
(fla/layers/abc.py ABCAttention.forward and fla/layers/gsa.py GatedSlotAttention.forward:
q_conv1d(q_proj(x)), k_conv1d(k_proj(x)), v_conv1d(v_proj(x)))."""

from __future__ import annotations

from typing import Dict, Tuple

import torch

from .config import FlaConfig
from .ops import causal_conv_chunk, causal_conv_step

CONV_STATE_NAMES = ("conv_q", "conv_k", "conv_v")


def new_conv_state(cfg: FlaConfig) -> Dict[str, torch.Tensor]:
    """The last conv_size − 1 projected inputs of q, k and v (zeros before the first token)."""
    if not cfg.use_short_conv:
        return {}
    rows = cfg.conv_size - 1
    kv_key, kv_value = cfg.num_kv_heads * cfg.head_k_dim, cfg.num_kv_heads * cfg.head_v_dim
    widths = (cfg.key_dim, kv_key, kv_value)
    return {name: torch.zeros(rows, width, dtype=torch.float64)
            for name, width in zip(CONV_STATE_NAMES, widths)}


def project_qkv(w: Dict[str, torch.Tensor], prefix: str, cfg: FlaConfig, x: torch.Tensor,
                state: Dict[str, torch.Tensor], one_token: bool
                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, Dict[str, torch.Tensor]]:
    """x [T, E] -> q [T, key_dim], k [T, kv key dim], v [T, kv value dim] and the new conv
    state. one_token selects the step form of the convolution (T must be 1), otherwise the
    chunk form; the two are written independently so tests can hold one against the other."""
    projected = [x @ w[f"{prefix}.{name}_proj.weight"].T for name in "qkv"]
    if not cfg.use_short_conv:
        return (*projected, {})
    outputs, new_state = [], {}
    for name, state_name, inputs in zip("qkv", CONV_STATE_NAMES, projected):
        weight = w[f"{prefix}.{name}_conv1d.weight"]
        if one_token:
            y, window = causal_conv_step(inputs[0], state[state_name], weight)
            y = y[None, :]
        else:
            y, window = causal_conv_chunk(inputs, state[state_name], weight)
        outputs.append(y)
        new_state[state_name] = window
    return (*outputs, new_state)
