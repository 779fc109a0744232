"""The decoder-only language model of docs/MODEL_FORMAT.md "The attention kinds", in a parallel
(whole-sequence) form for
training and a recurrent (token-by-token, explicit state) form that mirrors the serving engine.

Parameter names are exactly the tensor names of docs/MODEL_FORMAT.md, so state_dict() is the content
of
model.safetensors without renaming.
"""

from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from torch import nn

from .attention_abc import AbcAttention
from .attention_abc_controls import AbcControlAttention
from .attention_luna import LunaAttention
from .attention_rfa import RfaAttention
from .attention_softmax import SoftmaxAttention
from .config import ModelConfig
from .positions import sinusoidal_positions

ATTENTION_CLASSES = {
    "abc": AbcAttention,
    "rfa": RfaAttention,
    "luna": LunaAttention,
    "softmax": SoftmaxAttention,
}

LayerState = Dict[str, torch.Tensor]


def attention_module(cfg: ModelConfig, layer: int) -> nn.Module:
    """The attention module of block `layer` (0-based): the kind's class, except that abc with
    a control other than learned/exp is AbcControlAttention (docs/ABC_CONTROLS.md), which
    needs the layer's index (the random control's draw depends on it)."""
    if cfg.attention.kind == "abc" and not cfg.attention.default_abc_control:
        return AbcControlAttention(cfg, layer)
    return ATTENTION_CLASSES[cfg.attention.kind](cfg)


def embed_tokens(cfg, tok_embed: nn.Embedding, tokens: torch.Tensor,
                 positions: torch.Tensor) -> torch.Tensor:
    """h_0 = embed_scale * tok_embed[token] + pos(position + position_offset) (docs/MODEL_FORMAT.md
    "The attention kinds"; the
    seq2seq encoder and decoder use it too, docs/ARCHITECTURE.md "Encoder–decoder models")."""
    h = cfg.embed_scale * tok_embed(tokens)
    if cfg.position == "sinusoidal":
        h = h + sinusoidal_positions(positions + cfg.position_offset, cfg.d_model, h.dtype)
    return h


def output_logits(model: nn.Module, final_norm: nn.LayerNorm, h: torch.Tensor) -> torch.Tensor:
    """lm_head(final_norm(h)); lm_head is tok_embed.weight when tie_embeddings
    (docs/MODEL_FORMAT.md)."""
    h = final_norm(h)
    weight = model.tok_embed.weight if model.config.tie_embeddings else model.lm_head.weight
    return h @ weight.t()


class FeedForward(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.up = nn.Linear(cfg.d_model, cfg.d_ffn)
        self.down = nn.Linear(cfg.d_ffn, cfg.d_model)
        # F.gelu's default is the exact erf form, 0.5 u (1 + erf(u / sqrt 2)).
        self.activation = F.gelu if cfg.activation == "gelu" else F.relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.activation(self.up(x)))


class Block(nn.Module):
    """Pre-norm: h += o_proj(attn(attn_norm(h))); h += down(act(up(ffn_norm(h))))."""

    def __init__(self, cfg: ModelConfig, attention: Optional[nn.Module] = None, layer: int = 0):
        """`attention` replaces the kind's module named by the config (the seq2seq encoder
        passes its bidirectional one); `layer` is the block's 0-based index."""
        super().__init__()
        # nn.LayerNorm: biased variance, eps inside the square root (docs/MODEL_FORMAT.md "The
        # attention kinds").
        self.attn_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
        self.attn = attention if attention is not None else attention_module(cfg, layer)
        self.ffn_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
        self.ffn = FeedForward(cfg)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = h + self.attn(self.attn_norm(h))
        return h + self.ffn(self.ffn_norm(h))

    def step(self, h: torch.Tensor, state: LayerState, positions: torch.Tensor):
        attn_out, state = self.attn.step(self.attn_norm(h), state, positions)
        h = h + attn_out
        return h + self.ffn(self.ffn_norm(h)), state


class LanguageModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.tok_embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg, layer=i) for i in range(cfg.n_layers))
        self.final_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
        if not cfg.tie_embeddings:
            self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def embed(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return embed_tokens(self.config, self.tok_embed, tokens, positions)

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return output_logits(self, self.final_norm, h)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Parallel form: tokens [B, T] (or [T]) from position 0 -> logits [B, T, V] (or [T, V]);
        row t is the prediction after tokens[..t]."""
        squeeze = tokens.dim() == 1
        if squeeze:
            tokens = tokens.unsqueeze(0)
        positions = torch.arange(tokens.shape[1], device=tokens.device).expand_as(tokens)
        h = self.embed(tokens, positions)
        for layer in self.layers:
            h = layer(h)
        logits = self.logits(h)
        return logits[0] if squeeze else logits

    def new_state(self, batch: int = 1) -> List[LayerState]:
        """Empty per-layer states (all zeros) in the model's dtype and device."""
        weight = self.tok_embed.weight
        return [layer.attn.new_state(batch, weight.dtype, weight.device) for layer in self.layers]

    def step(self, tokens: torch.Tensor, state: List[LayerState], positions: torch.Tensor):
        """Recurrent form: one token per batch row. tokens [B], positions [B] (how many tokens each
        row's state has absorbed) -> (logits [B, V], new state)."""
        h = self.embed(tokens, positions)
        new_state = []
        for layer, layer_state in zip(self.layers, state):
            h, layer_state = layer.step(h, layer_state, positions)
            new_state.append(layer_state)
        return self.logits(h), new_state

    def forward_recurrent(self, tokens: torch.Tensor,
                          state: Optional[List[LayerState]] = None, start: int = 0):
        """Feeds tokens [B, T] (or [T]) one at a time through step(); returns (logits, state)."""
        squeeze = tokens.dim() == 1
        if squeeze:
            tokens = tokens.unsqueeze(0)
        if state is None:
            state = self.new_state(tokens.shape[0])
        rows = []
        for t in range(tokens.shape[1]):
            positions = torch.full((tokens.shape[0],), start + t, dtype=torch.long,
                                   device=tokens.device)
            logits, state = self.step(tokens[:, t], state, positions)
            rows.append(logits)
        logits = torch.stack(rows, dim=1)
        return (logits[0] if squeeze else logits), state
