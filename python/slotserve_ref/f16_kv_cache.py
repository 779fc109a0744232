"""The PyTorch reference of the engine's f16 KV cache (--kv-cache-dtype f16; C++:
kernels/softmax_attention.h, models/kv_cache_dtype.h).

With an f16 cache, every key and value a softmax attention layer caches is rounded to the
nearest IEEE half (ties to even) as it is written, from the float32 value the engine computed;
queries, scores, the softmax and the output keep their precision. Attention reads only cached
keys and values (the token's own included), so rounding the outputs of k_proj and v_proj is the
whole effect, in the parallel and the recurrent form alike.
"""

from __future__ import annotations

import torch
from torch import nn

from .attention_softmax import SoftmaxAttention


def round_to_half(x: torch.Tensor) -> torch.Tensor:
    """x as the engine caches it: float32, then the nearest half; returned in x's dtype."""
    return x.to(torch.float32).to(torch.float16).to(x.dtype)


def use_f16_kv_cache_(model: nn.Module) -> nn.Module:
    """Rounds what every softmax attention layer of `model` caches to halves; returns the
    model. A model without softmax attention is refused, as the server refuses it."""
    layers = [m for m in model.modules() if isinstance(m, SoftmaxAttention)]
    if not layers:
        raise ValueError("an f16 KV cache needs softmax attention; this model has none")
    for layer in layers:
        for projection in (layer.k_proj, layer.v_proj):
            projection.register_forward_hook(lambda _m, _args, out: round_to_half(out))
    return model
