#!/usr/bin/python3
"""Oracle for test_json: Python's json module (and numpy for float32 digits).

usage: json_oracle.py docs COUNT SEED
    Random JSON documents. For each: the source text (randomly formatted, sometimes with
    \\u escapes), then json.dumps compact (separators=(',', ':'), ensure_ascii=False), then
    json.dumps(indent=2, ensure_ascii=False). Each record is "<byte length>\\n<bytes>".
usage: json_oracle.py float32 COUNT SEED
    Random float32 bit patterns. One line each: "<uint32 bits in hex> <repr>", where repr is
    numpy's shortest unique float32 digits laid out like Python's float repr.
"""
import json
import random
import struct
import sys


def rand_double(r):
    k = r.randrange(6)
    if k == 0:
        while True:
            d = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
            if d == d and d not in (float("inf"), float("-inf")):
                return d
    if k == 1:
        return r.choice([0.0, -0.0, 1.0, 0.1, 0.5, 1e16, 1e15, 1e-4, 1e-5, 123456789012345680.0,
                         5e-324, 1.7976931348623157e308, 2.5, -3.75, 1e22, 1e21])
    if k == 2:
        return round(r.uniform(-1000, 1000), r.randrange(0, 8))
    if k == 3:
        return r.uniform(-1, 1) * 10 ** r.randrange(-30, 30)
    if k == 4:
        return float(r.randrange(-10**6, 10**6))
    return struct.unpack("<f", struct.pack("<I", r.getrandbits(32) & 0x7f7fffff))[0]


def rand_string(r):
    pool = ["a", "b", "Z", " ", "\"", "\\", "/", "\n", "\t", "\r", "\b", "\f", "\x00", "\x01", "\x1f",
            "\x7f", "é", "ß", "中", "文", "😀", "🌍", "\u2028", "\ufeff", "key", "tool_calls"]
    return "".join(r.choice(pool) for _ in range(r.randrange(0, 12)))


def rand_value(r, depth):
    k = r.randrange(9 if depth < 5 else 6)
    if k == 0:
        return None
    if k == 1:
        return r.choice([True, False])
    if k == 2:
        return r.choice([0, -1, 1, 2**63 - 1, -2**63, r.randrange(-2**63, 2**63), r.randrange(-1000, 1000)])
    if k == 3:
        return rand_double(r)
    if k in (4, 5):
        return rand_string(r)
    if k in (6, 7):
        return [rand_value(r, depth + 1) for _ in range(r.randrange(0, 5))]
    return {rand_string(r): rand_value(r, depth + 1) for _ in range(r.randrange(0, 5))}


def emit(out, text):
    b = text.encode("utf-8")
    out.write(str(len(b)).encode() + b"\n" + b)


def docs(count, seed):
    r = random.Random(seed)
    out = sys.stdout.buffer
    for _ in range(count):
        v = rand_value(r, 0)
        indent = r.choice([None, 0, 1, 4])
        src = json.dumps(v, ensure_ascii=r.choice([True, False]), indent=indent)
        emit(out, src)
        emit(out, json.dumps(v, ensure_ascii=False, separators=(",", ":")))
        emit(out, json.dumps(v, ensure_ascii=False, indent=2))


def py_layout(sign, digits, exp10):
    """digits: shortest significant digits; value = d.ddd * 10**exp10. Python repr layout."""
    digits = digits.rstrip("0") or "0"
    decpt = exp10 + 1
    n = len(digits)
    if decpt <= -4 or decpt > 16:
        m = digits[0] + ("." + digits[1:] if n > 1 else "")
        return "%s%se%s%02d" % (sign, m, "-" if decpt - 1 < 0 else "+", abs(decpt - 1))
    if decpt <= 0:
        return sign + "0." + "0" * (-decpt) + digits
    if decpt < n:
        return sign + digits[:decpt] + "." + digits[decpt:]
    return sign + digits + "0" * (decpt - n) + ".0"


def float32(count, seed):
    import numpy as np
    r = random.Random(seed)
    for i in range(count):
        bits = r.getrandbits(32)
        if i < 8:
            bits = [0, 0x80000000, 0x3f800000, 0x3dcccccd, 0x7f7fffff, 1, 0x3727c5ac, 0x5a0e1bca][i]
        f = np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]
        if not np.isfinite(f):
            continue
        s = np.format_float_scientific(f, unique=True, trim="-")
        sign = ""
        if s.startswith("-"):
            sign, s = "-", s[1:]
        mant, exp = s.split("e")
        print("%08x %s" % (bits, py_layout(sign, mant.replace(".", ""), int(exp))))


if __name__ == "__main__":
    mode, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    {"docs": docs, "float32": float32}[mode](count, seed)
