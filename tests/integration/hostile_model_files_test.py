#!/usr/bin/env python3
"""Hostile model directories (issue 15): each corruption of a good model directory must make
slotserve-server exit non-zero at start-up with one clear message that names the file and the
field or tensor at fault, and must never crash (no signal, no sanitizer report).

Usage: hostile_model_files_test.py SERVER_BINARY GOOD_MODEL_DIR

Every case copies GOOD_MODEL_DIR, spoils one thing with plain byte and JSON edits written here
(independent of the C++ loader), starts the server on a free loopback port and checks its exit
status and stderr. Prints one line per case and a closing 'N passed, N failed' line.
"""
import json
import math
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path


def read_safetensors(path):
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    return header, data[8 + header_len:]


def write_safetensors(path, header, payload, header_text=None):
    text = header_text if header_text is not None else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + payload)


def edits_weights_file(edit):
    """Turns edit(header, payload) -> new payload or None (unchanged) into a spoiler of a
    directory's model.safetensors."""
    def spoil(d):
        p = d / "model.safetensors"
        header, payload = read_safetensors(p)
        changed = edit(header, payload)
        write_safetensors(p, header, payload if changed is None else changed)
    spoil.__name__ = edit.__name__
    return spoil


def first_tensor(header, suffix=""):
    names = sorted(n for n in header if n != "__metadata__" and n.endswith(suffix))
    return names[0]


# --- the spoilers: each takes the copied directory and damages it --------------------------

def truncate_data(d):
    p = d / "model.safetensors"
    b = p.read_bytes()
    p.write_bytes(b[: len(b) - 1000])


def header_length_past_end(d):
    p = d / "model.safetensors"
    b = p.read_bytes()
    p.write_bytes(struct.pack("<Q", len(b) * 4) + b[8:])


def header_length_huge(d):
    p = d / "model.safetensors"
    b = p.read_bytes()
    p.write_bytes(struct.pack("<Q", 2**63 + 5) + b[8:])


def file_shorter_than_its_length_field(d):
    (d / "model.safetensors").write_bytes(b"\x10\x00\x00")


def header_not_json(d):
    p = d / "model.safetensors"
    header, payload = read_safetensors(p)
    text = json.dumps(header).encode()
    write_safetensors(p, header, payload, b"{not json" + b" " * (len(text) - 9))


def header_not_utf8(d):
    p = d / "model.safetensors"
    header, payload = read_safetensors(p)
    text = json.dumps(header).encode().replace(b'"pt"', b'"\xff\xfe"', 1)
    write_safetensors(p, header, payload, text)


@edits_weights_file
def offsets_out_of_range(header, payload):
    name = first_tensor(header)
    begin, end = header[name]["data_offsets"]
    header[name]["data_offsets"] = [len(payload) - 4, len(payload) - 4 + (end - begin)]


@edits_weights_file
def offsets_reversed(header, payload):
    name = first_tensor(header)
    begin, end = header[name]["data_offsets"]
    header[name]["data_offsets"] = [end, begin]


@edits_weights_file
def offsets_overlap(header, payload):
    names = sorted((n for n in header if n != "__metadata__"),
                   key=lambda n: header[n]["data_offsets"][0])
    a, b = names[0], names[1]
    size_b = header[b]["data_offsets"][1] - header[b]["data_offsets"][0]
    start = header[a]["data_offsets"][0]
    if size_b <= header[a]["data_offsets"][1] - start:
        header[b]["data_offsets"] = [start, start + size_b]
    else:
        header[a]["data_offsets"] = [header[b]["data_offsets"][0],
                                     header[b]["data_offsets"][0] + header[a]["data_offsets"][1] - start]


@edits_weights_file
def shape_product_overflows(header, payload):
    name = first_tensor(header, "norm.weight")
    header[name]["shape"] = [2**32 + 1, 2**32 + 1, 2**32 + 1]


