"""The PyTorch reference of the engine's int8 activations (--int8-activations; C++:
kernels/int8_activation_blocks.h).

With int8 activations, every linear layer whose weight matrix is stored int8 quantises its input
rows before the product: each row is cut into blocks of 32 values (the last one shorter), and a
block with amax = max |x| becomes

  d = float32(amax) / 127                (its scale)
  q = round_half_even(x * (127 / amax))  in float32, clamped to [-127, 127]; an all-zero block
                                         has q = 0

so the layer computes (q * d) @ W_deq^T: the C++ kernels sum q_w * q_x as integers per block and
scale by d and the weight row's scale, which is the same number in exact arithmetic. This module
applies that rounding to the inputs of every matrix product of a loaded model ("fake
quantisation"): the inputs of every nn.Linear with a 2-D weight (all of them are stored int8 by
int8_weights.py) and the final norm's output, which feeds the output layer (the tied
tok_embed.weight, an int8 matrix too); not Luna's pq_proj and SRformer's raf_proj, which the
engine does not run over activations (CONSTANT_INPUT_LINEARS). Inputs are rounded in float32,
as the engine holds them; the product stays in the model's dtype (float64 for the golden data).
"""

from __future__ import annotations

import torch
from torch import nn

BLOCK = 32


def quantise_blocks(x: torch.Tensor) -> torch.Tensor:
    """x rounded to int8 per block of BLOCK values along the last dimension, returned as q * d
    in x's dtype."""
    width = x.shape[-1]
    x32 = x.to(torch.float32)
    pad = (-width) % BLOCK
    padded = torch.nn.functional.pad(x32, (0, pad)) if pad else x32
    blocks = padded.reshape(*padded.shape[:-1], -1, BLOCK)
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    inverse = torch.where(amax > 0, torch.tensor(127.0, dtype=torch.float32) / amax,
                          torch.zeros_like(amax))
    q = torch.clamp(torch.round(blocks * inverse), -127, 127)  # torch.round: ties to even
    scale = amax / torch.tensor(127.0, dtype=torch.float32)
    rounded = (q.to(x.dtype) * scale.to(x.dtype)).reshape(*padded.shape)
    return rounded[..., :width]


# Linear layers the engine does not run as a linear op over activations, so their inputs are
# never rounded: Luna's pq_proj only ever multiplies the learned luna_p, a constant the engine
# computes once at load with the dequantised weights; SRformer's raf_proj is a [d, d] product
# inside the cross step, whose dequantised weights the engine keeps in F32.
CONSTANT_INPUT_LINEARS = ("pq_proj", "raf_proj")


def use_int8_activations_(model: nn.Module) -> nn.Module:
    """Makes every matrix product of `model` (a decoder-only LanguageModel or an encoder–decoder
    Seq2seqModel loaded from an int8 directory) see int8-rounded inputs, but those of
    CONSTANT_INPUT_LINEARS; returns the model. The output layer reads the final norm of the
    model (of its decoder, for Seq2seqModel)."""
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] not in CONSTANT_INPUT_LINEARS:
            module.register_forward_pre_hook(lambda _m, args: (quantise_blocks(args[0]),))
    decoder = getattr(model, "decoder", model)  # Seq2seqModel: the decoder's final norm
    decoder.final_norm.register_forward_hook(lambda _m, _args, out: quantise_blocks(out))
    return model
