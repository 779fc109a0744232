"""The encoder–decoder model of docs/ARCHITECTURE.md "Encoder–decoder models", in a parallel
(teacher-forced) form for training and
a recurrent form that mirrors the serving engine: the encoder and the cross-memory build run
once per request (the prefill), then the decoder steps one token at a time with its
self-attention state (§3 kinds, the decoder-only modules reused as they are) and, for
srformer, an explicit cross state.

Parameter names are exactly the docs/ARCHITECTURE.md "Encoder–decoder models" tensor names
(tok_embed, encoder.layers.{i}.*,
encoder.final_norm, decoder.layers.{i}.{attn,cross,...}, decoder.final_norm, lm_head), so
state_dict() is the content of model.safetensors without renaming.
"""

import math
from typing import Dict, List, Optional

import torch
from torch import nn

from .attention_softmax import SoftmaxAttention
from .cross_attention_abc import AbcCrossAttention
from .cross_attention_base import Memory
from .cross_attention_luna import LunaCrossAttention
from .cross_attention_rfa import RfaCrossAttention
from .cross_attention_softmax import SoftmaxCrossAttention
from .cross_attention_srformer import SrformerCrossAttention
from .heads import merge_heads
from .model import Block, embed_tokens, output_logits
from .seq2seq_config import Seq2seqConfig

CROSS_ATTENTION_CLASSES = {
    "softmax": SoftmaxCrossAttention,
    "abc": AbcCrossAttention,
    "rfa": RfaCrossAttention,
    "luna": LunaCrossAttention,
    "srformer": SrformerCrossAttention,
}

DecoderLayerState = Dict[str, Dict[str, torch.Tensor]]  # {"self": §3 state, "cross": ...}


