#!/usr/bin/env python3
"""Writes the committed seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/): small,
valid inputs the fuzzers mutate from. Run from anywhere; needs protoc (protobuf-compiler).

  config_json/      the golden models' config.json files (every attention kind) and the golden
                    fla checkpoints' (fla_<variant>.json)
  safetensors/      tiny F32, F16 and BF16 weight files matching fuzz_safetensors.cc's config
  request_parsing/  GenerateRequest messages in wire format (text and token-id prompts,
                    sampling, stopping and logprob options)
  openai_request/   HTTP API bodies, a first byte 0 (completions) or 1 (chat) before the JSON:
                    batches, echo, logprobs, logit_bias, best_of, beam search, messages
  detokenizer/      id sequences, including byte-fallback pieces
  jinja_template/   the hand-written chat templates of tests/hf_oracle/construct_templates.py,
                    one per construct the interpreter (server/jinja) supports
  state_import/     state blobs (engine/state_blob.h's layout, written here independently),
                    unsigned and signed, for fuzz_state_import.cc's identity
"""
import hashlib
import hmac
import json
import struct
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = HERE / "corpus"

# The config fuzz_safetensors.cc checks tensors against: E=8, H=2, M=2, F=16, V=16, 1 layer.
E, H, M, F, V = 8, 2, 2, 16, 16
TENSORS = {
    "tok_embed.weight": [V, E],
    "final_norm.weight": [E], "final_norm.bias": [E],
    "layers.0.attn_norm.weight": [E], "layers.0.attn_norm.bias": [E],
    "layers.0.ffn_norm.weight": [E], "layers.0.ffn_norm.bias": [E],
    "layers.0.ffn.up.weight": [F, E], "layers.0.ffn.up.bias": [F],
    "layers.0.ffn.down.weight": [E, F], "layers.0.ffn.down.bias": [E],
    "layers.0.attn.slot_proj.weight": [H * M, E], "layers.0.attn.slot_proj.bias": [H * M],
}
for p in "qkvo":
    TENSORS[f"layers.0.attn.{p}_proj.weight"] = [E, E]
    TENSORS[f"layers.0.attn.{p}_proj.bias"] = [E]


def element_bytes(dtype, value):
    if dtype == "F32":
        return struct.pack("<f", value)
    if dtype == "F16":
        return struct.pack("<e", value)
    return struct.pack("<f", value)[2:]  # BF16: the high half of the F32 bits


def safetensors(dtype, tensors=TENSORS):
    header, payload = {"__metadata__": {"format": "pt"}}, b""
    for i, (name, shape) in enumerate(sorted(tensors.items())):
        count = 1
        for dim in shape:
            count *= dim
        data = b"".join(element_bytes(dtype, ((i + j) % 7 - 3) / 8) for j in range(count))
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(payload), len(payload) + len(data)]}
        payload += data
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + payload


REQUESTS = {
    "text_greedy": 'text: "In the beginning" sampling { temperature: 0 } stopping { max_new_tokens: 8 }',
    "token_ids": 'token_ids { ids: [1, 5, 9, 200] } stopping { max_new_tokens: 4 min_new_tokens: 2 }',
    "sampled": ('text: "And God said" sampling { temperature: 0.7 top_k: 40 top_p: 0.9 min_p: 0.05 '
                'repetition_penalty: 1.1 presence_penalty: 0.5 frequency_penalty: 0.2 seed: 7 }'),
    "stops": ('request_id: "r1" text: "Let there be light" stopping { stop_sequences: ["\\n", "Amen"] '
              'stop_token_ids: [2] ignore_eos: true max_new_tokens: 32 }'),
    "logprobs": 'text: "x" logprobs { enabled: true top_n: 3 }',
    "unicode": 'text: "caf\\303\\251 \\360\\237\\231\\202"',
}


# First byte: 0 = /v1/completions, 1 = /v1/chat/completions.
OPENAI_BODIES = {
    "completion": (0, {"prompt": "In the beginning", "max_tokens": 8, "temperature": 0}),
    "batch_echo": (0, {"prompt": ["And God said", [1, 17, 42]], "echo": True, "logprobs": 2,
                       "n": 2, "seed": 3, "stream": True,
                       "stream_options": {"include_usage": True}}),
    "sampled": (0, {"prompt": "x", "top_k": 40, "top_p": 0.9, "min_p": 0.05,
                    "repetition_penalty": 1.1, "presence_penalty": 0.5, "stop": ["\n", "Amen"],
                    "stop_token_ids": [2], "min_tokens": 1, "ignore_eos": True,
                    "logit_bias": {"5": -100, "42": 2.5}, "return_token_ids": True}),
    "best_of": (0, {"prompt": "Let there be light", "n": 2, "best_of": 4, "logprobs": 0}),
    "beam": (0, {"prompt": "x", "use_beam_search": True, "best_of": 3, "n": 2,
                 "length_penalty": 1.0, "temperature": 0}),
    "chat": (1, {"messages": [{"role": "system", "content": "Answer briefly."},
                              {"role": "user", "content": [{"type": "text", "text": "Who?"}]}],
                 "max_completion_tokens": 12, "logprobs": True, "top_logprobs": 2,
                 "logit_bias": {"7": 1}, "add_generation_prompt": True}),
}


def encode_request(text_format):
    return subprocess.run(
        ["protoc", f"--proto_path={REPO / 'proto'}", "--encode=slotserve.v1.GenerateRequest",
         "slotserve/v1/slotserve.proto"],
        input=text_format.encode(), capture_output=True, check=True).stdout


