#!/usr/bin/python3
# The megakernel's row-dot loops in a SASS listing, counted. Take the listing on the device (the
# image has cuobjdump; this machine does not): ARBOR_LR_SASS=1 in scripts/device-local-run.sh
# writes $OUT/sass-NAME.gz for each build. Then, here:
#   /usr/bin/python3 scripts/sass-loops.py sass-NAME.gz [MIN_IDP]
# finds every loop of the megakernel (a backward branch and the instructions up to it, at most
# 400) with at least MIN_IDP (default 8) IDP.4A instructions, and prints, one line per kind of loop
# with how many such loops there are: its instructions, IDP.4A, copies into vector registers from
# uniform ones (IMAD.U32 Rx, RZ, RZ, URy / MOV Rx, URy: constants rematerialized), R2UR (a memory
# descriptor moved into uniform registers again) and its loads by kind (LDL: a spill read back).
# Only innermost loops count: a body holding another loop's backward branch is left out. gpu-next40
# used it to find the copies and R2UR in the IQ4_XS loops; removing the copies (and the index
# arithmetic) cut a two-row step from 216 to 171-176 instructions and did not make decode faster.
import collections
import gzip
import re
import sys

if len(sys.argv) < 2 or (len(sys.argv) > 2 and not sys.argv[2].isdigit()):
    sys.exit("usage: sass-loops.py LISTING[.gz] [MIN_IDP]")
path = sys.argv[1]
min_idp = int(sys.argv[2]) if len(sys.argv) > 2 else 8
try:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        lines = f.read().split("\n")
except (OSError, EOFError, UnicodeDecodeError) as e:
    sys.exit(f"error: {path}: cannot read the listing ({e})")
starts = [i for i, l in enumerate(lines) if "Function : _ZN5arbor3gpu10megakernel" in l]
if not starts:
    sys.exit(f"error: {path}: no megakernel function in this listing")
pat = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
ins = []  # (address, opcode, text)
for l in lines[starts[0] + 1:]:
    if "Function :" in l:
        break
    m = pat.search(l)
    if m:
        text = m.group(2).strip()
        toks = text.split()
        ins.append((int(m.group(1), 16), toks[1] if toks[0].startswith("@") else toks[0], text))
index = {a: i for i, (a, _, _) in enumerate(ins)}


def back_target(i):
    # The index a backward branch at i jumps to, or None.
    a, op, text = ins[i]
    if not op.startswith("BRA"):
        return None
    m = re.search(r"0x([0-9a-f]+)", text.split("BRA", 1)[1])
    if not m or int(m.group(1), 16) >= a or int(m.group(1), 16) not in index:
        return None
    return index[int(m.group(1), 16)]


targets = [back_target(i) for i in range(len(ins))]
kinds = collections.Counter()
for i, t in enumerate(targets):
    if t is None or i - t >= 400:
        continue
    if any(u is not None and u >= t for u in targets[t:i]):
        continue  # an enclosing loop: its inner loop counts on its own
    body = ins[t:i + 1]
    idp = sum(1 for b in body if b[1].startswith("IDP"))
    if idp < min_idp:
        continue
    copies = sum(1 for b in body if (b[1].startswith("IMAD") or b[1] == "MOV") and
                 re.search(r"RZ, RZ, UR\d+$|MOV R\d+, UR\d+$", b[2]))
    r2ur = sum(1 for b in body if b[1] == "R2UR")
    loads = collections.Counter(b[1] for b in body if b[1].startswith("LD"))
    kinds[(len(body), idp, copies, r2ur, tuple(sorted(loads.items())))] += 1
print("loops instructions IDP copies R2UR loads")
for (n, idp, copies, r2ur, loads), count in sorted(kinds.items()):
    print(count, n, idp, copies, r2ur, " ".join(f"{k}:{v}" for k, v in loads))
