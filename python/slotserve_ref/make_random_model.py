"""Writes a random-initialised model directory: the server's demo model and small test models.

  PYTHONPATH=python /usr/bin/python3 -m slotserve_ref.make_random_model \
      --config '{"vocab_size": 1000, "attention": {"kind": "rfa"}}' --seed 1 --out DIR \
      [--dtype f32|f16|bf16|int8] [--tokenizer tokenizer.model] [--vocab-size N] [--gain 1.0]

--config is JSON text or a path to a JSON file. It may be partial: missing keys take the
defaults of the attention kind it names (slotserve_ref.config.default_config_dict); unknown keys
are still an error. --vocab-size overrides vocab_size (e.g. the piece count of the tokenizer,
which this Python cannot read: there is no sentencepiece module). The weights come from
slotserve_ref.init.randomize_ and depend only on the config and --seed.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

import torch

from .config import ConfigError, ModelConfig, merge_config_dict
from .init import randomize_
from .model import LanguageModel
from .model_dir import WEIGHT_DTYPES, ModelDirError, save_model_dir


def parse_config_argument(text: str) -> dict:
    """--config: JSON text when it starts with '{', otherwise a path to a JSON file."""
    if text.lstrip().startswith("{"):
        source = "--config"
    else:
        source = text
        try:
            text = Path(text).read_text()
        except OSError as e:
            raise ConfigError(f"--config {source}: cannot read: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"--config {source}: not valid JSON: {e}") from None


def build_random_model(overrides: dict, seed: int, gain: float = 1.0) -> LanguageModel:
    cfg = ModelConfig.from_dict(merge_config_dict(overrides), source="--config")
    return randomize_(LanguageModel(cfg).double(), seed=seed, gain=gain)


def run_random_model_cli(argv: Optional[Sequence[str]], prog: str, description: str,
                         build: Callable, save: Callable, describe: Callable,
                         dtypes: Iterable[str] = WEIGHT_DTYPES) -> int:
    """The command line shared by the decoder-only and the seq2seq random-model tools: `build`
    (overrides, seed, gain) -> model, `save` (model, out, dtype=, tokenizer=), `describe`
    (config) -> the kinds named in the closing line, `dtypes` the --dtype choices."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--config", default="{}",
                        help="config JSON text or file, possibly partial (default: all defaults)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dtype", choices=sorted(dtypes), default="f32",
                        help="weight dtype in model.safetensors (default f32)")
    parser.add_argument("--tokenizer", type=Path, help="SentencePiece model copied to "
                                                       "tokenizer.model")
    parser.add_argument("--vocab-size", type=int, help="overrides the config's vocab_size")
    parser.add_argument("--gain", type=float, default=1.0,
                        help="scale of the Linear weights relative to 1/sqrt(fan_in)")
    args = parser.parse_args(argv)
    try:
        overrides = parse_config_argument(args.config)
        if not isinstance(overrides, dict):
            raise ConfigError(f"--config must be a JSON object, got {json.dumps(overrides)}")
        if args.vocab_size is not None:
            overrides["vocab_size"] = args.vocab_size
        if args.tokenizer is not None and not args.tokenizer.is_file():
            raise ModelDirError(f"--tokenizer {args.tokenizer}: no such file")
        torch.set_num_threads(1)
        model = build(overrides, args.seed, args.gain)
        save(model, args.out, dtype=args.dtype, tokenizer=args.tokenizer)
    except (ConfigError, ModelDirError, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    cfg = model.config
    print(f"{prog}: wrote {args.out} ({describe(cfg)}, vocab {cfg.vocab_size}, "
          f"{sum(p.numel() for p in model.parameters())} parameters, {args.dtype})")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    return run_random_model_cli(argv, "make_random_model",
                                "Write a random-initialised model directory.",
                                build_random_model, save_model_dir,
                                lambda cfg: cfg.attention.kind)


if __name__ == "__main__":
    sys.exit(main())
