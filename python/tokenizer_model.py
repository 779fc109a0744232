#!/usr/bin/env python3
"""SentencePiece tokenizer.model files compared by what they encode, and re-saved without the
paths of the machine that trained them.

A tokenizer.model is a serialized `sentencepiece.ModelProto`. Besides the vocabulary it records
how spm_train was called, including its --input and --model_prefix as given (an absolute path
when the trainer was handed one), so the same vocabulary trained in two checkouts gives two
files that differ byte for byte. Here two tokenizers are the same when everything that the
encoder reads is equal:

  * the pieces, in id order: text, score and type (normal, unknown, control, byte, ...);
  * normalizer_spec and denormalizer_spec (the normalization rules and whitespace handling),
    except normalization_rule_tsv, the name of the rule file they were compiled from;
  * the trainer settings that encoding and decoding read: model_type, byte_fallback,
    treat_whitespace_as_suffix, unk_surface and the unk/bos/eos/pad piece names.

Other trainer settings (the input and output paths, thread count, sentence sampling, ...) only
steered training; when they changed the result, the pieces differ.

  tokenizer_model.py compare EXPECTED ACTUAL   exit 0 when the two encode alike; otherwise
                                               exit 1 and list what differs on stderr
  tokenizer_model.py strip-paths MODEL...      rewrite the recorded paths (trainer input,
                                               model prefix, rule files) to their base names,
                                               in place; the pieces are untouched

Exit status 2: a file is missing or is not a SentencePiece model. Needs Debian's
python3-sentencepiece (for sentencepiece_model_pb2) and python3-protobuf.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List

# (sub-message, field): where a ModelProto records a file name of the training machine.
PATH_FIELDS = (
    ("trainer_spec", "input"),
    ("trainer_spec", "model_prefix"),
    ("trainer_spec", "seed_sentencepieces_file"),  # newer SentencePiece only
    ("normalizer_spec", "normalization_rule_tsv"),
    ("denormalizer_spec", "normalization_rule_tsv"),
)
# The trainer_spec fields that SentencePiece reads when it encodes or decodes.
ENCODING_TRAINER_FIELDS = (
    "model_type", "byte_fallback", "treat_whitespace_as_suffix", "unk_surface",
    "unk_piece", "bos_piece", "eos_piece", "pad_piece",
)
MAX_LISTED_PIECES = 5


class TokenizerModelError(Exception):
    """The file is missing or is not a SentencePiece model."""


def _model_pb2():
    try:
        from sentencepiece import sentencepiece_model_pb2  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise TokenizerModelError(
            f"cannot read SentencePiece models: {e} (install Debian's python3-sentencepiece "
            "and python3-protobuf; scripts/install-deps.sh does)") from e
    return sentencepiece_model_pb2


def parse(data: bytes, name: str = "<bytes>"):
    """A ModelProto from a tokenizer.model's bytes."""
    pb2 = _model_pb2()
    proto = pb2.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError and friends
        raise TokenizerModelError(f"{name}: not a SentencePiece model ({e})") from e
    if len(proto.pieces) == 0:
        raise TokenizerModelError(f"{name}: not a SentencePiece model (no pieces)")
    return proto


