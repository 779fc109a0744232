"""Reads and writes safetensors files without the safetensors package.

Layout: an 8-byte little-endian header length N, N bytes of JSON header
({name: {"dtype", "shape", "data_offsets": [begin, end]}, optional "__metadata__"}), then the
raw little-endian data, offsets relative to the data start. The byte buffer is fully indexed
with no holes. The writer pads the header with spaces to a multiple of 8 bytes and puts wider
dtypes first, so every tensor starts aligned to its element size when the file is
memory-mapped (what the C++ loader does). I8 holds the matrices of int8 weight-only model
directories (slotserve_ref.int8_weights); it sorts after every float dtype.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Dict, Mapping, Optional, Union

import numpy as np
import torch

# safetensors dtype name -> (torch dtype, bytes per element)
DTYPES = {
    "F32": (torch.float32, 4),
    "F16": (torch.float16, 2),
    "BF16": (torch.bfloat16, 2),
    "I8": (torch.int8, 1),
}
_NAME_OF_TORCH_DTYPE = {torch_dtype: name for name, (torch_dtype, _) in DTYPES.items()}
# Largest header accepted when reading; real headers of our models are a few KB.
_MAX_HEADER_BYTES = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    """A safetensors file is malformed or holds something this reader does not support."""


def safetensors_dtype_name(dtype: torch.dtype) -> str:
    """The safetensors name of a torch dtype ("F32", "I8", ...; str(dtype) if unsupported)."""
    return _NAME_OF_TORCH_DTYPE.get(dtype, str(dtype))


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        # numpy has no bfloat16: write the raw 16-bit patterns.
        array = tensor.view(torch.int16).numpy().astype("<i2", copy=False)
    else:
        array = tensor.numpy()
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return array.tobytes()


def save_file(tensors: Mapping[str, torch.Tensor], path: Union[str, Path],
              metadata: Optional[Mapping[str, str]] = None) -> None:
    """Writes `tensors` (F32, F16, BF16 or I8 torch tensors) to `path`."""
    for name, tensor in tensors.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise SafetensorsError(f"invalid tensor name {name!r}")
        if tensor.dtype not in _NAME_OF_TORCH_DTYPE:
            raise SafetensorsError(f"tensor {name}: dtype {tensor.dtype} is not supported, "
                                   f"expected one of float32, float16, bfloat16, int8")
    # Wider elements first, then by name: every offset stays a multiple of its element size.
    order = sorted(tensors, key=lambda n: (-DTYPES[_NAME_OF_TORCH_DTYPE[tensors[n].dtype]][1], n))
    header: Dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks = []
    offset = 0
    for name in order:
        tensor = tensors[name]
        data = _tensor_bytes(tensor)
        header[name] = {
            "dtype": _NAME_OF_TORCH_DTYPE[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for chunk in chunks:
            f.write(chunk)


def load_file(path: Union[str, Path]) -> Dict[str, torch.Tensor]:
    """Reads every tensor of a safetensors file; tensors keep their stored dtype."""
    tensors, _ = load_file_with_metadata(path)
    return tensors


def load_file_with_metadata(path: Union[str, Path]):
    """Returns (tensors, metadata dict) and validates the layout on the way."""
    path = Path(path)
    blob = path.read_bytes()
    if len(blob) < 8:
        raise SafetensorsError(f"{path}: file is {len(blob)} bytes, too short for the 8-byte "
                               f"header length")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > min(_MAX_HEADER_BYTES, len(blob) - 8):
        raise SafetensorsError(f"{path}: header length {header_len} exceeds the file "
                               f"({len(blob)} bytes)")
    try:
        header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorsError(f"{path}: header is not valid UTF-8 JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header must be a JSON object")
    data = memoryview(blob)[8 + header_len:]
    metadata = header.pop("__metadata__", None) or {}
    tensors: Dict[str, torch.Tensor] = {}
    spans = []
    for name, entry in header.items():
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise SafetensorsError(f"{path}: tensor {name}: entry must have exactly dtype, "
                                   f"shape and data_offsets, got {entry!r}")
        dtype_name, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype_name not in DTYPES:
            raise SafetensorsError(f"{path}: tensor {name}: dtype {dtype_name!r} is not "
                                   f"supported, expected one of {', '.join(DTYPES)}")
        if (not isinstance(shape, list) or
                not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                        for s in shape)):
            raise SafetensorsError(f"{path}: tensor {name}: shape must be a list of "
                                   f"non-negative integers, got {shape!r}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or
                not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)):
            raise SafetensorsError(f"{path}: tensor {name}: data_offsets must be [begin, end], "
                                   f"got {offsets!r}")
        begin, end = offsets
        torch_dtype, item_size = DTYPES[dtype_name]
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not 0 <= begin <= end <= len(data) or end - begin != numel * item_size:
            raise SafetensorsError(
                f"{path}: tensor {name}: data_offsets {offsets} do not fit shape {shape} of "
                f"{dtype_name} ({numel * item_size} bytes) inside {len(data)} data bytes")
        spans.append((begin, end, name))
        raw = bytes(data[begin:end])
        if dtype_name == "BF16":
            array = np.frombuffer(raw, dtype="<i2").astype(np.int16)
            tensor = torch.from_numpy(array.copy()).view(torch.bfloat16)
        elif dtype_name == "I8":
            tensor = torch.from_numpy(np.frombuffer(raw, dtype=np.int8).copy())
        else:
            array = np.frombuffer(raw, dtype="<f4" if dtype_name == "F32" else "<f2")
            tensor = torch.from_numpy(array.astype(array.dtype.newbyteorder("=")).copy())
        tensors[name] = tensor.reshape(shape)
    # The data buffer must be covered exactly once: no holes, no overlaps, nothing trailing.
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise SafetensorsError(f"{path}: tensor {name} starts at data byte {begin}, "
                                   f"expected {position} (holes and overlaps are not allowed)")
        position = end
    if position != len(data):
        raise SafetensorsError(f"{path}: {len(data) - position} data bytes after the last "
                               f"tensor are not indexed")
    return tensors, metadata
