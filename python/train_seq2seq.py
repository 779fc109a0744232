#!/usr/bin/env python3
"""Trains the reference encoder–decoder model (slotserve_ref.seq2seq_model, its parallel
teacher-forced form) on a parallel corpus of token ids, on the CPU: cross-entropy, AdamW.

The corpus is two files of the ids format evaluation.load_ids reads (one sequence per line, ids
separated by spaces): line i of --source and line i of --target are a pair. Sources are used as
given (a text source's preparation appends eos_id, docs/ARCHITECTURE.md "Encoder–decoder models");
each target is learned as
decoder input [decoder_start_id, y_0 .. y_n-1] predicting [y_0 .. y_n-1, eos_id].

A batch draws pairs whose sources have the same length (the reference's encoder and cross
kinds take one source length per batch: no padding inside the source, so every cross kind sees
exactly what serving sees); targets are padded after eos and the padding is not scored (the
decoder is causal, so padding never reaches a scored position).

  PYTHONPATH=python /usr/bin/python3 python/train_seq2seq.py --source train.src.ids \
      --target train.tgt.ids --config '{"vocab_size": 8000, "cross_attention": {"kind": "abc",
      "slots": 32}}' --steps 2000 --out build-training/mt

Output directory (--out): train.log (one line per logged step), summary.json (the run's
settings, parameter count, config and training seconds), checkpoint.pt ({"config",
"model"}: what slotserve_ref.convert reads) and model/ (the converted F32 model directory).

Long runs can be stopped and continued: with --resume-every N the run keeps resume.pt in --out
(weights, AdamW state, the batch sampler's random state, the step and the losses so far),
written every N steps and when --stop-after ends the run early; started again with the same
arguments, it continues from there and ends with the same weights as a run never stopped. A
resume point written with other settings is refused.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluation import load_ids  # noqa: E402
from slotserve_ref.init import randomize_  # noqa: E402
from slotserve_ref.make_random_model import parse_config_argument  # noqa: E402
from slotserve_ref.seq2seq_config import Seq2seqConfig, merge_seq2seq_config_dict  # noqa: E402
from slotserve_ref.seq2seq_model import Seq2seqModel  # noqa: E402
from slotserve_ref.seq2seq_model_dir import save_seq2seq_model_dir  # noqa: E402

Pair = Tuple[List[int], List[int]]
IGNORE = -100  # F.cross_entropy's ignore_index: padding after eos is not scored


def load_pairs(source_path: Path, target_path: Path) -> List[Pair]:
    sources, targets = load_ids(source_path), load_ids(target_path)
    if len(sources) != len(targets):
        raise ValueError(f"{source_path} has {len(sources)} sequences but {target_path} has "
                         f"{len(targets)}; expected one target per source")
    return list(zip(sources, targets))


class PairBatcher:
    """Random batches of pairs sharing one source length, drawn in proportion to how many pairs
    have each length."""

    def __init__(self, pairs: Sequence[Pair], cfg: Seq2seqConfig, seed: int):
        self.cfg = cfg
        self.by_length: Dict[int, List[Pair]] = defaultdict(list)
        for source, target in pairs:
            if not 1 <= len(source) <= cfg.encoder.max_source_tokens:
                raise ValueError(f"a source of {len(source)} tokens; expected 1 to "
                                 f"encoder.max_source_tokens ({cfg.encoder.max_source_tokens})")
            self.by_length[len(source)].append((source, target))
        self.lengths = sorted(self.by_length)
        self.weights = [len(self.by_length[n]) for n in self.lengths]
        self.rng = random.Random(seed)

    def sample(self, batch: int):
        """-> (source [B, k], decoder input [B, T], labels [B, T])."""
        length = self.rng.choices(self.lengths, weights=self.weights)[0]
        chosen = [self.rng.choice(self.by_length[length]) for _ in range(batch)]
        return make_batch(chosen, self.cfg)


def make_batch(pairs: Sequence[Pair], cfg: Seq2seqConfig):
    width = max(len(target) for _, target in pairs) + 1
    inputs = torch.full((len(pairs), width), cfg.eos_id, dtype=torch.long)
    labels = torch.full((len(pairs), width), IGNORE, dtype=torch.long)
    for row, (_, target) in enumerate(pairs):
        inputs[row, :len(target) + 1] = torch.tensor([cfg.decoder_start_id] + target)
        labels[row, :len(target) + 1] = torch.tensor(target + [cfg.eos_id])
    source = torch.tensor([source for source, _ in pairs], dtype=torch.long)
    return source, inputs, labels


def loss_of(model: Seq2seqModel, source, inputs, labels) -> torch.Tensor:
    logits = model(source, inputs)
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)


def new_model(cfg: Seq2seqConfig, seed: int) -> Seq2seqModel:
    """Random weights (slotserve_ref.init), float32; RFA's random projections stay fixed, as
    random features are sampled, not learned."""
    model = randomize_(Seq2seqModel(cfg).double(), seed=seed).float()
    for name, param in model.named_parameters():
        if name.endswith("rfa_random"):
            param.requires_grad_(False)
    return model


def learning_rate(step: int, steps: int, lr: float, warmup: int, decay: bool) -> float:
    """Linear warm-up over `warmup` steps, then constant, or (decay) cosine to 0 at `steps`."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if not decay:
        return lr
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def disable_srformer_recurrence_(model: Seq2seqModel) -> None:
    """Segmented-only SRformer (the paper's ablation without the recurrent attention function):
    every layer's cross.raf_proj is set to zero and frozen, so x = 0, mem stays 0, y = -1 and
    R = relu(y) = 0 at every step: out = softmax over the current segment only. The model
    directory stays an ordinary "srformer" one (zero raf_proj), so the C++ engine serves the
    same function with no new code."""
    if model.config.cross_attention.kind != "srformer":
        raise ValueError("--no-srformer-recurrence needs cross_attention.kind srformer")
    for name, param in model.named_parameters():
        if ".cross.raf_proj." in name:
            with torch.no_grad():
                param.zero_()
            param.requires_grad_(False)


