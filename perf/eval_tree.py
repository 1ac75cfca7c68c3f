#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Score strategy::automatic on held-out inputs: its measured time (sampling included) against the best
forced strategy of each input, beside naive atomics and cub::DeviceHistogram from the same run.

    python3 perf/eval_tree.py HELDOUT.json [MORE.json ...] [--report FILE.md] [--automatic automatic_launches]

HELDOUT.json: `CALM_BULK_SET=heldout calm_bench --benchmark_filter=^bulk/heldout/`. Speeds are time(best) /
time(automatic): 1.0 is the per-input best; "% off optimal" is the paper's (000 Tables 1-2), the mean
extra time over the best. With several files, what a later file measured of an input replaces what the
files before it measured (a run of automatic and the strategies that can be best, beside an earlier
run's slow ones).
"""
import argparse
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_tree import SCORED_ONLY, STRATEGIES, complete_inputs, emit, geo, read_cases  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("heldout", nargs="+")
    ap.add_argument("--report")
    ap.add_argument("--automatic", default="automatic",
                    help="the case scored as automatic (automatic_launches: the same choice without CUDA's recorded graph)")
    a = ap.parse_args()
    inputs = {k: r for k, r in complete_inputs(read_cases(a.heldout, auto_case=a.automatic)).items() if "auto" in r}
    if not inputs:
        sys.exit("eval_tree: no held-out inputs with an automatic case in " + " ".join(a.heldout))
    groups = defaultdict(list)
    rows = []
    for k in sorted(inputs):
        r = inputs[k]
        every = dict(r["times"], **r.get("scored_only", {}))  # thread_private too, where the file has it
        best = min(every, key=lambda s: every[s])
        x = every[best] / r["auto"]
        names = STRATEGIES + SCORED_ONLY
        ran = names[r["auto_ran"] - 1] if 1 <= r.get("auto_ran", -1) <= len(names) else "?"
        vs_naive = r["times"]["naive"] / r["auto"]
        vs_cub = r["cub"] / r["auto"] if "cub" in r else None
        groups[("all", "")].append(x)
        groups[(k[1], "")].append(x)
        groups[(k[1], k[2])].append(x)
        rows.append((k, x, best, ran, vs_naive, vs_cub, r["stats_time"]))
    lines = [f"# strategy::automatic on held-out inputs\n", f"Files: `{' + '.join(a.heldout)}`, {len(inputs)} inputs, case `{a.automatic}`.\n",
             "Speed = time of the per-input best forced strategy / time of automatic (sampling included).\n",
             "| workload | distribution | inputs | geo mean | min | % off optimal |", "| --- | --- | --- | --- | --- | --- |"]
    for (wl, d) in sorted(groups, key=lambda g: (g[0] == "all", g)):
        xs = groups[(wl, d)]
        off = 100 * (sum(1 / x for x in xs) / len(xs) - 1)
        lines.append(f"| {wl} | {d or 'every'} | {len(xs)} | {geo(xs):.3f} | {min(xs):.3f} | {off:.1f}% |")
    lines += ["\nEvery input (speed over the best; naive and CUB: automatic's speed-up over them):\n",
              "| workload | distribution | bins | log2 keys | speed | best | automatic ran | x naive | x CUB | sampling us |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k, x, best, ran, vn, vc, st in rows:
        cub = f"{vc:.2f}" if vc is not None else "-"
        lines.append(f"| {k[1]} | {k[2]} | {k[3]} | {k[4]} | {x:.3f} | {best} | {ran} | {vn:.2f} | {cub} | {st * 1e6:.1f} |")
    emit(lines, a.report)


if __name__ == "__main__":
    main()