def state_blob(token_count, key):
    """The export format of engine/state_blob.h for fuzz_state_import.cc's identity."""
    fingerprint = bytes((i * 7 + 1) % 256 for i in range(32))
    payload = struct.pack("<i", token_count) + bytes(range(4, 64))
    body = (b"SLOTSTAT" + struct.pack("<II", 1, 1 if key else 0) + fingerprint
            + struct.pack("<I", 3) + b"abc" + struct.pack("<I", 0)
            + struct.pack("<qi", token_count, 42) + struct.pack("<Q", len(payload)) + payload)
    body += hashlib.sha256(body).digest()
    if key:
        body += hmac.new(key, body, hashlib.sha256).digest()
    return body


def _byte_level_alphabet():
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def _hf_tokenizers():
    """Small tokenizer.json files of the two kinds the server reads (engine/hf_tokenizer.h)."""
    alphabet = _byte_level_alphabet()
    byte_vocab = {c: i for i, c in enumerate(alphabet)}
    merges = [["\u0120", "w"], ["o", "r"], ["\u0120w", "or"], ["l", "l"], ["H", "e"]]
    for left, right in merges:
        byte_vocab.setdefault(left + right, len(byte_vocab))
    byte_level = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": len(byte_vocab), "content": "<|end|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": byte_vocab, "merges": merges},
    }
    sp_vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        sp_vocab[f"<0x{b:02X}>"] = len(sp_vocab)
    for piece in ["\u2581", "H", "e", "l", "o", "w", "r", "d", "\u2581w", "ll", "\u2581H"]:
        sp_vocab.setdefault(piece, len(sp_vocab))
    sp_merges = ["\u2581 w", "l l", "\u2581 H"]
    byte_fallback = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for c, i in (("<unk>", 0), ("<s>", 1), ("</s>", 2))],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
                                                                   "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "vocab": sp_vocab,
                  "merges": sp_merges},
    }
    metaspace = json.loads(json.dumps(byte_fallback))
    metaspace["normalizer"] = None
    metaspace["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581",
                                  "prepend_scheme": "first", "split": True}
    metaspace["decoder"] = {"type": "Metaspace", "replacement": "\u2581",
                            "prepend_scheme": "first", "split": True}
    return {"byte_level": byte_level, "byte_fallback": byte_fallback, "metaspace": metaspace}


LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
HF_TOKENIZERS = None


def main():
    global HF_TOKENIZERS
    HF_TOKENIZERS = _hf_tokenizers()
    for sub in ("config_json", "safetensors", "request_parsing", "openai_request", "detokenizer",
                "state_import", "hf_tokenizer",
                "jinja_template"):
        (CORPUS / sub).mkdir(parents=True, exist_ok=True)
    for config in sorted((REPO / "tests" / "golden" / "models").glob("*/config.json")):
        (CORPUS / "config_json" / f"{config.parent.name}.json").write_bytes(config.read_bytes())
    for variant in ("gsa", "gsa_conv_gqa_sharded", "abc_rope_clamp", "gsa_legacy_norm_first"):
        config = REPO / "tests" / "golden" / "fla" / variant / "config.json"
        (CORPUS / "config_json" / f"fla_{variant}.json").write_bytes(config.read_bytes())
    for dtype in ("F32", "F16", "BF16"):
        (CORPUS / "safetensors" / f"abc_{dtype.lower()}.safetensors").write_bytes(safetensors(dtype))
    for name, text in REQUESTS.items():
        (CORPUS / "request_parsing" / f"{name}.pb").write_bytes(encode_request(text))
    for name, (endpoint, body) in OPENAI_BODIES.items():
        data = bytes([endpoint]) + json.dumps(body, ensure_ascii=False).encode()
        (CORPUS / "openai_request" / f"{name}.json").write_bytes(data)
    # First byte: prompt length (mod 8); then little-endian 16-bit ids.
    sequences = {
        "words": [0, 100, 200, 300, 400, 500],
        "with_prompt": [3, 1, 50, 60, 70, 80, 90],
        "byte_fallback": [0, 3, 4, 5, 6, 7, 8, 9, 10, 250, 251, 252],
        "control_ids": [1, 0, 1, 2, 3, 2, 0],
    }
    for name, ids in sequences.items():
        data = bytes([ids[0]]) + b"".join(struct.pack("<H", i) for i in ids[1:])
        (CORPUS / "detokenizer" / name).write_bytes(data)
    # A tokenizer.json, a NUL byte, then text to encode.
    for name, tokenizer in HF_TOKENIZERS.items():
        for k, text in enumerate(("Hello  world, it's 2024!\n\tok", "é😀 <s>x</s> ▁▁ <0x41>")):
            data = json.dumps(tokenizer, ensure_ascii=False).encode() + b"\0" + text.encode()
            (CORPUS / "hf_tokenizer" / f"{name}_{k}.json").write_bytes(data)
    # First byte: odd = the server has the key "fuzz key".
    (CORPUS / "state_import" / "unsigned").write_bytes(b"\x00" + state_blob(17, b""))
    (CORPUS / "state_import" / "signed").write_bytes(b"\x01" + state_blob(3, b"fuzz key"))
    (CORPUS / "state_import" / "empty_state").write_bytes(b"\x00" + state_blob(0, b""))
    sys.path.insert(0, str(REPO / "tests" / "hf_oracle"))
    from construct_templates import TEMPLATES
    for name, template in TEMPLATES.items():
        (CORPUS / "jinja_template" / f"{name}.jinja").write_bytes(template.encode())


if __name__ == "__main__":
    main()
