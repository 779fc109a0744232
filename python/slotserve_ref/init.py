"""Random initialisation for untrained models (demo, tests, golden data).

Scales are chosen so that activations stay O(1) through the network: every Linear weight has
std gain/sqrt(fan_in), the token embedding has std 1/sqrt(E) (so with embed_scale = sqrt(E) the
input has unit variance and tied logits have std ~1), biases and norm parameters are small but
non-zero so that every term of the math is exercised. Attention-specific parameters get scales
that make attention clearly non-uniform.
"""

import math

import torch



@torch.no_grad()
def randomize_(model: torch.nn.Module, seed: int, gain: float = 1.0,
               bias_std: float = 0.1) -> torch.nn.Module:
    """Overwrites every parameter of `model` (a LanguageModel or a Seq2seqModel) in place,
    deterministically from `seed`."""
    cfg = model.config
    gen = torch.Generator().manual_seed(seed)

    def normal(shape, std, mean=0.0):
        return torch.randn(shape, generator=gen, dtype=torch.float64) * std + mean

    for name, param in sorted(model.named_parameters()):
        shape = tuple(param.shape)
        leaf = name.rsplit(".", 1)[-1]
        if name == "tok_embed.weight":
            value = normal(shape, 1.0 / math.sqrt(cfg.d_model))
        elif "norm." in name:
            value = normal(shape, 0.1, mean=1.0 if leaf == "weight" else 0.0)
        elif leaf == "rfa_random":
            value = normal(shape, 1.0)  # W ~ N(0, I) as in random Fourier features
        elif leaf == "rfa_sigma":
            value = torch.exp(normal(shape, 0.2))  # positive, ~1 (tau folded in)
        elif name.endswith("gate_proj.bias"):
            # Sigmoid gates start mostly open (g ~ 0.9): the memory lasts tens of tokens
            # instead of halving every step.
            value = normal(shape, 0.3, mean=2.5)
        elif name.endswith("gate_proj.weight"):
            value = normal(shape, 0.5 * gain / math.sqrt(shape[1]))
        elif leaf == "raf_leak":
            value = 0.3 + 0.6 * torch.rand(shape, generator=gen, dtype=torch.float64)  # in (0.3, 0.9)
        elif leaf == "raf_thre":
            # SRformer's spike threshold: near the size of a raf_proj output, so that some
            # entries of mem cross it and others do not.
            value = torch.exp(normal(shape, 0.2))
        elif name.endswith("filter.weight"):
            value = normal(shape, 0.5 / shape[0], mean=1.0 / shape[0])  # ~ a moving average
        elif leaf == "luna_p":
            value = normal(shape, 1.0)
        elif leaf == "linformer_proj":
            # ABC's linformer control: K~ = Σ_t W[:, t] ⊗ k_t grows like sqrt(t) * 0.5 |k|,
            # so the slot scores spread out within a few tokens.
            value = normal(shape, 0.5)
        elif leaf == "weight":
            value = normal(shape, gain / math.sqrt(shape[1]))
        elif leaf == "bias":
            value = normal(shape, bias_std)
        else:
            raise ValueError(f"randomize_: no initialisation rule for parameter {name}")
        param.copy_(value.to(param.dtype))
    return model