@dataclass
class ResumePoint:
    """Where and how often train() saves what it needs to continue (see the module doc).
    `settings` are the run's arguments, compared on resume; `seconds` gives the wall seconds
    trained so far, saved with the point; `saved` is the point found at start, if any."""
    path: Path
    every: int
    settings: dict
    seconds: Callable[[], float] = lambda: 0.0
    saved: Optional[dict] = None


def save_resume_point(point: ResumePoint, step: int, model, optimizer, batcher,
                      losses: List[float]) -> None:
    partial = point.path.with_name(point.path.name + ".partial")
    torch.save({"step": step, "settings": point.settings, "model": model.state_dict(),
                "optimizer": optimizer.state_dict(), "sampler": batcher.rng.getstate(),
                "torch_rng": torch.get_rng_state(), "losses": list(losses),
                "seconds": point.seconds()}, partial)
    os.replace(partial, point.path)  # a run killed while saving keeps the previous point


def load_resume_point(path: Path) -> Optional[dict]:
    return torch.load(path) if path.exists() else None


def train(model: Seq2seqModel, pairs: Sequence[Pair], steps: int, batch: int, lr: float,
          weight_decay: float = 0.01, seed: int = 0, log=None, warmup: int = 0,
          decay: bool = False, resume: Optional[ResumePoint] = None,
          stop_after: Optional[int] = None) -> List[float]:
    """AdamW on teacher-forced cross-entropy; returns the loss of every step trained so far
    (fewer than `steps` when `stop_after` ended this run first). With `resume`, continues from
    its point when one exists and saves one every `resume.every` steps and at an early end."""
    batcher = PairBatcher(pairs, model.config, seed)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr,
                                  weight_decay=weight_decay)
    first, losses = 0, []
    saved = resume.saved if resume is not None else None
    if saved is not None:
        if saved["settings"] != resume.settings:
            raise ValueError(f"{resume.path} was written by a run with settings "
                             f"{saved['settings']}; this run has {resume.settings}. Remove it "
                             f"to start over")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        batcher.rng.setstate(saved["sampler"])
        torch.set_rng_state(saved["torch_rng"])
        first, losses = saved["step"], list(saved["losses"])
    last = steps if stop_after is None else min(steps, first + stop_after)
    model.train()
    for step in range(first, last):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, lr, warmup, decay)
        loss = loss_of(model, *batcher.sample(batch))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if log is not None:
            log(step, loss.item())
        done = step + 1
        if resume is not None and done < steps and (done == last or done % resume.every == 0):
            save_resume_point(resume, done, model, optimizer, batcher, losses)
    model.eval()
    return losses


