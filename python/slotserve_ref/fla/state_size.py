"""Bytes of one request's state for an fla model (docs/FLA_CHECKPOINTS.md §4), from the config
alone: what the server's state arena must hold per slot."""

from __future__ import annotations

from .config import FlaConfig


def state_values_per_layer(cfg: FlaConfig) -> int:
    """Values one layer keeps between tokens (the RoPE position is not counted)."""
    m, dk, dv = cfg.num_slots, cfg.head_k_dim, cfg.head_v_dim
    if cfg.model_type == "abc":   # K̃ [M, dk], Ṽ [M, dv], z [M], m [M] per head
        values = cfg.num_heads * (m * dk + m * dv + 2 * m)
    else:                         # H_k [dk, M], H_v [M, dv] per kv head
        values = cfg.num_kv_heads * (dk * m + m * dv)
    if cfg.use_short_conv:        # the last conv_size − 1 inputs of q, k and v
        values += (cfg.conv_size - 1) * (cfg.key_dim + cfg.num_kv_heads * (dk + dv))
    return values


def state_bytes(cfg: FlaConfig, bytes_per_value: int = 4) -> int:
    """Per request, all layers; fp32 by default, as the engine keeps states."""
    return cfg.num_hidden_layers * state_values_per_layer(cfg) * bytes_per_value
