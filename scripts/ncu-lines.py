#!/usr/bin/python3
"""Nsight Compute's PC samples by function and source line, for a source page without CUDA lines.

    /usr/bin/python3 scripts/ncu-lines.py CUBIN SOURCE_CSV[.gz] [--entry NAME] [--lines N] [--skip HEX]

SOURCE_CSV is `ncu --page source --csv --print-source sass` of one kernel (scripts/device-attn-ncu.sh
writes attn-ncu-CELLS-src.csv.gz); CUBIN is that kernel's -lineinfo cubin: best the profiled
binary's own (device-attn-ncu.sh takes it out with `cuobjdump -xelf` and runs this there), else
one built here (nvcc with the probe's flags and `-cubin -arch=sm_90`; BENCHMARKS "gpu-next36"). The ncu 2025.3
on the device gives the SASS of a -lineinfo build without its CUDA lines, so this maps each sampled
address to a line through the cubin's .debug_line (scripts/sass-local.py's reader). A build here and
the device's need not lay the functions out alike (gpu-next36: the same source gave callees a few
hundred bytes apart), so each function of the cubin is placed in the page by itself: the shift
that lines up the most of its shared-memory, local-memory, barrier, call and return instructions
with the page's mnemonics. A function matched at under half of those (or with none) is reported
and its samples counted as not placed. --skip HEX leaves out samples below that offset (the probe's polling loop of
the workgroups without an item: 0x540).
"""
import argparse
import bisect
import collections
import csv
import gzip
import importlib.util
import os
import re
import struct

spec = importlib.util.spec_from_file_location("sass_local", os.path.join(os.path.dirname(__file__), "sass-local.py"))
sl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sl)

KNOWN = {0x984: "LDS", 0x388: "STS", 0x983: "LDL", 0x387: "STL", 0xB1D: "BAR", 0x944: "CALL", 0x950: "RET"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("csv")
    ap.add_argument("--entry", default="", help="a text section whose name holds this (default: the largest)")
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--functions", type=int, default=12, help="functions listed, each with its five largest stall reasons")
    ap.add_argument("--skip", default="0", help="leave out samples below this offset (hex)")
    a = ap.parse_args()
    elf = sl.Elf(a.cubin)
    texts = [i for i, s in enumerate(elf.secs) if s["name"].startswith(".text.") and a.entry in s["name"]]
    if not texts:
        raise SystemExit(f"error: no text section of {a.cubin} holds '{a.entry}'")
    sec = max(texts, key=lambda i: elf.secs[i]["size"])
    text = elf.data(sec)
    rows = sl.line_rows(elf).get(sec, [])
    addrs = [r[0] for r in rows]
    fns = elf.functions(sec) or [(0, len(text), elf.secs[sec]["name"][6:])]
    opener = gzip.open if a.csv.endswith(".gz") else open
    with opener(a.csv, "rt", errors="replace", newline="") as f:
        page = list(csv.reader(f))
    hi = next((i for i, r in enumerate(page) if any(c.startswith("Warp Stall Sampling (All") for c in r)), None)
    if hi is None:
        raise SystemExit(f"error: {a.csv} has no 'Warp Stall Sampling (All Samples)' column")
    h = page[hi]
    ix = {c: i for i, c in enumerate(h)}
    col = next(c for c in h if c.startswith("Warp Stall Sampling (All"))
    body = [r for r in page[hi + 1:] if r and r[0].strip().startswith("0x")]
    if not body:
        raise SystemExit(f"error: {a.csv} has no SASS rows")
    base = int(body[0][0], 16)
    mnem, samples = {}, {}
    reasons = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]

    def num(r, c):
        try:
            return float(r[ix[c]].replace(",", ""))
        except (KeyError, ValueError, IndexError):
            return 0.0

    for r in body:
        off = int(r[0], 16) - base
        m = re.match(r"(@!?U?P\w+\s+)?([A-Z0-9]+)", r[1].strip())
        mnem[off] = m.group(2) if m else ""
        samples[off] = (num(r, col), {c[6:]: num(r, c) for c in reasons})
    by_name = collections.defaultdict(list)
    for off, mn in mnem.items():
        by_name[mn].append(off)
    # Each function's shift into the page: every marked instruction votes for the shifts that
    # put it on a page instruction of its mnemonic; the most votes win, a tie going to the shift
    # nearest the function's own address. Under half of its marked instructions lined up, or
    # none marked at all: not placed.
    placed = []
    for st, en, name in fns:
        pos = [(p - st, KNOWN[struct.unpack_from("<Q", text, p)[0] & 0xFFF]) for p in range(st, en - 15, 16)
               if struct.unpack_from("<Q", text, p)[0] & 0xFFF in KNOWN]
        votes = collections.Counter()
        for p, m in pos:
            for cand in by_name.get(m, []):
                votes[cand - p] += 1
        best = max(votes.values(), default=0)
        shift = min((sh for sh, v in votes.items() if v == best), key=lambda sh: abs(sh - st), default=st)
        if pos and best * 2 >= len(pos):
            placed.append((shift, shift + (en - st), st, name))
        else:
            print(f"unplaced: {sl.demangle(name)[:90]} ({best} of {len(pos)} marked instructions line up)")
    skip = int(a.skip, 16)
    per_fn = collections.Counter()
    per_fn_why = collections.defaultdict(collections.Counter)
    per_line = collections.defaultdict(collections.Counter)
    total = unplaced = 0.0
    for off, (n, why) in samples.items():
        if n == 0 or off < skip:
            continue
        total += n
        # the smallest placed function holding the address (placements may overlap)
        hold = [p for p in placed if p[0] <= off < p[1]]
        if not hold:
            unplaced += n
            continue
        shift, _, st, name = min(hold, key=lambda p: p[1] - p[0])
        local = st + (off - shift)
        k = bisect.bisect_right(addrs, local) - 1
        where = f"{rows[k][1].split('/')[-1]}:{rows[k][2]}" if k >= 0 else "?"
        per_fn[name] += n
        for reason, v in why.items():
            per_fn_why[name][reason] += v
        c = per_line[where]
        c["samples"] += n
        for reason, v in why.items():
            c[reason] += v
    print(f"{total:.0f} samples, {unplaced:.0f} not placed; by function:")
    total = max(total, 1.0)
    for name, n in per_fn.most_common(a.functions):
        top = sorted(((v, k) for k, v in per_fn_why[name].items()), reverse=True)[:5]
        print(f"{n:8.0f} {100 * n / total:5.1f}%  {sl.demangle(name)[:100]}")
        print(f"{'':16}{', '.join(f'{k} {100 * v / max(n, 1):.0f}%' for v, k in top if v)}")
    print(f"\nby source line (the first {a.lines}; the largest stall reasons):")
    for where, c in sorted(per_line.items(), key=lambda kv: -kv[1]["samples"])[:a.lines]:
        top = sorted(((v, k) for k, v in c.items() if k != "samples"), reverse=True)[:3]
        print(f"{c['samples']:8.0f} {100 * c['samples'] / total:5.1f}%  {where:34s} {', '.join(f'{k} {v:.0f}' for v, k in top if v)}")


if __name__ == "__main__":
    main()
