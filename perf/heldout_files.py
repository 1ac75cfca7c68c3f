#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the derived held-out files that eval_tree.py reads, from calm's compact result files.

    python3 perf/heldout_files.py OUT.json IN.json key:NAME        # one sub-document of a file that holds several
    python3 perf/heldout_files.py OUT.json IN.json runs:TAG[,TAG]  # per case, the medians over those tagged runs

For runs, each case gets the median of `median_us` (what eval_tree.py reads) and of `real_time` over the
runs; other fields are the first run's. Cases that failed (error_occurred) are kept as they are. The
held-out table's header names the files and selections (perf/results/cuda-h100-2026-11-27-heldout-table.md).
"""
import json
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_tree import median_row  # noqa: E402


def main():
    if len(sys.argv) != 4 or not sys.argv[3].startswith(("key:", "runs:")):
        sys.exit(__doc__)
    out, path, select = sys.argv[1:4]
    with open(path) as f:
        doc = json.load(f)
    if select.startswith("key:"):
        part = doc[select[4:]]
    else:
        tags = set(select[5:].split(","))
        by_name = OrderedDict()
        for b in doc["benchmarks"]:
            # a case that failed (a strategy forced on a table it cannot take) stays: eval_tree.py counts it as
            # never best, and drops an input that lacks a case
            if b.get("run") in tags and b.get("run_type") != "aggregate":
                by_name.setdefault(b["name"], []).append(b)
        rows = [median_row(runs) for runs in by_name.values()]
        if not rows:
            sys.exit("heldout_files: no benchmark of runs " + select[5:] + " in " + path)
        part = {"context": doc["context"], "benchmarks": rows}
    with open(out, "w") as f:
        json.dump(part, f)
    print(out, len(part["benchmarks"]), "benchmarks")


if __name__ == "__main__":
    main()
