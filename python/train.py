#!/usr/bin/env python3
"""Trains the reference decoder LM (slotserve_ref.model, its parallel form) on the KJV corpus
built by data/prepare_corpus.py, with any attention kind (for abc, any memory control of
docs/ABC_CONTROLS.md: --control, --abc-activation, --max-positions, --stride, --control-seed),
on the CPU.

Deterministic given --seed and --threads: the same command gives the same weights (torch's CPU
kernels are deterministic for a fixed thread count).

Training examples are windows of the training stream (every training book prefixed with BOS,
books concatenated): each sequence is BOS followed by seq_len-1 tokens from a random offset, so
position 0 always holds BOS, exactly like the evaluation windows (evaluation.py). AdamW, linear
warm-up, constant rate, cosine decay at the end (learning_rate()), gradient clipping.

Output directory (--out):
  train.log          one line per logged step (also printed)
  checkpoint.pt      model + optimizer + RNG state, every --save-every steps and at the end;
                     --resume continues from it bit-exactly
  model/             the converted model directory (config.json, F16 model.safetensors,
                     tokenizer.model), written at the end (convert.py does the same from
                     checkpoint.pt)
  summary.json       steps, tokens, wall time, final validation perplexity
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abc_chunked import use_chunked_abc  # noqa: E402
from evaluation import load_ids, window_batches  # noqa: E402
from slotserve_ref.config import ModelConfig, merge_config_dict  # noqa: E402
from slotserve_ref.model import LanguageModel  # noqa: E402
from slotserve_ref.model_dir import save_model_dir  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT / "build-training" / "data"


def abc_control_keys(args) -> dict:
    """The abc attention object's control keys (docs/ABC_CONTROLS.md) for --control and its
    flags; empty for the default learned/exp control."""
    if args.control == "learned":
        return {} if args.abc_activation == "exp" else {"control": "learned",
                                                        "activation": args.abc_activation}
    if args.abc_activation != "exp":
        raise SystemExit(f"train: --abc-activation {args.abc_activation} needs --control "
                         f"learned, got --control {args.control}")
    keys = {"control": args.control}
    if args.control == "linformer":
        # One linformer_proj column per position: by default exactly the training (and
        # evaluation) window.
        keys["max_positions"] = args.max_positions or args.seq_len
        limit = keys["max_positions"]
    elif args.control == "compressive":
        keys["stride"] = args.stride
        limit = args.slots * args.stride
    elif args.control == "random":
        keys["seed"] = args.control_seed
    if args.control in ("linformer", "compressive") and limit < args.seq_len:
        raise SystemExit(f"train: --control {args.control} holds {limit} positions, fewer "
                         f"than --seq-len {args.seq_len}")
    return keys


def attention_overrides(args) -> dict:
    if args.kind == "abc":
        return {"kind": "abc", "slots": args.slots, **abc_control_keys(args)}
    if args.control != "learned" or args.abc_activation != "exp":
        raise SystemExit(f"train: --control and --abc-activation are for --kind abc, got "
                         f"--kind {args.kind}")
    if args.kind == "rfa":
        # |phi(u)|^2 = feature_scale^2 * D, so 1/sqrt(D) gives unit-norm features; the
        # denominator floor is well below the typical phi(q).z of a normalised kernel (~0.1..1).
        return {"kind": "rfa", "features": args.features, "gate": True,
                "feature_scale": 1.0 / math.sqrt(args.features), "eps": 1e-2,
                "norm_eps": 1e-3, "layout": "concat"}
    if args.kind == "luna":
        return {"kind": "luna", "length": args.luna_length, "activation": "softplus",
                "tie_kv": False}
    return {"kind": "softmax", "max_context": args.max_context}


def build_config(args, vocab_size: int) -> ModelConfig:
    overrides = {
        "vocab_size": vocab_size, "d_model": args.d_model, "n_layers": args.n_layers,
        "n_heads": args.n_heads, "d_ffn": args.d_ffn, "embed_scale": math.sqrt(args.d_model),
        "attention": attention_overrides(args),
    }
    return ModelConfig.from_dict(merge_config_dict(overrides), "train.py arguments")


@torch.no_grad()
def initialise_(model: LanguageModel, seed: int) -> None:
    """Training initialisation (not slotserve_ref.init, which is for golden tests): Linear weights
    N(0, 1/fan_in), residual-output projections (o_proj, ffn.down) further scaled by
    1/sqrt(2 n_layers), zero biases, unit norms; embedding N(0, 1/E) so that embed_scale = sqrt(E)
    gives unit-variance inputs. RFA: random features N(0, 1) and frozen (only the per-dimension
    scales sigma learn, as in the paper), gate bias +2 so the gate starts out remembering ~8
    tokens. Luna: P ~ N(0, 1). ABC linformer: linformer_proj ~ N(0, 1/max_positions)."""
    cfg = model.config
    gen = torch.Generator().manual_seed(seed)
    residual_scale = 1.0 / math.sqrt(2 * cfg.n_layers)
    for name, param in sorted(model.named_parameters()):
        leaf = name.rsplit(".", 1)[-1]
        if name == "tok_embed.weight":
            value = torch.randn(param.shape, generator=gen) / math.sqrt(cfg.d_model)
        elif "norm." in name:
            value = torch.ones(param.shape) if leaf == "weight" else torch.zeros(param.shape)
        elif leaf == "rfa_random" or leaf == "luna_p":
            value = torch.randn(param.shape, generator=gen)
        elif leaf == "linformer_proj":
            # ABC's linformer control, [H, M, N]: N(0, 1/N), so a memory row summed over all
            # N positions has the scale of one key.
            value = torch.randn(param.shape, generator=gen) / math.sqrt(param.shape[-1])
        elif leaf == "rfa_sigma":
            value = torch.ones(param.shape)
        elif leaf == "bias":
            value = torch.full(param.shape, 2.0 if "gate_proj" in name else 0.0)
        elif leaf == "weight":
            std = 1.0 / math.sqrt(param.shape[1])
            if name.endswith("o_proj.weight") or name.endswith("ffn.down.weight"):
                std *= residual_scale
            value = torch.randn(param.shape, generator=gen) * std
        else:
            raise ValueError(f"initialise_: no rule for parameter {name}")
        param.copy_(value)
        if leaf == "rfa_random":
            param.requires_grad_(False)


def training_stream(data_dir: Path, bos_id: int) -> torch.Tensor:
    books = load_ids(data_dir / "train.ids")
    return torch.tensor([t for book in books for t in [bos_id] + book], dtype=torch.long)


def sample_batch(stream: torch.Tensor, batch: int, seq_len: int, bos_id: int,
                 gen: torch.Generator):
    offsets = torch.randint(0, len(stream) - seq_len, (batch,), generator=gen)
    rows = torch.stack([stream[o:o + seq_len] for o in offsets.tolist()])
    inputs = torch.cat([torch.full((batch, 1), bos_id, dtype=torch.long), rows[:, :-1]], dim=1)
    return inputs, rows


def learning_rate(step: int, args) -> float:
    """Warm-up, stable, decay: linear warm-up over --warmup steps, then constant --lr, then a
    cosine decay to lr * --min-lr-ratio over the last --decay-steps steps. The rate at a step
    depends on --steps only inside the decay, so a run resumed with a larger --steps before its
    decay began is identical to a single run with that --steps (see --resume)."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    decay_start = args.steps - args.decay_steps
    if step < decay_start:
        return args.lr
    progress = (step - decay_start) / max(1, args.decay_steps)
    floor = args.lr * args.min_lr_ratio
    return floor + 0.5 * (args.lr - floor) * (1 + math.cos(math.pi * min(1.0, progress)))


