"""Splitting the model dimension into attention heads and back."""

import torch


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """[..., H*d] -> [..., H, d]; head h takes columns [h*d, (h+1)*d)."""
    return x.reshape(*x.shape[:-1], n_heads, x.shape[-1] // n_heads)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """[..., H, d] -> [..., H*d], heads concatenated."""
    return x.reshape(*x.shape[:-2], x.shape[-2] * x.shape[-1])


def causal_mask(length: int, device) -> torch.Tensor:
    """[T, T] boolean, True where key j may be seen by query t (j <= t)."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


class ProjectedAttention(torch.nn.Module):
    """The projections every attention kind shares: q_proj, k_proj, v_proj (absent for Luna with
    tie_kv) and o_proj, all [E, E] with bias, named as in docs/MODEL_FORMAT.md."""

    def __init__(self, d_model: int, n_heads: int, with_v_proj: bool = True):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.q_proj = torch.nn.Linear(d_model, d_model)
        self.k_proj = torch.nn.Linear(d_model, d_model)
        if with_v_proj:
            self.v_proj = torch.nn.Linear(d_model, d_model)
        self.o_proj = torch.nn.Linear(d_model, d_model)
