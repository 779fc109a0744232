"""safetensors_io against the file format itself (not only against its own reader)."""

import json
import struct
import tempfile
import unittest
from pathlib import Path

import numpy as np
import torch

from slotserve_ref.safetensors_io import SafetensorsError, load_file, load_file_with_metadata, save_file


class SafetensorsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.path = Path(self._tmp.name) / "t.safetensors"
        gen = torch.Generator().manual_seed(0)
        self.tensors = {
            "b.f32": torch.randn(3, 5, generator=gen),
            "a.f16": torch.randn(7, generator=gen).half(),
            "c.bf16": torch.randn(2, 3, 1, generator=gen).bfloat16(),
            "0.i8": torch.randint(-128, 128, (3, 5), generator=gen, dtype=torch.int8),
            "scalarish": torch.tensor([1.5]),
            "empty": torch.zeros(0, 4),
        }

    def tearDown(self):
        self._tmp.cleanup()

    def header(self):
        blob = self.path.read_bytes()
        (length,) = struct.unpack("<Q", blob[:8])
        return blob, length, json.loads(blob[8:8 + length])

    def test_round_trip_is_exact_for_every_dtype(self):
        save_file(self.tensors, self.path, metadata={"format": "pt"})
        loaded, metadata = load_file_with_metadata(self.path)
        self.assertEqual(metadata, {"format": "pt"})
        self.assertEqual(set(loaded), set(self.tensors))
        for name, tensor in self.tensors.items():
            self.assertEqual(loaded[name].dtype, tensor.dtype, name)
            self.assertEqual(loaded[name].shape, tensor.shape, name)
            self.assertTrue(torch.equal(loaded[name], tensor), name)

    def test_layout_on_disk(self):
        save_file(self.tensors, self.path)
        blob, length, header = self.header()
        self.assertEqual(length % 8, 0, "header padded to 8 bytes")
        data = blob[8 + length:]
        entry = header["b.f32"]
        self.assertEqual(entry["dtype"], "F32")
        self.assertEqual(entry["shape"], [3, 5])
        begin, end = entry["data_offsets"]
        self.assertEqual(begin % 4, 0)
        np.testing.assert_array_equal(np.frombuffer(data[begin:end], "<f4").reshape(3, 5),
                                      self.tensors["b.f32"].numpy())
        begin, end = header["a.f16"]["data_offsets"]
        np.testing.assert_array_equal(np.frombuffer(data[begin:end], "<f2"),
                                      self.tensors["a.f16"].numpy())
        # BF16 = the upper 16 bits of the float32 pattern (after round-to-nearest-even).
        begin, end = header["c.bf16"]["data_offsets"]
        bits = np.frombuffer(data[begin:end], "<u2").astype(np.uint32) << 16
        np.testing.assert_array_equal(bits.view(np.float32).reshape(2, 3, 1),
                                      self.tensors["c.bf16"].float().numpy())
        # I8: one signed byte per element, after every wider dtype (even though its name sorts
        # first)
        begin, end = header["0.i8"]["data_offsets"]
        np.testing.assert_array_equal(np.frombuffer(data[begin:end], np.int8).reshape(3, 5),
                                      self.tensors["0.i8"].numpy())
        self.assertEqual(end, len(data))
        # wider dtypes first; the data is covered without holes
        spans = sorted(tuple(e["data_offsets"]) for e in header.values() if "dtype" in e)
        self.assertEqual(spans[0][0], 0)
        self.assertEqual(spans[-1][1], len(data))
        self.assertTrue(all(a[1] == b[0] for a, b in zip(spans, spans[1:])))

    def write_raw(self, header: dict, data: bytes, declared_length=None):
        header_bytes = json.dumps(header).encode()
        length = len(header_bytes) if declared_length is None else declared_length
        self.path.write_bytes(struct.pack("<Q", length) + header_bytes + data)

    def assert_refused(self, pattern):
        with self.assertRaisesRegex(SafetensorsError, pattern):
            load_file(self.path)

    def test_refuses_malformed_files(self):
        self.path.write_bytes(b"\x01\x02")
        self.assert_refused("too short")
        self.write_raw({}, b"", declared_length=1000)
        self.assert_refused("exceeds the file")
        self.write_raw({"x": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}, bytes(8))
        self.assert_refused("F64.*not supported")
        self.write_raw({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8))
        self.assert_refused("do not fit shape")
        self.write_raw({"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8))
        self.assert_refused("starts at data byte 4, expected 0")
        self.write_raw({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, bytes(8))
        self.assert_refused("4 data bytes after the last tensor")
        self.write_raw({"x": {"dtype": "F32", "shape": [1]}}, bytes(4))
        self.assert_refused("exactly dtype, shape and data_offsets")
        self.path.write_bytes(struct.pack("<Q", 3) + b"{x}")
        self.assert_refused("not valid UTF-8 JSON")

    def test_refuses_unsupported_tensor(self):
        with self.assertRaisesRegex(SafetensorsError, "float64.*not supported"):
            save_file({"x": torch.zeros(2, dtype=torch.float64)}, self.path)


if __name__ == "__main__":
    unittest.main()
