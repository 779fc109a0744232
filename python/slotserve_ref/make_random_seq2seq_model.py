"""Writes a random-initialised encoder–decoder model directory (docs/ARCHITECTURE.md
"Encoder–decoder models"): small test models
and the golden data's models.

  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.make_random_seq2seq_model \
      --config '{"vocab_size": 100, "cross_attention": {"kind": "srformer"}}' --seed 1 --out DIR \
      [--dtype f32|f16|bf16|int8] [--tokenizer tokenizer.model] [--vocab-size N] [--gain 1.0]

--config is JSON text or a path to a JSON file, possibly partial: missing keys take the
defaults of slotserve_ref.seq2seq_config.merge_seq2seq_config_dict (decoder self-attention abc,
cross softmax unless named); unknown keys are still an error.
"""

import sys
from typing import Optional, Sequence

from .init import randomize_
from .make_random_model import run_random_model_cli
from .seq2seq_config import Seq2seqConfig, merge_seq2seq_config_dict
from .seq2seq_model import Seq2seqModel
from .seq2seq_model_dir import SEQ2SEQ_WEIGHT_DTYPES, save_seq2seq_model_dir


def build_random_seq2seq_model(overrides: dict, seed: int, gain: float = 1.0) -> Seq2seqModel:
    cfg = Seq2seqConfig.from_dict(merge_seq2seq_config_dict(overrides), source="--config")
    return randomize_(Seq2seqModel(cfg).double(), seed=seed, gain=gain)


def main(argv: Optional[Sequence[str]] = None) -> int:
    return run_random_model_cli(
        argv, "make_random_seq2seq_model", "Write a random-initialised seq2seq model directory.",
        build_random_seq2seq_model, save_seq2seq_model_dir,
        lambda cfg: f"{cfg.decoder.attention.kind} self, {cfg.cross_attention.kind} cross",
        dtypes=SEQ2SEQ_WEIGHT_DTYPES)


if __name__ == "__main__":
    sys.exit(main())
