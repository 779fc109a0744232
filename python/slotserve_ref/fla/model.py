"""An fla ABCForCausalLM / GSAForCausalLM in float64, one request at a time
(fla/models/{abc,gsa}/modeling_{abc,gsa}.py; ABCBlock and GSABlock are the same pre-norm block):

  h_0   = embeddings[token]                         (no scale, no positions: RoPE is inside ABC)
  h    += mixer(rms_norm(h, attn_norm, norm_eps))
  h    += down(silu(gate(u)) · up(u)),  u = rms_norm(h, mlp_norm, norm_eps)
  logits = rms_norm(h, model.norm, norm_eps) @ lm_head.weightᵀ   (embeddings when tied)

Two forms that must agree: step() feeds one token through each mixer's recurrence; prefill()
feeds chunks through each mixer's all-at-once chunk form, continuing from any state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

import torch

from .abc_mixer import abc_chunk, abc_step, new_abc_state
from .checkpoint import layer_prefix, load_checkpoint
from .config import FlaConfig
from .gsa_mixer import gsa_chunk, gsa_step, new_gsa_state
from .ops import rms_norm, swiglu_mlp

MIXERS = {
    "abc": (new_abc_state, abc_step, abc_chunk),
    "gsa": (new_gsa_state, gsa_step, gsa_chunk),
}


class FlaModel:
    def __init__(self, cfg: FlaConfig, tensors: Dict[str, torch.Tensor]):
        self.cfg = cfg
        self.w = {name: t.to(torch.float64) for name, t in tensors.items()}
        self._new_mixer_state, self._mixer_step, self._mixer_chunk = MIXERS[cfg.model_type]
        embeddings = self.w["model.embeddings.weight"]
        self.lm_head = embeddings if cfg.tie_word_embeddings else self.w["lm_head.weight"]

    @classmethod
    def load(cls, model_dir: Union[str, Path]) -> "FlaModel":
        cfg, tensors = load_checkpoint(model_dir, torch.float64)
        return cls(cfg, tensors)

    def new_state(self) -> Dict:
        """Everything a request carries between tokens: each layer's mixer state and the
        number of tokens seen (RoPE's position)."""
        return {"position": 0,
                "layers": [self._new_mixer_state(self.cfg) for _ in range(self.cfg.num_hidden_layers)]}

    def _mlp(self, i: int, h: torch.Tensor) -> torch.Tensor:
        p = layer_prefix(i)
        u = rms_norm(h, self.w[f"{p}.mlp_norm.weight"], self.cfg.mlp_norm_eps)
        return swiglu_mlp(u, self.w[f"{p}.mlp.gate_proj.weight"], self.w[f"{p}.mlp.up_proj.weight"],
                          self.w[f"{p}.mlp.down_proj.weight"])

    def _logits(self, h: torch.Tensor) -> torch.Tensor:
        return rms_norm(h, self.w["model.norm.weight"], self.cfg.norm_eps) @ self.lm_head.T

    def _run(self, tokens: torch.Tensor, state: Dict, mixer) -> Tuple[torch.Tensor, Dict]:
        """tokens [T] through every layer with `mixer(w, prefix, cfg, x, layer_state, start)`."""
        h = self.w["model.embeddings.weight"][tokens]
        start = state["position"]
        new_layers: List[Dict] = []
        for i, layer_state in enumerate(state["layers"]):
            p = layer_prefix(i)
            x = rms_norm(h, self.w[f"{p}.attn_norm.weight"], self.cfg.norm_eps)
            out, layer_state = mixer(self.w, f"{p}.attn", self.cfg, x, layer_state, start)
            h = h + out
            h = h + self._mlp(i, h)
            new_layers.append(layer_state)
        return self._logits(h), {"position": start + tokens.shape[0], "layers": new_layers}

    @torch.no_grad()
    def step(self, token: int, state: Dict) -> Tuple[torch.Tensor, Dict]:
        """One token through the recurrent form: (logits [V], new state)."""
        def one(w, prefix, cfg, x, layer_state, start):
            out, new_layer = self._mixer_step(w, prefix, cfg, x[0], layer_state, start)
            return out[None, :], new_layer
        logits, state = self._run(torch.tensor([int(token)]), state, one)
        return logits[0], state

    @torch.no_grad()
    def prefill(self, tokens: torch.Tensor, state: Optional[Dict] = None,
                chunk: Optional[int] = None) -> Tuple[torch.Tensor, Dict]:
        """tokens [T] in chunks of `chunk` (all at once when None) through the chunk form:
        (logits [T, V] at every position, state after the last token)."""
        state = self.new_state() if state is None else state
        tokens = torch.as_tensor(tokens, dtype=torch.long)
        chunk = tokens.shape[0] if chunk is None else chunk
        pieces = []
        for begin in range(0, tokens.shape[0], chunk):
            logits, state = self._run(tokens[begin:begin + chunk], state, self._mixer_chunk)
            pieces.append(logits)
        return torch.cat(pieces, dim=0), state

    @torch.no_grad()
    def forward_recurrent(self, tokens: torch.Tensor, state: Optional[Dict] = None
                          ) -> Tuple[torch.Tensor, Dict]:
        """Every token through step(): (logits [T, V], final state)."""
        state = self.new_state() if state is None else state
        rows = []
        for token in torch.as_tensor(tokens).tolist():
            logits, state = self.step(token, state)
            rows.append(logits)
        return torch.stack(rows), state
