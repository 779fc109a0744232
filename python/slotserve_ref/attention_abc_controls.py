"""ABC with the paper's other memory controls (docs/ABC_CONTROLS.md; Peng et al. 2022): the
learned control with the relu or sigmoid activation, and the positional controls window,
linformer, compressive and random. The learned exponential control (today's default) stays in
attention_abc.py: it needs a running max, these do not.

Every control writes keys and values into M memory rows per head, K~ = Σ_i φ_i ⊗ k_i (Ṽ
likewise; window overwrites instead), and reads them with one softmax over the rows:
    out_t = Σ_j p_j V'_j,   p = softmax over the live rows j of (K'_j · q_t / √d)
where for relu/sigmoid K' = K~ / max(z, 1e-30), V' = Ṽ / max(z, 1e-30) with z = Σ_i α_i (every
row live; a row nothing was written to is 0), and for the positional controls K' = K~ and V' = Ṽ
unnormalised, over the rows written so far.

Two forms of the same math, cross-checked in float64 by the tests:
  step     the recurrent form the engine runs: one token per batch row, explicit state
           {"k", "v": [B, H, M, d], "z", "m": [B, H, M]}, the learned control's layout (m is
           unused). z is the relu/sigmoid normaliser; for the positional controls it is the
           weight written into the row (window: 1 once written; compressive: 1/stride per
           token; random: 1 per token; linformer, whose weights may be <= 0: 1 from the first
           token on), so z > 0 means live — as the kernels keep it.
  forward  the parallel form used for training, x [B, T, E]: with the causal (window: banded)
           mask B[t, i] and A = (Q Kᵀ / √d) ⊙ B, the scores of every position at once are
           A Φ (divided by z for relu/sigmoid) and the output is ((P / z) Φᵀ ⊙ B) V, so the
           per-prefix memories [T, M, d] are never built: O(T² (d + M)) per head.
"""

import math
from typing import Dict

import torch
from torch import nn

from .abc_controls import check_context, positional_weights, random_control_row
from .config import ModelConfig
from .heads import ProjectedAttention, merge_heads, split_heads

Z_FLOOR = 1e-30  # relu: a row every α of which was 0 reads as 0 (0 / 1e-30)


