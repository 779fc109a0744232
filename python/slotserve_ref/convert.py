"""Converts a PyTorch checkpoint into a slotserve model directory (docs/MODEL_FORMAT.md; an
encoder–decoder
checkpoint, whose config says "format": "slotserve-seq2seq", into a docs/ARCHITECTURE.md
"Encoder–decoder models" directory).

The checkpoint is a torch.save of a dict with "config" (the config.json dict) and the model's
state_dict under "state_dict" (or "model", as train.py writes it). Parameter names already are
the safetensors names, so conversion only validates, rounds to --dtype and writes. --dtype int8
writes the int8 weight-only format (slotserve_ref/int8_weights.py: I8 matrices with per-row F32
scales, everything else F32), for decoder-only and encoder–decoder checkpoints alike.

  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.convert CHECKPOINT --out DIR \
      [--dtype f32|f16|bf16|int8] [--tokenizer tokenizer.model]
"""

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence, Union

import torch

from .config import ConfigError, ModelConfig
from .model import LanguageModel
from .model_dir import (WEIGHT_DTYPES, ModelDirError, build_from_tensors, check_tensors,
                        save_model_dir)
from .seq2seq_config import FORMAT_NAME as SEQ2SEQ_FORMAT
from .seq2seq_config import Seq2seqConfig
from .seq2seq_model import Seq2seqModel
from .seq2seq_model_dir import check_seq2seq_tensors, save_seq2seq_model_dir

STATE_DICT_KEYS = ("state_dict", "model")


def load_checkpoint(path: Path) -> Union[LanguageModel, Seq2seqModel]:
    """Builds the LanguageModel a checkpoint describes, refusing anything that is not exactly
    the docs/MODEL_FORMAT.md tensor set. It holds float64 weights (exact for F32/F16/BF16 and
    float64
    checkpoints), so writing rounds each weight once, straight to the target dtype."""
    checkpoint = torch.load(path, map_location="cpu")
    if not isinstance(checkpoint, dict) or "config" not in checkpoint:
        raise ModelDirError(f"{path}: expected a dict with keys 'config' and 'state_dict', got "
                            f"{type(checkpoint).__name__}"
                            f"{' with keys ' + ', '.join(map(str, checkpoint)) if isinstance(checkpoint, dict) else ''}")
    key = next((k for k in STATE_DICT_KEYS if k in checkpoint), None)
    if key is None:
        raise ModelDirError(f"{path}: no 'state_dict' (or 'model') entry; keys are "
                            f"{', '.join(map(str, checkpoint))}")
    state_dict = checkpoint[key]
    if isinstance(checkpoint["config"], dict) and \
            checkpoint["config"].get("format") == SEQ2SEQ_FORMAT:
        # An encoder–decoder checkpoint (train_seq2seq.py): the docs/ARCHITECTURE.md
        # "Encoder–decoder models" tensor set.
        cfg = Seq2seqConfig.from_dict(checkpoint["config"], source=f"{path}: config")
        check_seq2seq_tensors(cfg, state_dict, f"{path}: {key}")
        return build_from_tensors(Seq2seqModel, cfg, state_dict, torch.float64)
    cfg = ModelConfig.from_dict(checkpoint["config"], source=f"{path}: config")
    check_tensors(cfg, state_dict, f"{path}: {key}")
    return build_from_tensors(LanguageModel, cfg, state_dict, torch.float64)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Convert a checkpoint ({'config', 'state_dict'}) into a model directory.")
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="model directory to write")
    parser.add_argument("--dtype", choices=sorted(WEIGHT_DTYPES), default="f32",
                        help="weight dtype in model.safetensors (default f32; int8: "
                             "weight-only, per-row scales)")
    parser.add_argument("--tokenizer", type=Path, help="SentencePiece model copied to "
                                                       "tokenizer.model")
    args = parser.parse_args(argv)
    try:
        if args.tokenizer is not None and not args.tokenizer.is_file():
            raise ModelDirError(f"--tokenizer {args.tokenizer}: no such file")
        model = load_checkpoint(args.checkpoint)
        save = save_seq2seq_model_dir if isinstance(model, Seq2seqModel) else save_model_dir
        save(model, args.out, dtype=args.dtype, tokenizer=args.tokenizer)
    except (ConfigError, ModelDirError, OSError) as e:
        print(f"convert: {e}", file=sys.stderr)
        return 1
    cfg = model.config
    kind = (f"{cfg.decoder.attention.kind} self, {cfg.cross_attention.kind} cross"
            if isinstance(model, Seq2seqModel) else cfg.attention.kind)
    print(f"convert: wrote {args.out} ({kind}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, {args.dtype})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
