"""A small, independent GGUF reader in numpy (no llama.cpp, no Arbor code).

Reads the header, the metadata and the tensor table of a GGUF v2/v3 file and decodes F32, F16,
BF16 and Q8_0 tensors to float64 numpy arrays shaped like PyTorch/HF weights (rows first: a GGUF
tensor with ne = [cols, rows] becomes an array of shape (rows, cols)).

Used by the float64 reference (ref_numpy.py) and the transformers comparison (ref_hf.py).
"""
import struct

import numpy as np

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
# ggml type -> (block elements, block bytes)
_TYPE_GEOM = {0: (1, 4), 1: (1, 2), 30: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
              8: (32, 34), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
              20: (32, 18), 23: (256, 136), 39: (32, 17)}
TYPE_NAMES = {0: "F32", 1: "F16", 30: "BF16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0",
              10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 20: "IQ4_NL", 23: "IQ4_XS", 39: "MXFP4"}


class GgufTensor:
    def __init__(self, name, ne, ttype, offset):
        self.name, self.ne, self.type, self.offset = name, ne, ttype, offset

    @property
    def type_name(self):
        return TYPE_NAMES.get(self.type, str(self.type))


class Gguf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.pos = 0
        magic = self.buf[:4]
        if magic != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.pos = 4
        self.version = self._u32()
        n_tensors = self._u64()
        n_kv = self._u64()
        self.meta = {}
        for _ in range(n_kv):
            key = self._str()
            vtype = self._u32()
            self.meta[key] = self._value(vtype)
        self.tensors = {}
        for _ in range(n_tensors):
            name = self._str()
            nd = self._u32()
            ne = [self._u64() for _ in range(nd)]
            ttype = self._u32()
            off = self._u64()
            self.tensors[name] = GgufTensor(name, ne, ttype, off)
        align = int(self.meta.get("general.alignment", 32))
        self.data_start = (self.pos + align - 1) // align * align

    # -- primitive readers
    def _unpack(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def _u32(self):
        return self._unpack("<I")

    def _u64(self):
        return self._unpack("<Q")

    def _str(self):
        n = self._u64()
        s = self.buf[self.pos:self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return s

    def _value(self, vtype):
        if vtype == 8:
            return self._str()
        if vtype == 9:
            etype = self._u32()
            n = self._u64()
            if etype in _SCALAR and etype != 7:
                dt = np.dtype(_SCALAR[etype])
                arr = np.frombuffer(self.buf, dtype=dt, count=n, offset=self.pos)
                self.pos += n * dt.itemsize
                return arr
            return [self._value(etype) for _ in range(n)]
        return self._unpack(_SCALAR[vtype])

    # -- tensors
    def raw(self, name):
        t = self.tensors[name]
        blk, size = _TYPE_GEOM[t.type]
        n = int(np.prod(t.ne))
        nbytes = n // blk * size
        start = self.data_start + t.offset
        return t, self.buf[start:start + nbytes]

    def tensor(self, name):
        """float64 array with the GGUF dims reversed (ne[0] is the last axis)."""
        t, b = self.raw(name)
        if t.type == 0:
            a = np.frombuffer(b, dtype="<f4").astype(np.float64)
        elif t.type == 1:
            a = np.frombuffer(b, dtype="<f2").astype(np.float64)
        elif t.type == 30:
            u = np.frombuffer(b, dtype="<u2").astype(np.uint32) << 16
            a = u.view(np.float32).astype(np.float64)
        elif t.type == 8:  # Q8_0: blocks of (f16 scale, 32 x int8), value = scale * q
            blocks = np.frombuffer(b, dtype=np.dtype([("d", "<f2"), ("q", "i1", 32)]))
            a = (blocks["d"].astype(np.float64)[:, None] * blocks["q"].astype(np.float64)).reshape(-1)
        else:
            raise ValueError(f"tensor {name}: type {t.type_name} is not decoded by this reader")
        return a.reshape(list(reversed(t.ne)))

    def get(self, key, default=None):
        return self.meta.get(key, default)

    def has(self, name):
        return name in self.tensors