class AbcControlAttention(ProjectedAttention):
    def __init__(self, cfg: ModelConfig, layer: int = 0):
        """`layer` is the block's 0-based index: the random control's draw depends on it."""
        super().__init__(cfg.d_model, cfg.n_heads)
        att = cfg.attention
        if att.kind != "abc" or att.default_abc_control:
            raise ValueError("AbcControlAttention serves the abc controls other than learned/exp "
                             f"(AbcAttention serves that one), got kind {att.kind!r} control "
                             f"{att.control!r} activation {att.abc_activation!r}")
        self.att = att
        self.layer = layer
        self.slots = att.slots
        self.learned = att.control == "learned"
        if self.learned:
            self.slot_proj = nn.Linear(cfg.d_model, self.n_heads * self.slots)
        elif att.control == "linformer":
            self.linformer_proj = nn.Parameter(
                torch.zeros(self.n_heads, self.slots, att.max_positions))
        self._positional = None  # (phi, live, band) for the longest sequence seen so far

    def _alpha(self, x: torch.Tensor) -> torch.Tensor:
        """relu or sigmoid of the slot logits, [..., H, M]."""
        s = split_heads(self.slot_proj(x), self.n_heads)
        return torch.relu(s) if self.att.abc_activation == "relu" else torch.sigmoid(s)

    def _project(self, x: torch.Tensor):
        return tuple(split_heads(proj(x), self.n_heads)
                     for proj in (self.q_proj, self.k_proj, self.v_proj))

    def _positional_weights(self, length: int, like: torch.Tensor):
        """positional_weights() for positions 0..length-1, in like's dtype and device. They
        depend on t alone (linformer: on its parameter, never cached), so the longest are kept
        and sliced."""
        if self.att.control == "linformer":
            return positional_weights(self.att, self.layer, self.n_heads, length,
                                      self.linformer_proj)
        if self._positional is None or self._positional[2].shape[0] < length:
            self._positional = positional_weights(self.att, self.layer, self.n_heads, length)
        phi, live, band = self._positional
        return (phi[:, :length].to(like), live[:, :length].to(like.device),
                band[:length, :length].to(like.device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Parallel form over a whole sequence from position 0, x [B, T, E] -> [B, T, E]."""
        length = x.shape[1]
        check_context(self.att, length)
        q, k, v = (t.transpose(1, 2) for t in self._project(x))  # [B, H, T, d]
        if self.learned:
            phi = self._alpha(x).transpose(1, 2)  # [B, H, T, M]
            z = torch.cumsum(phi, dim=2).clamp_min(Z_FLOOR)  # z_t for every t
            live = None
            band = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
        else:
            phi, live, band = self._positional_weights(length, q)  # phi [H or 1, T, M]
            z = None
        qk = (q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)).masked_fill(~band, 0.0)
        scores = qk @ phi  # [B, H, T, M]: K~_t[j] . q_t / sqrt(d)
        if z is not None:
            scores = scores / z
        if live is not None:
            scores = scores.masked_fill(~live, float("-inf"))
        u = torch.softmax(scores, dim=-1)
        if z is not None:
            u = u / z
        mix = (u @ phi.transpose(-1, -2)).masked_fill(~band, 0.0)  # [B, H, T, T]
        out = (mix @ v).transpose(1, 2)  # [B, T, H, d]
        return self.o_proj(merge_heads(out))

    def new_state(self, batch: int, dtype: torch.dtype, device=None) -> Dict[str, torch.Tensor]:
        """All zeros is empty: no row written, none live (positional controls)."""
        h, m, d = self.n_heads, self.slots, self.head_dim
        zeros = lambda *shape: torch.zeros(batch, *shape, dtype=dtype, device=device)
        return {"k": zeros(h, m, d), "v": zeros(h, m, d), "z": zeros(h, m), "m": zeros(h, m)}

    def _step_weights(self, positions: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        """φ_t of a positional control for each batch row's position, [B, H, M]."""
        att, slots, heads = self.att, self.slots, self.n_heads
        one_hot = lambda rows: nn.functional.one_hot(rows, slots).to(like)
        if att.control == "window":
            return one_hot(positions % slots)[:, None, :].expand(-1, heads, -1)
        if att.control == "compressive":
            return one_hot(positions // att.stride)[:, None, :].expand(-1, heads, -1) / att.stride
        if att.control == "random":
            rows = [[random_control_row(att.seed, self.layer, h, int(p), slots)
                     for h in range(heads)] for p in positions.tolist()]
            return one_hot(torch.tensor(rows, dtype=torch.long, device=like.device))
        return self.linformer_proj[:, :, positions].permute(2, 0, 1).to(like)  # linformer

    def step(self, x: torch.Tensor, state: Dict[str, torch.Tensor], positions: torch.Tensor):
        """Recurrent form: one token per batch row, x [B, E]; positions [B] are the tokens'
        0-based indices in their requests (not shifted by position_offset)."""
        check_context(self.att, int(positions.max()) + 1)
        q, k, v = self._project(x)  # [B, H, d]
        k_tilde, v_tilde, z = state["k"], state["v"], state["z"]
        if self.learned:
            alpha = self._alpha(x)  # [B, H, M]
            z = z + alpha
            k_tilde = k_tilde + alpha.unsqueeze(-1) * k.unsqueeze(-2)
            v_tilde = v_tilde + alpha.unsqueeze(-1) * v.unsqueeze(-2)
            scale = 1.0 / z.clamp_min(Z_FLOOR).unsqueeze(-1)
            k_read, v_read, live = k_tilde * scale, v_tilde * scale, None
        else:
            w = self._step_weights(positions, q)
            if self.att.control == "window":  # overwrite row t mod M
                keep = 1.0 - w
                k_tilde = keep.unsqueeze(-1) * k_tilde + w.unsqueeze(-1) * k.unsqueeze(-2)
                v_tilde = keep.unsqueeze(-1) * v_tilde + w.unsqueeze(-1) * v.unsqueeze(-2)
                z = keep * z + w
            else:
                k_tilde = k_tilde + w.unsqueeze(-1) * k.unsqueeze(-2)
                v_tilde = v_tilde + w.unsqueeze(-1) * v.unsqueeze(-2)
                # linformer's weights may be <= 0 and every row is live from the first token.
                z = torch.ones_like(z) if self.att.control == "linformer" else z + w
            k_read, v_read, live = k_tilde, v_tilde, z > 0
        scores = torch.einsum("bhmd,bhd->bhm", k_read, q) / math.sqrt(self.head_dim)
        if live is not None:
            scores = scores.masked_fill(~live, float("-inf"))
        out = torch.einsum("bhm,bhmd->bhd", torch.softmax(scores, dim=-1), v_read)
        return self.o_proj(merge_heads(out)), {"k": k_tilde, "v": v_tilde, "z": z,
                                               "m": state["m"]}
