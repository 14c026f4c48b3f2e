#!/usr/bin/python3
"""Where a profiled megakernel pass's levels lose time between workgroups.

Reads the trace that `arbor-cli bench --profile F` writes (F.trace.json style: one "X" event per
workgroup (tid) for every stage it ran and for every barrier wait, "wait Lk" being the wait after
level k) and prints, per level and summed over the pass:
  release skew  the spread of the wait's end over the workgroups (how unevenly the barrier's
                release reaches them: after it, the fastest workgroup is already working);
  arrival span  the spread of the wait's start (the slowest workgroup's work against the fastest);
  level         from the earliest release of the previous barrier to the last arrival at this one
                (the level's critical span: its work, its skew and its slowest item);
  start lag     from a workgroup's release to the start of its first stage event of the next level
                (the descriptor reads and dispatch before the first item), median over workgroups.
Usage: scripts/profile-skew.py TRACE.json [--top N]      scripts/profile-skew.py --self-test
"""
import bisect
import json
import statistics
import sys


def analyse(events):
    waits = {}   # level -> {tid: (start, end)}
    stages = {}  # tid -> [(ts, name)]
    for e in events:
        if e.get("ph") != "X":
            continue
        name, tid, ts, dur = e["name"], int(e["tid"]), float(e["ts"]), float(e["dur"])
        if name.startswith("wait L"):
            waits.setdefault(int(name[6:]), {})[tid] = (ts, ts + dur)
        else:
            stages.setdefault(tid, []).append((ts, name))
    starts_of = {tid: sorted(ts for ts, _ in v) for tid, v in stages.items()}
    rows = []
    prev_release = None  # earliest release of the previous barrier
    for level in sorted(waits):
        w = waits[level]
        starts = [s for s, _ in w.values()]
        ends = [e for _, e in w.values()]
        lags = []
        for tid, (_, end) in w.items():
            ts = starts_of.get(tid, [])
            i = bisect.bisect_left(ts, end)  # the first stage event at or after the release
            if i < len(ts):
                lags.append(ts[i] - end)
        rows.append({
            "level": level,
            "release_skew": max(ends) - min(ends),
            "arrival_span": max(starts) - min(starts),
            "level_span": max(starts) - prev_release if prev_release is not None else None,
            "start_lag": statistics.median(lags) if lags else None,
        })
        prev_release = min(ends)
    return rows


def report(rows, top):
    def total(key):
        return sum(r[key] for r in rows if r[key] is not None)
    print(f"levels {len(rows)}: release skew {total('release_skew'):.1f} us, arrival span "
          f"{total('arrival_span'):.1f} us, level spans {total('level_span'):.1f} us, start lag (median a "
          f"workgroup) {total('start_lag'):.1f} us, summed over the levels")
    print(f"the {top} levels of largest release skew:")
    print(f"{'level':>6} {'release skew':>13} {'arrival span':>13} {'level span':>11} {'start lag':>10}")
    for r in sorted(rows, key=lambda r: -r["release_skew"])[:top]:
        span = f"{r['level_span']:.2f}" if r["level_span"] is not None else "-"
        lag = f"{r['start_lag']:.2f}" if r["start_lag"] is not None else "-"
        print(f"{r['level']:>6} {r['release_skew']:>13.2f} {r['arrival_span']:>13.2f} {span:>11} {lag:>10}")


def self_test():
    # Two workgroups, two levels: level 0's work ends at 10 (wg 0) and 14 (wg 1); the barrier
    # releases wg 0 at 15 and wg 1 at 17; their next stages start at 16 and 19.
    ev = [
        {"name": "0 a", "ph": "X", "tid": 0, "ts": 0, "dur": 10},
        {"name": "0 a", "ph": "X", "tid": 1, "ts": 0, "dur": 14},
        {"name": "wait L0", "ph": "X", "tid": 0, "ts": 10, "dur": 5},
        {"name": "wait L0", "ph": "X", "tid": 1, "ts": 14, "dur": 3},
        {"name": "1 b", "ph": "X", "tid": 0, "ts": 16, "dur": 4},
        {"name": "1 b", "ph": "X", "tid": 1, "ts": 19, "dur": 2},
        {"name": "wait L1", "ph": "X", "tid": 0, "ts": 20, "dur": 2},
        {"name": "wait L1", "ph": "X", "tid": 1, "ts": 21, "dur": 1},
    ]
    rows = analyse(ev)
    want = [
        {"level": 0, "release_skew": 2.0, "arrival_span": 4.0, "level_span": None, "start_lag": 1.5},
        {"level": 1, "release_skew": 0.0, "arrival_span": 1.0, "level_span": 6.0, "start_lag": None},
    ]
    if rows != want:
        print("self-test FAILED:", rows)
        return 1
    print("self-test passed")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--top"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    top = int(argv[3]) if len(argv) == 4 else 15
    try:
        with open(argv[1]) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        print(f"profile-skew: cannot read a trace from {argv[1]}: {e}", file=sys.stderr)
        return 2
    rows = analyse(events)
    if not rows:
        print(f"profile-skew: {argv[1]} has no barrier waits (a pass of one level, or not a megakernel trace)",
              file=sys.stderr)
        return 2
    report(rows, top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
