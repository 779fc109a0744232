"""Small models of every abc memory control (docs/ABC_CONTROLS.md), shared by the
test_abc_controls_* tests. Kept apart from small_models.VARIANTS so that the tests of the other
kinds (and their independently written tensor tables) are unchanged.

Sizes: 17-token sequences (test_abc_controls_forms.LENGTH). The window has 9 rows, so its ring
wraps while two layers still reach token 1 from the last token (2 x 8 >= 16); compressive holds
5 x 4 = 20 positions and linformer 20, both beyond 17.
"""

import torch

from slotserve_ref.config import ModelConfig, merge_config_dict
from slotserve_ref.init import randomize_
from slotserve_ref.model import LanguageModel

CONTROL_VARIANTS = {
    "window": {"kind": "abc", "slots": 9, "control": "window"},
    "linformer": {"kind": "abc", "slots": 5, "control": "linformer", "max_positions": 20},
    "compressive": {"kind": "abc", "slots": 5, "control": "compressive", "stride": 4},
    "random": {"kind": "abc", "slots": 5, "control": "random", "seed": 12345},
    "relu": {"kind": "abc", "slots": 5, "control": "learned", "activation": "relu"},
    "sigmoid": {"kind": "abc", "slots": 5, "activation": "sigmoid"},
}

# position_offset 2: the controls' positions must not include it (they count the request's
# tokens from 0).
BASE = {"vocab_size": 23, "d_model": 12, "n_heads": 3, "n_layers": 2, "d_ffn": 20,
        "embed_scale": 3.0, "position_offset": 2}


def control_config(name: str, **attention) -> ModelConfig:
    """The variant's config; `attention` overrides keys of its attention object."""
    overrides = dict(BASE, attention=dict(CONTROL_VARIANTS[name], **attention))
    return ModelConfig.from_dict(merge_config_dict(overrides), source=name)


def control_model(name: str, seed: int = 0, dtype=torch.float64, **attention) -> LanguageModel:
    model = LanguageModel(control_config(name, **attention))
    return randomize_(model, seed=seed).to(dtype).eval()


def random_tokens(vocab: int, seed: int, shape) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))