@edits_weights_file
def shape_disagrees_with_offsets(header, payload):
    name = first_tensor(header, "norm.weight")
    header[name]["shape"] = [header[name]["shape"][0] // 2]


@edits_weights_file
def negative_shape(header, payload):
    name = first_tensor(header, "norm.weight")
    header[name]["shape"] = [-64]


@edits_weights_file
def unsupported_dtype(header, payload):
    name = first_tensor(header, "norm.weight")
    header[name]["dtype"] = "F64"
    header[name]["shape"] = [header[name]["shape"][0] // 2]


@edits_weights_file
def integer_dtype(header, payload):
    name = first_tensor(header, "norm.weight")
    header[name]["dtype"] = "I32"


def duplicate_tensor_name(d):
    p = d / "model.safetensors"
    header, payload = read_safetensors(p)
    text = json.dumps(header)
    name = first_tensor(header, "norm.weight")
    entry = json.dumps({name: header[name]})[1:-1]
    text = text[:-1] + ", " + entry + "}"
    write_safetensors(p, header, payload, text.encode())


@edits_weights_file
def missing_tensor(header, payload):
    del header["layers.1.ffn.up.weight"]


@edits_weights_file
def extra_tensor(header, payload):
    header["layers.7.attn.q_proj.weight"] = dict(header["final_norm.weight"])


@edits_weights_file
def misshaped_tensor(header, payload):
    name = "layers.0.ffn.up.weight"
    f, e = header[name]["shape"]
    header[name]["shape"] = [e, f]


@edits_weights_file
def nan_in_norm_weight(header, payload):
    begin, _ = header["layers.0.attn_norm.weight"]["data_offsets"]
    payload = bytearray(payload)
    payload[begin + 12:begin + 16] = struct.pack("<f", math.nan)
    return bytes(payload)


@edits_weights_file
def inf_in_weight(header, payload):
    begin, _ = header["layers.1.attn.q_proj.weight"]["data_offsets"]
    payload = bytearray(payload)
    payload[begin:begin + 4] = struct.pack("<f", math.inf)
    return bytes(payload)


def config_edit(edit):
    def spoil(d):
        p = d / "config.json"
        config = json.loads(p.read_text())
        edit(config)
        p.write_text(json.dumps(config))
    return spoil


def config_text(text):
    def spoil(d):
        (d / "config.json").write_text(text)
    return spoil


def config_repeated_key(d):
    p = d / "config.json"
    text = p.read_text().rstrip()
    p.write_text(text[:-1].rstrip() + ', "d_model": 128}')


def remove(name):
    def spoil(d):
        (d / name).unlink()
    return spoil


def tokenizer_larger_than_vocab(d):
    # A real tokenizer of another model: 4000 pieces against this model's 400 ids.
    repo = Path(__file__).resolve().parents[2]
    shutil.copyfile(repo / "models" / "trained" / "kjv-abc-m32" / "tokenizer.model",
                    d / "tokenizer.model")


def tokenizer_garbage(d):
    (d / "tokenizer.model").write_bytes(b"\x00\x01garbage, not a SentencePiece model" * 10)


# (name, spoiler, words that must all appear in the message)
CASES = [
    ("truncated data", truncate_data, ["model.safetensors"]),
    ("header length past the end", header_length_past_end, ["model.safetensors", "header"]),
    ("header length near 2^63", header_length_huge, ["model.safetensors", "header"]),
    ("file shorter than its length field", file_shorter_than_its_length_field,
     ["model.safetensors"]),
    ("header is not JSON", header_not_json, ["model.safetensors"]),
    ("header is not UTF-8", header_not_utf8, ["model.safetensors", "UTF-8"]),
    ("offsets past the data", offsets_out_of_range, ["model.safetensors", "final_norm.bias"]),
    ("offsets reversed", offsets_reversed, ["model.safetensors", "final_norm.bias"]),
    ("two tensors overlap", offsets_overlap, ["model.safetensors", "overlap"]),
    ("shape product overflows", shape_product_overflows, ["model.safetensors", "final_norm.weight"]),
    ("shape disagrees with offsets", shape_disagrees_with_offsets,
     ["model.safetensors", "final_norm.weight"]),
    ("negative dimension", negative_shape, ["model.safetensors", "final_norm.weight"]),
    ("F64 dtype", unsupported_dtype, ["model.safetensors", "final_norm.weight", "F64"]),
    ("I32 dtype", integer_dtype, ["model.safetensors", "final_norm.weight", "I32"]),
    ("duplicate tensor name", duplicate_tensor_name, ["model.safetensors", "final_norm.weight"]),
    ("missing tensor", missing_tensor, ["layers.1.ffn.up.weight"]),
    ("extra tensor", extra_tensor, ["layers.7.attn.q_proj.weight"]),
    ("mis-shaped tensor", misshaped_tensor, ["layers.0.ffn.up.weight"]),
    ("NaN in a norm weight", nan_in_norm_weight, ["layers.0.attn_norm.weight", "NaN"]),
    ("Inf in a projection", inf_in_weight, ["layers.1.attn.q_proj.weight"]),
    ("config: unknown key", config_edit(lambda c: c.update(n_layer=2)), ["config.json", "n_layer"]),
    ("config: heads do not divide d_model", config_edit(lambda c: c.update(n_heads=3)),
     ["config.json", "n_heads"]),
    ("config: vocab_size 0", config_edit(lambda c: c.update(vocab_size=0)),
     ["config.json", "vocab_size"]),
    ("config: ABC memory of 0 rows", config_edit(lambda c: c["attention"].update(slots=0)),
     ["config.json", "slots"]),
    ("config: unknown attention kind", config_edit(lambda c: c["attention"].update(kind="mamba")),
     ["config.json", "mamba"]),
    ("config: eos_id outside the vocabulary", config_edit(lambda c: c.update(eos_id=400)),
     ["config.json", "eos_id"]),
    ("config: negative norm_eps", config_edit(lambda c: c.update(norm_eps=-1.0)),
     ["config.json", "norm_eps"]),
    ("config: wrong format", config_edit(lambda c: c.update(format="gguf")),
     ["config.json", "format"]),
    ("config: truncated JSON", config_text('{"format": "slotserve-lm", "vocab'), ["config.json"]),
    ("config: repeated key", config_repeated_key, ["config.json", "d_model"]),
    ("config.json missing", remove("config.json"), ["config.json"]),
    ("model.safetensors missing", remove("model.safetensors"), ["model.safetensors"]),
    ("tokenizer larger than vocab_size", tokenizer_larger_than_vocab,
     ["tokenizer.model", "4000 pieces", "vocab_size is 400"]),
    ("tokenizer.model is garbage", tokenizer_garbage, ["tokenizer.model"]),
]


def run_case(server, good_dir, work, name, spoil, words):
    d = work / name.replace(" ", "_").replace(":", "")
    shutil.copytree(good_dir, d)
    spoil(d)
    try:
        result = subprocess.run(
            [server, f"--model={d}", "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
             "--backend=cpu", "--max-slots=2"],
            capture_output=True, text=True, errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        return "the server started serving (or hung) instead of refusing the model"
    message = result.stderr.strip()
    if result.returncode == 0:
        return f"exit 0; stderr: {message[-400:]}"
    if result.returncode < 0 or result.returncode > 128:
        return f"crashed (status {result.returncode}); stderr: {message[-800:]}"
    if "Sanitizer" in message or "runtime error" in message:
        return f"sanitizer report: {message[-800:]}"
    missing = [w for w in words if w not in message]
    if missing:
        return f"message lacks {missing}: {message[-400:]}"
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    server, good_dir = sys.argv[1], Path(sys.argv[2])
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="hostile-models-") as tmp:
        for name, spoil, words in CASES:
            problem = run_case(server, good_dir, Path(tmp), name, spoil, words)
            if problem is None:
                passed += 1
                print(f"ok    {name}")
            else:
                failed += 1
                print(f"FAIL  {name}: {problem}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