def keep_log_before(log_path: Path, step: int) -> None:
    """Drops the lines a killed run logged after its last resume point (they are trained again)."""
    if log_path.exists():
        lines = log_path.read_text().splitlines(keepends=True)
        log_path.write_text("".join(line for line in lines if int(line.split()[1]) < step))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="source ids, one per line")
    parser.add_argument("--target", type=Path, required=True, help="target ids, one per line")
    parser.add_argument("--config", default="{}", help="seq2seq config JSON text or file, "
                        "possibly partial (slotserve_ref.seq2seq_config defaults)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=0, help="linear warm-up steps (default 0)")
    parser.add_argument("--cosine-decay", action="store_true",
                        help="after warm-up, cosine decay of the rate to 0 at --steps")
    parser.add_argument("--resume-every", type=int, default=0, help="keep a resume point "
                        "(--out/resume.pt) every N steps and continue from it when started "
                        "again (default 0: none)")
    parser.add_argument("--stop-after", type=int, default=None, help="train at most N steps "
                        "in this run, then save the resume point and exit (needs "
                        "--resume-every)")
    parser.add_argument("--no-srformer-recurrence", action="store_true",
                        help="srformer cross: zero and freeze raf_proj (segmented-only "
                        "attention, no recurrence)")
    args = parser.parse_args(argv)
    if args.stop_after is not None and args.resume_every <= 0:
        parser.error("--stop-after needs --resume-every (otherwise the steps trained are lost)")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    cfg = Seq2seqConfig.from_dict(merge_seq2seq_config_dict(parse_config_argument(args.config)),
                                  source="--config")
    pairs = load_pairs(args.source, args.target)
    model = new_model(cfg, args.seed)
    if args.no_srformer_recurrence:
        disable_srformer_recurrence_(model)
    args.out.mkdir(parents=True, exist_ok=True)
    resume = None
    started = time.time()
    if args.resume_every > 0:
        settings = {key: value for key, value in vars(args).items()
                    if key not in ("out", "resume_every", "stop_after", "log_every")}
        settings.update(source=str(args.source), target=str(args.target),
                        config=cfg.to_dict())
        saved = load_resume_point(args.out / "resume.pt")
        started -= saved["seconds"] if saved is not None else 0.0
        resume = ResumePoint(args.out / "resume.pt", args.resume_every, settings,
                             lambda: time.time() - started, saved)
        if saved is not None:
            print(f"resuming {args.out} at step {saved['step']} of {args.steps}")
            keep_log_before(args.out / "train.log", saved["step"])
    log_mode = "a" if resume is not None and resume.saved is not None else "w"
    with (args.out / "train.log").open(log_mode) as log_file:
        def log(step, loss):
            if step % args.log_every == 0 or step == args.steps - 1:
                line = f"step {step} loss {loss:.4f} elapsed {time.time() - started:.1f}s"
                print(line, flush=True)
                log_file.write(line + "\n")
                log_file.flush()
        losses = train(model, pairs, args.steps, args.batch, args.lr, args.weight_decay,
                       args.seed, log, warmup=args.warmup, decay=args.cosine_decay,
                       resume=resume, stop_after=args.stop_after)
    if len(losses) < args.steps:
        print(f"stopped at step {len(losses)} of {args.steps}; run the same command again to "
              f"continue from {resume.path}")
        return 0
    torch.save({"config": cfg.to_dict(), "model": model.state_dict()}, args.out / "checkpoint.pt")
    save_seq2seq_model_dir(model, args.out / "model")
    summary = {"steps": args.steps, "batch": args.batch, "lr": args.lr,
               "warmup": args.warmup, "cosine_decay": args.cosine_decay,
               "weight_decay": args.weight_decay, "seed": args.seed, "threads": args.threads,
               "no_srformer_recurrence": args.no_srformer_recurrence, "pairs": len(pairs),
               "parameters": sum(p.numel() for p in model.parameters()),
               "train_seconds": round(time.time() - started, 1),
               "config": cfg.to_dict(), "out": str(args.out)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if resume is not None and resume.path.exists():
        resume.path.unlink()  # finished: checkpoint.pt is the result
    print(json.dumps({"steps": args.steps, "pairs": len(pairs), "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