def load(path: Path):
    """The ModelProto stored in `path`."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise TokenizerModelError(f"{path}: {e.strerror or e}") from e
    return parse(data, str(path))


def _has_field(message, field: str) -> bool:
    return field in message.DESCRIPTOR.fields_by_name


def _describe_piece(proto, index: int) -> str:
    piece = proto.pieces[index]
    type_name = piece.DESCRIPTOR.fields_by_name["type"].enum_type.values_by_number[piece.type].name
    return f"{piece.piece!r} score {piece.score:.9g} {type_name}"


def _describe_value(message, field: str) -> str:
    value = getattr(message, field)
    descriptor = message.DESCRIPTOR.fields_by_name[field]
    if descriptor.enum_type is not None:
        return descriptor.enum_type.values_by_number[value].name
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    if isinstance(value, str):
        return repr(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _field_differences(expected, actual, prefix: str, fields) -> List[str]:
    found = []
    for field in fields:
        if not _has_field(expected, field) or getattr(expected, field) == getattr(actual, field):
            continue
        found.append(f"{prefix}.{field}: {_describe_value(expected, field)} vs "
                     f"{_describe_value(actual, field)}")
    return found


def differences(expected, actual) -> List[str]:
    """What makes `actual` encode differently from `expected` (two ModelProtos), one line per
    difference, each read as `expected vs actual`; empty when they encode alike."""
    found = []
    n_expected, n_actual = len(expected.pieces), len(actual.pieces)
    if n_expected != n_actual:
        found.append(f"vocabulary size: {n_expected} vs {n_actual} pieces")
    changed = [i for i in range(min(n_expected, n_actual))
               if (expected.pieces[i].piece, expected.pieces[i].score, expected.pieces[i].type)
               != (actual.pieces[i].piece, actual.pieces[i].score, actual.pieces[i].type)]
    for i in changed[:MAX_LISTED_PIECES]:
        found.append(f"piece {i}: {_describe_piece(expected, i)} vs {_describe_piece(actual, i)}")
    if len(changed) > MAX_LISTED_PIECES:
        found.append(f"... {len(changed)} of the first {min(n_expected, n_actual)} pieces differ "
                     f"in all")
    for spec in ("normalizer_spec", "denormalizer_spec"):
        fields = [f.name for f in getattr(expected, spec).DESCRIPTOR.fields
                  if (spec, f.name) not in PATH_FIELDS]
        found += _field_differences(getattr(expected, spec), getattr(actual, spec), spec, fields)
    found += _field_differences(expected.trainer_spec, actual.trainer_spec, "trainer_spec",
                                ENCODING_TRAINER_FIELDS)
    return found


def embedded_paths(proto) -> List[str]:
    """`spec.field: value` for every recorded file name that is an absolute path."""
    found = []
    for spec, field in PATH_FIELDS:
        message = getattr(proto, spec)
        if not _has_field(message, field):
            continue
        value = getattr(message, field)
        for name in ([value] if isinstance(value, str) else list(value)):
            if os.path.isabs(name):
                found.append(f"{spec}.{field}: {name}")
    return found


def strip_paths(proto) -> bool:
    """Rewrites every recorded file name to its base name (/a/b/train.txt -> train.txt);
    returns whether anything changed. Nothing that encoding reads is touched."""
    changed = False
    for spec, field in PATH_FIELDS:
        message = getattr(proto, spec)
        if not _has_field(message, field) or not proto.HasField(spec):
            continue
        value = getattr(message, field)
        if isinstance(value, str):
            if value and os.path.basename(value) != value:
                setattr(message, field, os.path.basename(value))
                changed = True
        else:
            names = [os.path.basename(name) for name in value]
            if names != list(value):
                value[:] = names
                changed = True
    return changed


def _compare(expected_path: Path, actual_path: Path) -> int:
    found = differences(load(expected_path), load(actual_path))
    if not found:
        return 0
    print(f"tokenizer_model: {actual_path} encodes differently from {expected_path} "
          f"(expected vs actual):", file=sys.stderr)
    for line in found:
        print(f"  {line}", file=sys.stderr)
    return 1


def _strip(paths: List[Path]) -> int:
    for path in paths:
        original = load(path)
        proto = type(original)()
        proto.CopyFrom(original)
        if not strip_paths(proto):
            print(f"tokenizer_model: {path}: no paths to strip")
            continue
        if differences(original, proto):
            raise AssertionError(f"{path}: stripping the paths changed the encoding")
        path.write_bytes(proto.SerializeToString())
        print(f"tokenizer_model: {path}: input {list(proto.trainer_spec.input)}, "
              f"model_prefix {proto.trainer_spec.model_prefix!r}")
    return 0


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    compare = commands.add_parser("compare", help="exit 0 when two tokenizers encode alike")
    compare.add_argument("expected", type=Path)
    compare.add_argument("actual", type=Path)
    strip = commands.add_parser("strip-paths", help="drop the trainer's directories, in place")
    strip.add_argument("models", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "compare":
            return _compare(args.expected, args.actual)
        return _strip(args.models)
    except TokenizerModelError as e:
        print(f"tokenizer_model: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
