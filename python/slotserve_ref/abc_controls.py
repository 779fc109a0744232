"""The control vectors φ_t of ABC's positional controls (docs/ABC_CONTROLS.md): which memory
rows token t goes into and with what weight, which rows are live, and how long a context each
control can hold. Kept apart from the attention module (attention_abc_controls.py) because
these are pure functions of t (and of the model directory's seed), shared by both of its forms
and by the tests.

Positions t count the request's tokens from 0 (the BOS token is t = 0), whatever the model's
position_offset: that offset only shifts the sinusoidal embedding.
"""

from typing import Optional

import torch

from .config import AttentionConfig

MASK64 = (1 << 64) - 1


def mix_bits(x: int) -> int:
    """splitmix64's finaliser, bit for bit as kernels/counter_rng.h's MixBits (mod 2^64)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def random_control_row(seed: int, layer: int, head: int, position: int, slots: int) -> int:
    """The row the random control writes token `position` of (layer, head) into:
    MixBits(seed ^ (layer * 2^32 + head) ^ MixBits(position)) mod slots."""
    stream = ((layer << 32) + head) & MASK64
    return mix_bits(seed ^ stream ^ mix_bits(position)) % slots


def random_control_rows(seed: int, layer: int, n_heads: int, length: int,
                        slots: int) -> torch.Tensor:
    """[H, length] int64: the rows of positions 0..length-1 for every head of `layer`."""
    return torch.tensor([[random_control_row(seed, layer, h, t, slots) for t in range(length)]
                         for h in range(n_heads)], dtype=torch.long)


def context_limit(att: AttentionConfig) -> Optional[int]:
    """The most tokens an abc model with this control can read (None: unbounded). linformer has
    a column of linformer_proj per position; compressive fills slots x stride positions."""
    if att.control == "linformer":
        return att.max_positions
    if att.control == "compressive":
        return att.slots * att.stride
    return None


def check_context(att: AttentionConfig, tokens: int) -> None:
    """Refuses a sequence of `tokens` tokens (or a position tokens - 1) beyond context_limit,
    naming the config keys that set the limit."""
    limit = context_limit(att)
    if limit is None or tokens <= limit:
        return
    if att.control == "linformer":
        source = f"attention.max_positions = {att.max_positions}"
    else:
        source = (f"attention.slots x attention.stride = {att.slots} x {att.stride} = "
                  f"{limit}")
    raise ValueError(f"a sequence of {tokens} tokens (position {tokens - 1}) is beyond the "
                     f"context of this abc model with control {att.control}: at most {limit} "
                     f"tokens ({source})")


def positional_weights(att: AttentionConfig, layer: int, n_heads: int, length: int,
                       linformer_proj: Optional[torch.Tensor] = None):
    """The parallel form's view of a positional control for positions 0..length-1:
      phi  [H or 1, T, M]  weight of token i in row j (for window: the ring row, before the
                           band below removes the overwritten tokens)
      live [H or 1, T, M]  bool, row j is live for the query at t (None: all rows live)
      band [T, T]          bool, token i can still be in the memory read at t (causal, and for
                           window within the last M tokens)
    so that the memory read at t is K~_t[j] = sum_i band[t, i] phi[i, j] k_i."""
    slots = att.slots
    t = torch.arange(length)
    band = t[None, :] <= t[:, None]
    rows = torch.arange(slots)
    if att.control == "window":
        phi = (t[:, None] % slots == rows[None, :]).double()
        band = band & (t[:, None] - t[None, :] < slots)
        live = rows[None, :] <= t[:, None]
        return phi[None], live[None], band
    if att.control == "compressive":
        phi = (t[:, None] // att.stride == rows[None, :]).double() / att.stride
        live = rows[None, :] <= t[:, None] // att.stride
        return phi[None], live[None], band
    if att.control == "random":
        drawn = random_control_rows(att.seed, layer, n_heads, length, slots)  # [H, T]
        phi = torch.nn.functional.one_hot(drawn, slots).double()  # [H, T, M]
        live = torch.cummax(phi, dim=1).values > 0
        return phi, live, band
    if att.control == "linformer":
        return linformer_proj[:, :, :length].transpose(1, 2), None, band
    raise ValueError(f"positional_weights: control {att.control!r} is not positional")
