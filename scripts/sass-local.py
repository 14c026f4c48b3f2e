#!/usr/bin/python3
"""Which source lines of a cubin issue local-memory instructions (LDL, STL), and how many.

    /usr/bin/python3 scripts/sass-local.py CUBIN [--lines N] [--ops LDL,STL,...]

The cubin must be built with -lineinfo (its .debug_line maps each SASS address to a source
line). No disassembler is needed: every sm_70+ SASS instruction is 16 bytes with its opcode in
the low 12 bits, and LDL (0x983) and STL (0x387) are read from there; the other names in OPS
(the table below) can be counted the same way. Prints, per function (a .text section, or in
a whole-program cubin's one section the range of a symbol ENTRY$FUNCTION) and per source line,
the static count of each opcode: where ptxas put its spills,
its ABI saves around calls and the arrays it could not keep in registers. Static counts, not
executions: a line inside a hot loop counts once. scripts/local-mem-map.sh builds the
megakernel's cubin and runs this on it.
"""
import argparse
import bisect
import collections
import struct
import subprocess

# Opcode (low 12 bits of the first 64-bit word) -> name, sm_70 to sm_90. Each was checked
# against ptxas's output for a known kernel (local array, shared and global loads and stores).
OPS = {0x983: "LDL", 0x387: "STL", 0x984: "LDS", 0x388: "STS", 0x381: "LDG", 0x981: "LDG", 0x386: "STG",
       0x986: "STG", 0x980: "LD", 0x385: "ST", 0x985: "ST", 0xb1d: "BAR", 0x944: "CALL", 0x950: "RET"}


def leb(d, p, signed=False):
    """The LEB128 number at d[p] and the offset after it."""
    v = s = 0
    while True:
        b = d[p]
        p += 1
        v |= (b & 0x7F) << s
        s += 7
        if b < 0x80:
            if signed and b & 0x40:
                v -= 1 << s
            return v, p