@torch.no_grad()
def validation_perplexity(model, books, window, bos_id, max_tokens=None) -> float:
    model.eval()
    total_nll, total_tokens = 0.0, 0
    for inputs, targets, mask in window_batches(books, window, bos_id, batch=16,
                                                max_tokens=max_tokens):
        logits = model(inputs)
        nll = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
        total_nll += float((nll * mask.flatten()).sum())
        total_tokens += int(mask.sum())
    model.train()
    return math.exp(total_nll / total_tokens)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=("abc", "rfa", "luna", "softmax"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--slots", type=int, default=32, help="abc: memory slots per head")
    parser.add_argument("--control", choices=("learned", "window", "linformer", "compressive",
                                              "random"), default="learned",
                        help="abc: memory control (docs/ABC_CONTROLS.md; default learned)")
    parser.add_argument("--abc-activation", choices=("exp", "relu", "sigmoid"), default="exp",
                        help="abc --control learned: activation of the slot logits")
    parser.add_argument("--max-positions", type=int, default=0,
                        help="abc --control linformer: positions (default --seq-len)")
    parser.add_argument("--stride", type=int, default=8,
                        help="abc --control compressive: tokens per slot (slots x stride "
                             "must be >= --seq-len)")
    parser.add_argument("--control-seed", type=int, default=0,
                        help="abc --control random: the seed of the fixed row draw")
    parser.add_argument("--features", type=int, default=32, help="rfa: random features D")
    parser.add_argument("--luna-length", type=int, default=32, help="luna: packed length L")
    parser.add_argument("--max-context", type=int, default=512, help="softmax: KV cache size")
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--n-layers", type=int, default=4)
    parser.add_argument("--n-heads", type=int, default=4)
    parser.add_argument("--d-ffn", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--min-lr-ratio", type=float, default=0.1)
    parser.add_argument("--decay-steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--eval-tokens", type=int, default=4096,
                        help="validation tokens scored at each periodic evaluation "
                             "(the final evaluation scores the whole validation split)")
    parser.add_argument("--save-every", type=int, default=250)
    parser.add_argument("--resume", action="store_true",
                        help="continue from OUT/checkpoint.pt; --steps may grow as long as the "
                             "checkpoint is before the new decay start")
    parser.add_argument("--stop-after-seconds", type=float, default=0,
                        help="stop (saving everything) once this much wall time has passed")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    manifest = json.loads((args.data / "manifest.json").read_text())
    cfg = build_config(args, manifest["tokenizer"]["vocab_size"])
    model = LanguageModel(cfg)
    initialise_(model, args.seed)
    # Learned exp ABC: same math as the reference's parallel form, O(T) instead of O(T^2). The
    # other abc controls train with their reference parallel form (AbcControlAttention.forward,
    # O(T^2 (d + M)) without per-prefix memories).
    use_chunked_abc(model)
    trainable = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in trainable if p.dim() >= 2]
    no_decay = [p for p in trainable if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.98), eps=1e-8)
    data_gen = torch.Generator().manual_seed(args.seed + 1)
    stream = training_stream(args.data, cfg.bos_id)
    valid_books = load_ids(args.data / "valid.ids")
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint_path = args.out / "checkpoint.pt"

    step, elapsed_before = 0, 0.0
    if args.resume and checkpoint_path.exists():
        ckpt = torch.load(checkpoint_path)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        data_gen.set_state(ckpt["data_rng"])
        step, elapsed_before = ckpt["step"], ckpt["elapsed_s"]
        finished = step == args.steps  # nothing left to train: only the final outputs
        if step > args.steps or (not finished and
                                 step > max(args.warmup, args.steps - args.decay_steps)):
            raise SystemExit(f"train: checkpoint is at step {step}, past the decay start "
                             f"{args.steps - args.decay_steps} of --steps {args.steps}; resuming "
                             f"would change the schedule of steps already taken")
    n_params = sum(p.numel() for p in model.parameters())
    log = (args.out / "train.log").open("a")

    def say(line: str) -> None:
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    def save(final: bool) -> None:
        torch.save({"config": cfg.to_dict(), "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "data_rng": data_gen.get_state(),
                    "step": step, "elapsed_s": elapsed, "args": vars(args) | {
                        "out": str(args.out), "data": str(args.data)}},
                   checkpoint_path)
        if final:
            save_model_dir(model, args.out / "model", dtype="f16",
                           tokenizer=args.data / "tokenizer.model")

    stop_requested = []
    signal.signal(signal.SIGTERM, lambda *_: stop_requested.append(True))
    say(f"train: kind={cfg.attention.kind} params={n_params} steps={args.steps} "
        f"batch={args.batch_size}x{args.seq_len} threads={args.threads} seed={args.seed} "
        f"start_step={step} config={json.dumps(cfg.to_dict()['attention'])}")
    model.train()
    start = time.time()
    elapsed = elapsed_before
    window_tokens, window_start = 0, time.time()
    while step < args.steps:
        lr = learning_rate(step, args)
        for group in optimizer.param_groups:
            group["lr"] = lr
        inputs, targets = sample_batch(stream, args.batch_size, args.seq_len, cfg.bos_id,
                                       data_gen)
        logits = model(inputs)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        if not torch.isfinite(loss):
            raise SystemExit(f"train: loss is {float(loss)} at step {step}; stopping")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(trainable, args.clip)
        optimizer.step()
        step += 1
        window_tokens += inputs.numel()
        elapsed = elapsed_before + time.time() - start
        if step % args.log_every == 0 or step == args.steps:
            rate = window_tokens / (time.time() - window_start)
            say(f"step {step} loss {float(loss):.4f} ppl {math.exp(float(loss)):.1f} "
                f"lr {lr:.2e} grad_norm {float(grad_norm):.2f} tokens/s {rate:.0f} "
                f"elapsed {elapsed:.0f}s")
            window_tokens, window_start = 0, time.time()
        if step % args.eval_every == 0 and step < args.steps:
            ppl = validation_perplexity(model, valid_books, args.seq_len, cfg.bos_id,
                                        args.eval_tokens)
            say(f"step {step} valid_ppl(first {args.eval_tokens} tokens) {ppl:.2f}")
        if stop_requested:
            save(final=False)
            say(f"train: SIGTERM: checkpoint saved at step {step}; resume with --resume")
            log.close()
            return
        stop = args.stop_after_seconds and elapsed >= args.stop_after_seconds
        if step % args.save_every == 0 or stop:
            save(final=False)
        if stop:
            say(f"train: stopping at step {step} after {elapsed:.0f}s (--stop-after-seconds)")
            break

    valid_ppl = validation_perplexity(model, valid_books, args.seq_len, cfg.bos_id)
    save(final=True)
    summary = {"kind": cfg.attention.kind, "attention": cfg.attention.to_dict(),
               "parameters": n_params, "steps": step, "planned_steps": args.steps,
               "tokens_seen": step * args.batch_size * args.seq_len,
               "batch_size": args.batch_size, "seq_len": args.seq_len, "lr": args.lr,
               "seed": args.seed, "threads": args.threads, "wall_time_s": round(elapsed, 1),
               "valid_ppl": round(valid_ppl, 3)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    say(f"train: done: {json.dumps(summary)}")
    log.close()


if __name__ == "__main__":
    main()