class BidirectionalSoftmaxAttention(SoftmaxAttention):
    """The encoder's attention: softmax over every source position, no mask (docs/ARCHITECTURE.md
    "Encoder–decoder models")."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self._project(x)
        scores = torch.einsum("bthd,bjhd->bhtj", q, k) / math.sqrt(self.head_dim)
        out = torch.einsum("bhtj,bjhd->bthd", torch.softmax(scores, dim=-1), v)
        return self.o_proj(merge_heads(out))


class Encoder(nn.Module):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__()
        view = cfg.encoder_view()
        self.layers = nn.ModuleList(Block(view, BidirectionalSoftmaxAttention(view))
                                    for _ in range(cfg.encoder.n_layers))
        self.final_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            h = layer(h)
        return self.final_norm(h)


class DecoderBlock(Block):
    """h += o(self(attn_norm h)); h += cross.o(cross(cross_norm h, X)); h += ffn(ffn_norm h)."""

    def __init__(self, cfg: Seq2seqConfig, layer: int = 0):
        """`layer`: the decoder layer's 0-based index (abc's random control draws by it)."""
        super().__init__(cfg.decoder_view(), layer=layer)
        self.cross_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)
        self.cross = CROSS_ATTENTION_CLASSES[cfg.cross_attention.kind](cfg)

    def forward(self, h: torch.Tensor, memory: Memory) -> torch.Tensor:
        h = h + self.attn(self.attn_norm(h))
        h = h + self.cross(self.cross_norm(h), memory)
        return h + self.ffn(self.ffn_norm(h))

    def step(self, h: torch.Tensor, state: DecoderLayerState, positions: torch.Tensor,
             memory: Memory):
        self_out, self_state = self.attn.step(self.attn_norm(h), state["self"], positions)
        h = h + self_out
        cross_out, cross_state = self.cross.step(self.cross_norm(h), memory, state["cross"],
                                                 positions)
        h = h + cross_out
        return h + self.ffn(self.ffn_norm(h)), {"self": self_state, "cross": cross_state}


class Decoder(nn.Module):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__()
        self.layers = nn.ModuleList(DecoderBlock(cfg, i) for i in range(cfg.decoder.n_layers))
        self.final_norm = nn.LayerNorm(cfg.d_model, eps=cfg.norm_eps)


class Seq2seqModel(nn.Module):
    def __init__(self, cfg: Seq2seqConfig):
        super().__init__()
        self.config = cfg
        self.tok_embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        if not cfg.tie_embeddings:
            self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def _embed(self, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        return embed_tokens(self.config, self.tok_embed, tokens, positions.expand_as(tokens))

    def encode(self, source: torch.Tensor) -> torch.Tensor:
        """source [B, k] (every row the same length; positions from 0) -> X [B, k, E]."""
        limit = self.config.encoder.max_source_tokens
        if not 1 <= source.shape[1] <= limit:
            raise ValueError(f"source of {source.shape[1]} tokens; expected 1 to "
                             f"encoder.max_source_tokens ({limit})")
        return self.encoder(self._embed(source))

    def build_memory(self, encoded: torch.Tensor) -> List[Memory]:
        """The request's cross memory, one per decoder layer (what the prefill stores)."""
        return [layer.cross.build_memory(encoded) for layer in self.decoder.layers]

    def prefill_source(self, source: torch.Tensor) -> List[Memory]:
        return self.build_memory(self.encode(source))

    def forward(self, source: torch.Tensor, decoder_input: torch.Tensor) -> torch.Tensor:
        """Parallel (teacher-forced) form: source [B, k], decoder_input [B, T] (decoder_start_id
        then the target tokens) -> logits [B, T, V]; row t predicts the token after
        decoder_input[..t]."""
        memory = self.prefill_source(source)
        h = self._embed(decoder_input)
        for layer, layer_memory in zip(self.decoder.layers, memory):
            h = layer(h, layer_memory)
        return output_logits(self, self.decoder.final_norm, h)

    def new_state(self, batch: int = 1) -> List[DecoderLayerState]:
        """Empty decoder states (self and cross parts), all zeros but srformer's segment."""
        weight = self.tok_embed.weight
        args = (batch, weight.dtype, weight.device)
        return [{"self": layer.attn.new_state(*args), "cross": layer.cross.new_state(*args)}
                for layer in self.decoder.layers]

    def step(self, tokens: torch.Tensor, state: List[DecoderLayerState],
             positions: torch.Tensor, memory: List[Memory]):
        """Recurrent form: tokens [B] at decoder positions [B] -> (logits [B, V], new state)."""
        h = embed_tokens(self.config, self.tok_embed, tokens, positions)
        new_state = []
        for layer, layer_state, layer_memory in zip(self.decoder.layers, state, memory):
            h, layer_state = layer.step(h, layer_state, positions, layer_memory)
            new_state.append(layer_state)
        return output_logits(self, self.decoder.final_norm, h), new_state

    def decode_recurrent(self, source: torch.Tensor, decoder_input: torch.Tensor,
                         memory: Optional[List[Memory]] = None):
        """Prefill the source, then feed decoder_input [B, T] one token at a time through
        step(); returns (logits [B, T, V], final state)."""
        if memory is None:
            memory = self.prefill_source(source)
        state = self.new_state(decoder_input.shape[0])
        rows = []
        for t in range(decoder_input.shape[1]):
            positions = torch.full((decoder_input.shape[0],), t, dtype=torch.long,
                                   device=decoder_input.device)
            logits, state = self.step(decoder_input[:, t], state, positions, memory)
            rows.append(logits)
        return torch.stack(rows, dim=1), state

    @torch.no_grad()
    def greedy(self, source: torch.Tensor, max_new_tokens: int) -> List[List[int]]:
        """Greedy decoding from decoder_start_id until eos_id or max_new_tokens (each row stops
        at its own eos; the eos itself is not returned)."""
        cfg = self.config
        memory = self.prefill_source(source)
        state = self.new_state(source.shape[0])
        tokens = torch.full((source.shape[0],), cfg.decoder_start_id, dtype=torch.long)
        out: List[List[int]] = [[] for _ in range(source.shape[0])]
        done = [False] * source.shape[0]
        for t in range(max_new_tokens):
            logits, state = self.step(tokens, state, torch.full_like(tokens, t), memory)
            tokens = logits.argmax(dim=-1)
            for row, token in enumerate(tokens.tolist()):
                done[row] = done[row] or token == cfg.eos_id
                if not done[row]:
                    out[row].append(token)
            if all(done):
                break
        return out