class Elf:
    def __init__(self, path):
        self.d = d = open(path, "rb").read()
        if d[:4] != b"\x7fELF" or d[4] != 2:
            raise SystemExit(f"error: {path}: not a 64-bit ELF file (a cubin)")
        shoff = struct.unpack_from("<Q", d, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        self.secs = []
        for i in range(shnum):
            name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", d, shoff + i * shentsize)
            self.secs.append(dict(name=name, type=typ, off=off, size=size, link=link, info=info))
        so = self.secs[shstrndx]["off"]
        for s in self.secs:
            e = d.index(b"\0", so + s["name"])
            s["name"] = d[so + s["name"]:e].decode()
        self.by_name = {s["name"]: i for i, s in enumerate(self.secs)}

    def data(self, i):
        s = self.secs[i]
        return self.d[s["off"]:s["off"] + s["size"]]

    def symbols(self):
        """(value, section, size, type, name) of each symbol, by index."""
        st = self.secs[self.by_name[".symtab"]]
        so = self.secs[st["link"]]["off"]
        out = []
        for p in range(st["off"], st["off"] + st["size"], 24):
            name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", self.d, p)
            e = self.d.index(b"\0", so + name)
            out.append((value, shndx, size, info & 0xF, self.d[so + name:e].decode()))
        return out

    def functions(self, sec):
        """[(start, end, name)] of the function symbols inside text section sec, sorted. A
        whole-program cubin keeps its non-inlined device functions in the entry's section, each a
        symbol named ENTRY$FUNCTION."""
        fns = sorted((v, v + n, name.split("$")[-1]) for v, shndx, n, typ, name in self.symbols()
                     if shndx == sec and typ == 2 and n > 0)
        return fns


def line_rows(elf):
    """{text section index: [(address, file, line), ...] sorted} from .debug_line."""
    li = elf.by_name.get(".debug_line")
    if li is None:
        print("warning: the cubin has no .debug_line (build it with -lineinfo): no source lines")
        return {}
    d = elf.data(li)
    # set_address operands are relocated against a symbol of the function's section.
    reloc = {}
    syms = elf.symbols()
    for i, s in enumerate(elf.secs):
        if s["name"] == ".rela.debug_line":
            for p in range(s["off"], s["off"] + s["size"], 24):
                off, info, add = struct.unpack_from("<QQq", elf.d, p)
                value, shndx = syms[info >> 32][:2]
                reloc[off] = (shndx, value + add)
    texts = [i for i, s in enumerate(elf.secs) if s["name"].startswith(".text.")]
    unrelocated = texts[0] if len(texts) == 1 else None
    rows = collections.defaultdict(list)
    p = 0
    while p < len(d):
        unit_len = struct.unpack_from("<I", d, p)[0]
        end = p + 4 + unit_len
        version = struct.unpack_from("<H", d, p + 4)[0]
        if not 2 <= version <= 4:
            raise SystemExit(f"error: .debug_line unit at {p}: DWARF version {version} (this reads 2 to 4)")
        hdr_len = struct.unpack_from("<I", d, p + 6)[0]
        q = p + 10
        min_inst = d[q]
        q += 1
        if version >= 4:
            q += 1  # maximum_operations_per_instruction
        q += 1  # default_is_stmt
        line_base = struct.unpack_from("<b", d, q)[0]
        line_range, opcode_base = d[q + 1], d[q + 2]
        std_len = list(d[q + 3:q + 3 + opcode_base - 1])
        q += 3 + opcode_base - 1
        dirs = [""]
        while d[q]:
            e = d.index(b"\0", q)
            dirs.append(d[q:e].decode())
            q = e + 1
        q += 1
        files = [None]
        while d[q]:
            e = d.index(b"\0", q)
            name = d[q:e].decode()
            q = e + 1
            di, q = leb(d, q)
            _, q = leb(d, q)
            _, q = leb(d, q)
            files.append(name if name.startswith("/") or not dirs[di] else dirs[di] + "/" + name)
        q = p + 10 + hdr_len
        sec, addr, fil, line = None, 0, 1, 1

        def emit():
            if sec is not None:
                f = files[fil] if 0 < fil < len(files) else "?"
                rows[sec].append((addr, f, line))

        while q < end:
            op = d[q]
            q += 1
            if op >= opcode_base:
                adj = op - opcode_base
                addr += (adj // line_range) * min_inst
                line += line_base + adj % line_range
                emit()
            elif op == 0:
                n, q = leb(d, q)
                sub = d[q]
                if sub == 1:  # the sequence ends here: addresses from addr on have no line
                    if sec is not None:
                        rows[sec].append((addr, "?", 0))
                    sec, addr, fil, line = None, 0, 1, 1
                elif sub == 2:
                    # RELA: the address is the symbol's value plus the addend; the bytes in place
                    # are not added. Without a relocation (not seen in nvcc's cubins) the bytes
                    # are the address in the only text section there is.
                    if q + 1 in reloc:
                        sec, addr = reloc[q + 1]
                    else:
                        sec, addr = unrelocated, struct.unpack_from("<Q", d, q + 1)[0]
                        if sec is None:
                            raise SystemExit(f"error: .debug_line offset {q + 1}: an address without a "
                                             "relocation in a cubin of several text sections")
                q += n
            elif op == 1:
                emit()
            elif op == 2:
                v, q = leb(d, q)
                addr += v * min_inst
            elif op == 3:
                v, q = leb(d, q, True)
                line += v
            elif op == 4:
                fil, q = leb(d, q)
            elif op == 8:
                addr += ((255 - opcode_base) // line_range) * min_inst
            elif op == 9:
                addr += struct.unpack_from("<H", d, q)[0]
                q += 2
            else:
                for _ in range(std_len[op - 1]):
                    _, q = leb(d, q)
        p = end
    for r in rows.values():
        r.sort(key=lambda row: row[0])  # stable: of the rows at one address, the last emitted applies
    return rows


def demangle(names):
    """c++filt's reading of a mangled name, or the name itself where there is no c++filt."""
    try:
        return subprocess.run(["c++filt", names], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--lines", type=int, default=40, help="source lines to print (40)")
    ap.add_argument("--ops", default="LDL,STL", help="opcode names to count (LDL,STL)")
    args = ap.parse_args()
    path, top, want = args.cubin, args.lines, args.ops.split(",")
    codes = {c: n for c, n in OPS.items() if n in want}
    if set(codes.values()) != set(want):
        raise SystemExit(f"error: --ops takes names from {sorted(set(OPS.values()))}")
    elf = Elf(path)
    rows = line_rows(elf)
    per_line = collections.Counter()
    per_fn = collections.defaultdict(collections.Counter)
    total = collections.Counter()
    insts = 0
    for i, s in enumerate(elf.secs):
        if not s["name"].startswith(".text."):
            continue
        text = elf.data(i)
        r = rows.get(i, [])
        addrs = [a for a, _, _ in r]
        fns = elf.functions(i)
        starts = [f[0] for f in fns]
        for a in range(0, len(text) - 15, 16):
            insts += 1
            name = codes.get(struct.unpack_from("<Q", text, a)[0] & 0xFFF)
            if name is None:
                continue
            j = bisect.bisect_right(starts, a) - 1
            fn = fns[j][2] if j >= 0 and a < fns[j][1] else s["name"][6:]
            k = bisect.bisect_right(addrs, a) - 1
            where = f"{r[k][1].split('/')[-1]}:{r[k][2]}" if k >= 0 else "?"
            per_line[(where, name)] += 1
            per_fn[fn][name] += 1
            total[name] += 1
    print(f"{insts} SASS instructions in {len(per_fn)} functions with those opcodes; "
          + ", ".join(f"{n} {total[n]}" for n in want))
    print("\nby function (the first 20):")
    for fn, c in sorted(per_fn.items(), key=lambda kv: -sum(kv[1].values()))[:20]:
        print("  " + " ".join(f"{n} {c[n]:5d}" for n in want) + "  " + demangle(fn)[:110])
    lines = collections.defaultdict(collections.Counter)
    for (where, name), n in per_line.items():
        lines[where][name] += n
    print(f"\nby source line (the first {top}):")
    for where, c in sorted(lines.items(), key=lambda kv: -sum(kv[1].values()))[:top]:
        print("  " + " ".join(f"{n} {c[n]:5d}" for n in want) + "  " + where)


if __name__ == "__main__":
    main()
