"""fairseq's sinusoidal positions (docs/MODEL_FORMAT.md "The attention kinds")."""

import math

import torch


def sinusoidal_positions(positions: torch.Tensor, dim: int, dtype: torch.dtype) -> torch.Tensor:
    """positions [...] (already including position_offset) -> [..., dim]:
    half = dim/2, f_i = exp(-i*ln(10000)/(half-1)), pos(p) = [sin(p*f), cos(p*f)]."""
    half = dim // 2
    freqs = torch.exp(torch.arange(half, dtype=torch.float64) * (-math.log(10000.0) / (half - 1)))
    angles = positions.to(torch.float64).unsqueeze(-1) * freqs.to(positions.device)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).to(dtype)
