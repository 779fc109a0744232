#!/usr/bin/env python3
"""slotserve-quantize (issue 16, the int8 weight-only format) as a user runs it:

  - on a trained-shape model it writes int8 matrices whose bytes and scales equal the Python
    reference's quantiser (python/slotserve_ref/int8_weights.py, written independently of the
    C++ tool) tensor by tensor, keeps every other tensor's values, copies the other files;
  - the written directory serves: slotserve-generate on it gives the same greedy tokens as
    the PyTorch reference run on the dequantised weights it reads back;
  - on an encoder-decoder model it writes the same bytes as the Python quantiser over that
    model's tensor table, and the Python reference reads the result back;
  - it refuses a non-empty output directory, a missing model and a config of another format,
    each with a one-line message, exit status 1 (2 for a bad command line);
  - on an fla checkpoint in three shards (docs/FLA_CHECKPOINTS.md) it writes one file under
    fla's names, matrices int8 as the Python quantiser makes them, the convolution kernels and
    norms F32, and the result generates what fla's float64 reference computes from the
    dequantised weights.

Usage: quantize_tool_test.py QUANTIZE_BINARY GENERATE_BINARY MODEL_DIR SEQ2SEQ_MODEL_DIR FLA_DIR
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from slotserve_ref.int8_weights import is_quantized, quantize_rows  # noqa: E402
from slotserve_ref.model_dir import load_model_dir  # noqa: E402
from slotserve_ref.safetensors_io import load_file  # noqa: E402
from slotserve_ref.seq2seq_model_dir import load_seq2seq_model_dir  # noqa: E402

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)


def check_fla(quantize, generate, fla_dir, tmp):
    from slotserve_ref.fla.checkpoint import read_weight_files
    from slotserve_ref.fla.config import FlaConfig
    from slotserve_ref.fla.model import FlaModel
    out = Path(tmp) / "fla-int8"
    result = run(quantize, fla_dir, out)
    check(result.returncode == 0, f"quantize an fla checkpoint exits 0 ({result.stderr.strip()})")
    check((out / "model.safetensors").exists() and not (out / "model.safetensors.index.json").exists(),
          "fla shards are written back as one model.safetensors")
    source = read_weight_files(fla_dir)
    written = load_file(out / "model.safetensors")
    dequantised = {}
    for name, tensor in source.items():
        if is_quantized(name, tuple(tensor.shape)):
            q, scale = quantize_rows(tensor.double(), name)
            check(written[name].dtype == torch.int8 and torch.equal(written[name], q)
                  and torch.equal(written[name + "_scale"], scale.float()),
                  f"fla {name}: int8 rows and scales equal the Python quantiser's")
            dequantised[name] = written[name].double() * written[name + "_scale"].double()[:, None]
        else:
            check(written[name].dtype == torch.float32 and torch.equal(written[name], tensor.float()),
                  f"fla {name}: kept as F32 under fla's name")
            dequantised[name] = written[name].double()
    reference = FlaModel(FlaConfig.load(out / "config.json"), dequantised)
    prompt = [1, 136, 67, 118, 195]
    result = run(generate, "--model", out, "--backend", "cpu", "--max-new-tokens", "8",
                 "--prompt-ids", ",".join(map(str, prompt)))
    check(result.returncode == 0, f"slotserve-generate on the int8 fla model ({result.stderr.strip()})")
    engine_ids = ([int(t) for t in result.stdout.strip().split(",")]
                  if result.returncode == 0 else [])
    logits, state = reference.prefill(torch.tensor(prompt))
    tokens = [int(logits[-1].argmax())]
    for _ in range(7):
        logits, state = reference.step(tokens[-1], state)
        tokens.append(int(logits.argmax()))
    check(engine_ids == tokens, f"fla int8: greedy tokens equal the reference's on the dequantised "
                                f"weights ({engine_ids} vs {tokens})")


def check_written(model, out):
    """`out` (slotserve-quantize's output for `model`): each matrix the rule picks as the Python
    quantiser writes it, every other tensor's values kept, nothing else written, the other
    files copied."""
    source = load_file(model / "model.safetensors")
    written = load_file(out / "model.safetensors")
    quantised = 0
    for name, tensor in source.items():
        if is_quantized(name, tuple(tensor.shape)):
            q, scale = quantize_rows(tensor.double(), name)
            same = (written[name].dtype == torch.int8 and torch.equal(written[name], q)
                    and torch.equal(written[name + "_scale"], scale.float()))
            check(same, f"{name}: int8 rows and scales equal the Python quantiser's")
            quantised += 1
        else:
            check(torch.equal(written[name], tensor.float()), f"{name}: kept as F32")
    check(quantised > 0, f"{model.name}: {quantised} matrices quantised")
    check(len(written) == len(source) + quantised, f"{model.name}: no other tensors written")
    for extra in sorted(p.name for p in model.iterdir() if p.name != "model.safetensors"):
        check((out / extra).read_bytes() == (model / extra).read_bytes(), f"{extra} copied")


def main(quantize, generate, model, seq2seq, fla_dir):
    model, seq2seq, fla_dir = Path(model), Path(seq2seq), Path(fla_dir)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "int8"
        result = run(quantize, model, out)
        check(result.returncode == 0, f"quantize exits 0 ({result.stderr.strip()})")
        check("matrices int8" in result.stdout, "quantize reports what it wrote")
        check_written(model, out)

        # The int8 directory serves, and computes what its dequantised weights compute.
        reference = load_model_dir(out)  # dequantised, float64
        prompt = [reference.config.bos_id, 5, 9, 17, 3]
        result = run(generate, "--model", out, "--backend", "cpu", "--max-new-tokens", "8",
                     "--prompt-ids", ",".join(map(str, prompt)))
        check(result.returncode == 0, f"slotserve-generate on the int8 model ({result.stderr.strip()})")
        engine_ids = ([int(t) for t in result.stdout.strip().split(",")]
                      if result.returncode == 0 else [])
        tokens = list(prompt)
        with torch.no_grad():
            for _ in range(8):
                logits = reference(torch.tensor(tokens))
                tokens.append(int(logits[-1].argmax()))
        check(engine_ids == tokens[len(prompt):],
              f"greedy tokens equal the reference's on the dequantised weights "
              f"({engine_ids} vs {tokens[len(prompt):]})")

        result = run(quantize, model, out)
        check(result.returncode == 1 and "exists and is not empty" in result.stderr,
              f"a non-empty output directory is refused ({result.stderr.strip()})")
        result = run(quantize, Path(tmp) / "missing", Path(tmp) / "other")
        check(result.returncode == 1 and "missing" in result.stderr,
              f"a missing model is refused by name ({result.stderr.strip()})")

        # An encoder-decoder model: its own tensor table, the same rule and bytes.
        result = run(quantize, seq2seq, Path(tmp) / "s2s")
        check(result.returncode == 0, f"quantize exits 0 on a seq2seq model ({result.stderr.strip()})")
        if result.returncode == 0:
            check_written(seq2seq, Path(tmp) / "s2s")
            load_seq2seq_model_dir(Path(tmp) / "s2s")  # the Python reader takes it back
        other = Path(tmp) / "other-format"
        other.mkdir()
        (other / "config.json").write_text(
            (model / "config.json").read_text().replace('"slotserve-lm"', '"slotserve-other"'))
        shutil.copyfile(model / "model.safetensors", other / "model.safetensors")
        result = run(quantize, other, Path(tmp) / "other-out")
        check(result.returncode == 1 and "format \"slotserve-other\" cannot be quantised" in result.stderr,
              f"a config of another format is refused ({result.stderr.strip()})")
        result = run(quantize, model)
        check(result.returncode == 2 and "usage" in result.stderr, "a bad command line: usage")
        check_fla(quantize, generate, fla_dir, tmp)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
