#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tables of the workload benchmarks (bench_workloads.cpp, global_max in bench_two_level.cpp): per input,
the time of every method, calm's speed-up over each peer, and geometric means.

  python3 perf/workloads_table.py FILE.json [FILE.json ...] > table.md
"""
import json
import math
import sys
from collections import OrderedDict


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        for b in doc.get("benchmarks", []):
            if b.get("error_occurred"):
                rows.append((b["name"], None, b.get("error_message", "error")))
                continue
            rows.append((b["name"], b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]], b.get("GBps")))
    return rows


def split(name):
    parts = [p for p in name.split("/") if not p.startswith("min_time") and not p.startswith("iterations:") and p != "manual_time"]
    if parts[0] == "global_max":  # global_max/<method>/<order>/1
        return parts[0], parts[2], parts[1]
    return parts[0], "/".join(parts[1:-1]), parts[-1]


def main(paths, only=None):
    groups = OrderedDict()
    for name, ms, gbps in load(paths):
        w, inp, method = split(name)
        if only is not None and w not in only:
            continue
        groups.setdefault(w, OrderedDict()).setdefault(inp, OrderedDict())[method] = (ms, gbps)
    for w, inputs in groups.items():
        methods = []
        for per in inputs.values():
            for m in per:
                if m not in methods:
                    methods.append(m)
        peers = [m for m in methods if not m.startswith("calm") and m not in ("naive", "cull", "block_reduce", "block_atomic")]
        print(f"\n### {w}\n")
        print("time in ms (GB/s); `calm` = the routine's default choice" + (", checks off" if w in ("spmv", "count_duplicates") else ""))
        print()
        head = ["input"] + methods + [f"calm vs {p}" for p in peers]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        logs = {p: [] for p in peers}
        for inp, per in inputs.items():
            cells = [inp]
            for m in methods:
                if m in per and per[m][0] is not None:
                    ms, g = per[m]
                    cells.append(f"{ms:.3f} ({float(g):.0f})" if g else f"{ms:.3f}")
                else:
                    cells.append("-")
            for p in peers:
                if "calm" in per and p in per and per["calm"][0] and per[p][0]:
                    r = per[p][0] / per["calm"][0]
                    logs[p].append(math.log(r))
                    cells.append(f"{r:.2f}x")
                else:
                    cells.append("-")
            print("| " + " | ".join(cells) + " |")
        for p in peers:
            if logs[p]:
                print(f"\ncalm vs {p}: geometric mean {math.exp(sum(logs[p]) / len(logs[p])):.2f}x over {len(logs[p])} inputs "
                      f"(min {math.exp(min(logs[p])):.2f}x, max {math.exp(max(logs[p])):.2f}x; above 1: calm faster)")


if __name__ == "__main__":
    main(sys.argv[1:])
