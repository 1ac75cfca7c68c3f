#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a tree would reach on a measured bulk file of the fresh or unseen sets, before any GPU run of it: each input's
forced strategies' times (a GPU file of CALM_BULK_SET=fresh/unseen) and its sampled statistics from a host "stats" run
of the same keys (the statistics are the keys' alone), walked through the tree as perf/fit_tree.py walks it (the sampled
path's cost added where the walk samples). Prints the geometric mean and minimum of best / chosen per set, the inputs
below 0.9, and those below 0.95x one atomic per key.

    python3 perf/experiments/predict_dev_sets.py GPU.json HOST_STATS.json --tree algorithms/choice/models/hopper.inc
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fit_tree as ft  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpu")
    ap.add_argument("host_stats")
    ap.add_argument("--tree", required=True)
    ap.add_argument("--path-us", type=float, default=6.0, help="what a sampled choice adds (fit_tree's --sampled-path-us)")
    a = ap.parse_args()
    stats = {}
    with open(a.host_stats) as f:
        for b in json.load(f)["benchmarks"]:
            p = b["name"].split("/")
            if len(p) > 6 and p[6] == "stats":
                stats[(p[1], p[3], int(p[4]), int(p[5]))] = b
    raw = ft.read_cases([a.gpu])
    inputs = {}
    for k, r in raw.items():
        b = stats.get((k[0], k[2], k[3], k[4]))
        if b is None:
            continue
        vb = 8 if k[1] == "scatter_f64" else 4
        # the device's table facts (the host's block differs): an H100/H200 block holds 232,448 bytes
        fits = (k[3] + 1) * vb <= ft.H100_BLOCK_BYTES
        copies = ft.replication_for(k[3], vb, ft.H100_COPY_BUDGET, 8 if k[1] == "hist_u32" else 32) if fits else 0
        f = r["features"]
        f.update(log2_bins=math.log2(k[3]), log2_items=float(k[4]), op_kind=0.0, value_bytes=float(vb), is_float=float(k[1] != "hist_u32"),
                 counting=float(k[1] == "hist_u32"), fits_block=float(fits), log2_copies=math.log2(copies) if copies else -1.0)
        for name in ["warp_level", "block_level", "clustering", "line_share", "hot_share"]:
            f[name] = float(b.get(name, 0.0))
        f["line_repeats"] = float(b.get("line_repeats", r.get("line_repeats", 0.0)))
        inputs[k] = r
    inputs = ft.complete_inputs(inputs, sampled_path=a.path_us * 1e-6)
    tree = ft.read_model(a.tree)
    for s in sorted({k[0] for k in inputs}):
        keys = sorted(k for k in inputs if k[0] == s)
        xs = [(inputs[k]["best"] / ft.chosen_time(inputs, k, tree)[0], k) for k in keys]
        naive = [(inputs[k]["times"]["naive"] / ft.chosen_time(inputs, k, tree)[0], k) for k in keys]
        print(f"{s}: {len(xs)} inputs, geo mean {ft.geo([x for x, _ in xs]):.3f}, min {min(xs)[0]:.3f}")
        for x, k in sorted(xs):
            if x < 0.9:
                print(f"  below 0.9: {'/'.join(map(str, k[1:5]))} {x:.3f} ({ft.chosen_time(inputs, k, tree)[1]}; best {min(inputs[k]['times'], key=inputs[k]['times'].get)})")
        for x, k in sorted(naive):
            if x < 0.95:
                print(f"  below 0.95x naive: {'/'.join(map(str, k[1:5]))} {x:.3f}")


if __name__ == "__main__":
    main()
