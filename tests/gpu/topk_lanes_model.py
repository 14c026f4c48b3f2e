#!/usr/bin/python3
"""A model of the megakernel's router top-k rounds (kernels/mk_model_ops.hpp, mk_router_select),
lane by lane, and of the workgroup form's ranks (mk_router_select_wg), against num::top_k's
sequential scan (engine/src/model/numerics.hpp).

Lane j holds experts j, j + 32, ... (up to 8 a lane). Each round: every lane finds its first
untaken expert and its largest non-NaN untaken one; a round with a NaN candidate takes the warp's
first untaken expert when that expert's probability is NaN; otherwise the warp's best is the
largest value, then the lowest id, found either by the two warp reductions on the float bits
(NVIDIA) or by the shuffle tree (elsewhere). Both must equal the scan for every slot, the
expert id and the probability's bits, with every lane agreeing, NaN patterns included; K runs
from 1 to E in some cases. The ranks must equal the scan on every case without a NaN
probability and where every probability is NaN (the softmax gives nothing in between). The old
rounds (each lane's candidate by `v > best` with NaN kept, then the tree) are modelled too, and
must fail on some NaN case, so the model can tell the two apart. Exit status 0 when every case
agrees."""
import random
import struct
import sys

NAN = float("nan")


def isnan(x):
    return x != x


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def scan_top_k(p, k):  # num::top_k: the ids and their probabilities, slot by slot
    idx = []
    for _ in range(k):
        best = -1
        for i in range(len(p)):
            if i in idx:
                continue
            if best < 0 or p[i] > p[best]:
                best = i
        idx.append(best)
    return [(i, bits(p[i])) for i in idx]


def tree(bp, bi):  # the shuffle tree over 32 lanes: xor partners, every lane ends on one value
    bp, bi = list(bp), list(bi)
    o = 16
    while o >= 1:
        nbp, nbi = list(bp), list(bi)
        for lane in range(32):
            op, oi = bp[lane ^ o], bi[lane ^ o]
            if oi >= 0 and (bi[lane] < 0 or op > bp[lane] or (op == bp[lane] and oi < bi[lane])):
                nbp[lane], nbi[lane] = op, oi
        bp, bi = nbp, nbi
        o >>= 1
    return bp, bi


def lanes_top_k(p, k, reductions, old=False):
    E = len(p)
    taken = [0] * 32
    out = []
    for _ in range(k):
        bp, bi, fv, fi = [0.0] * 32, [-1] * 32, [0.0] * 32, [-1] * 32
        for lane in range(32):
            for kk in range(8):
                i = lane + 32 * kk
                if i >= E or taken[lane] & (1 << kk):
                    continue
                if old:
                    if bi[lane] < 0 or p[i] > bp[lane]:
                        bp[lane], bi[lane] = p[i], i
                    continue
                if fi[lane] < 0:
                    fi[lane], fv[lane] = i, p[i]
                if not isnan(p[i]) and (bi[lane] < 0 or p[i] > bp[lane]):
                    bp[lane], bi[lane] = p[i], i
        decided = False
        if not old and any(fi[l] >= 0 and isnan(fv[l]) for l in range(32)):
            f = min(fi[l] if fi[l] >= 0 else 0x7FFFFFFF for l in range(32))
            if isnan(fv[f % 32]):
                decided, bp, bi = True, [fv[f % 32]] * 32, [f] * 32
        use_tree = not decided
        if use_tree and reductions and not (old and any(isnan(x) for x in bp)):
            use_tree = False
            keys = [bits(bp[l]) if bi[l] >= 0 else 0 for l in range(32)]
            top = max(keys)
            ids = [bi[l] if bi[l] >= 0 and keys[l] == top else 0xFFFFFFFF for l in range(32)]
            i = min(ids)
            bi = [-1 if i == 0xFFFFFFFF else i] * 32
            bp = [struct.unpack("<f", struct.pack("<I", top))[0] if i != 0xFFFFFFFF else 0.0] * 32
        if use_tree:
            bp, bi = tree(bp, bi)
        # every lane must agree on the id and the probability: the taken bit is set by the lane
        # holding the winner, and slot `slot` is written by one lane
        if len(set(bi)) != 1 or len(set(bits(x) for x in bp)) != 1:
            return None
        w = bi[0]
        out.append((w, bits(bp[0])))
        if w >= 0:
            taken[w % 32] |= 1 << (w // 32)
    return out


def rank_top_k(p, k):
    """mk_router_select_wg (ARBOR_MK_WG_SELECT): expert i's slot is its rank, the count of j with
    (j < i) + bits(p_j) > bits(p_i) (unsigned, 32 bits), or i itself when p_i is NaN; an expert
    whose rank is under k writes its slot. Its softmax gives no NaN or every one NaN, so the
    cases with some NaN (None here) do not reach it."""
    if any(isnan(x) for x in p) and not all(isnan(x) for x in p):
        return None
    b = [bits(x) for x in p]
    slots = [None] * k
    for i in range(len(p)):
        r = i if isnan(p[i]) else sum(1 for j in range(len(p)) if ((b[j] + (1 if j < i else 0)) & 0xFFFFFFFF) > b[i])
        if r < k:
            if slots[r] is not None:  # two experts on one slot: the ranks are not a permutation
                return [("clash", r)]
            slots[r] = (i, b[i])
    return slots


def probabilities(rng, E, pattern):
    # exp_f(l - m) / sum: +0 or positive, or every one NaN (a non-finite logit)
    if pattern == "all_nan":
        return [NAN] * E
    # (1.0 the largest a probability can be; 1e-40 and 2**-149 subnormal, the last one ulp above +0)
    vals = [rng.choice([0.0, rng.random(), rng.random() * 1e-30, 0.5, 1.0, 1e-40, 2.0**-149]) for _ in range(E)]
    if pattern == "ties":
        vals = [rng.choice([0.0, 0.25, 0.5, 2.0**-149]) for _ in range(E)]
    if pattern == "some_nan":  # not produced by the softmax, but the rule must hold anyway
        for _ in range(rng.randint(1, 4)):
            vals[rng.randrange(E)] = NAN
    return [struct.unpack("<f", struct.pack("<f", v))[0] for v in vals]


def main():
    rng = random.Random(11)
    cases = fails = old_fails = 0
    for n in range(8000):
        E = rng.choice([3, 8, 31, 32, 33, 60, 64, 128, 160, 256]) if n % 2 else rng.randint(1, 256)
        # mostly the few slots models use; every tenth case up to every expert (slots past 32
        # go through memory in the kernel, the same rounds)
        k = rng.randint(1, E) if n % 10 == 0 else rng.randint(1, min(E, 10))
        pattern = ["plain", "ties", "all_nan", "some_nan"][n % 4]
        p = probabilities(rng, E, pattern)
        want = scan_top_k(p, k)
        for reductions in (True, False):
            cases += 1
            got = lanes_top_k(p, k, reductions)
            if got != want:
                fails += 1
                if fails <= 5:
                    print(f"FAIL E={E} k={k} {pattern} reductions={reductions}: {got} != {want}")
            if lanes_top_k(p, k, reductions, old=True) != want:
                old_fails += 1
        ranked = rank_top_k(p, k)
        if ranked is not None or pattern in ("plain", "ties", "all_nan"):
            cases += 1
            if ranked != want:
                fails += 1
                if fails <= 5:
                    print(f"FAIL E={E} k={k} {pattern} ranks: {ranked} != {want}")
    print(f"{cases} cases, {fails} failed; the old rounds failed {old_fails}")
    if old_fails == 0:
        print("FAIL the model cannot tell the old rounds from the new")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
