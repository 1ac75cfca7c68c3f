#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plot the perf suite's Google Benchmark JSON: throughput against table size.

    python3 perf/plot.py results.json [--out-dir DIR] [--prefix NAME]

One PNG per workload (histogram, scatter_f32, histogram_u8, ...), named <prefix>-<workload>.png,
with one panel per key distribution: GB/s of input read against the number of bins (log scale), a
line per implementation (calm's strategies and the peers that ran), and the device read rate measured
in the same process as a dashed line, the limit for a scatter that reads its input once. Needs
matplotlib (Debian: python3-matplotlib; cmake/install_deps.sh plot).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  (the same parsing as the tables)

DIST_ORDER = ["uniform", "runs32", "halfhot", "zipf", "image"]


def plot(doc, out_dir, prefix):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ctx = doc.get("context", {})
    rows, columns, copy = report.collect(doc)
    try:
        read = float(ctx.get("calm_read_GBps", "nan"))
    except ValueError:
        read = float("nan")
    written = []
    for workload in sorted({w for (w, _, _) in rows}):
        dists = sorted({d for (w, d, _) in rows if w == workload}, key=lambda d: (DIST_ORDER.index(d) if d in DIST_ORDER else 99, d))
        impls = [c for c in columns if any(c in cells for (w, _, _), cells in rows.items() if w == workload)]
        n = len(dists)
        cols = min(n, 3)
        nrows = (n + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False, sharey=True)
        colors = plt.get_cmap("tab20" if len(impls) > 10 else "tab10")
        for i, d in enumerate(dists):
            ax = axes[i // cols][i % cols]
            for k, impl in enumerate(impls):
                pts = sorted((b, cells[impl][0]) for (w, dd, b), cells in rows.items() if w == workload and dd == d and impl in cells)
                if not pts:
                    continue
                style = "-" if impl.startswith("calm") or impl in ("automatic",) else "--" if impl in ("cub", "rocprim", "omp_reduction", "std_atomic", "kokkos") else "-"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=3, label=impl, color=colors(k % colors.N),
                        linewidth=2.2 if impl in ("calm", "automatic") else 1.2)
            if read == read:  # not NaN
                ax.axhline(read, color="black", linestyle=":", linewidth=1, label="read rate")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(d)
            ax.set_xlabel("bins")
            if i % cols == 0:
                ax.set_ylabel("GB/s of input read")
            ax.grid(True, which="major", alpha=0.3)
        for j in range(n, nrows * cols):
            axes[j // cols][j % cols].axis("off")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), fontsize=8, frameon=False)
        m = re.search(r"_log2n(\d+)$", workload)  # the bulk sweep's workloads name their own key count
        keys = 2 ** int(m.group(1)) if m else ctx.get("calm_keys", "?")
        fig.suptitle("%s: %s (%s), %s keys, %s" % (workload, ctx.get("calm_device", "?"), ctx.get("calm_backend", "?"),
                                                  keys, ctx.get("date", "?")[:10]), fontsize=10)
        fig.tight_layout(rect=(0, 0.08, 1, 0.95))
        path = os.path.join(out_dir, "%s-%s.png" % (prefix, workload))
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--out-dir", default=None, help="where the PNGs go (default: beside the JSON)")
    ap.add_argument("--prefix", default=None, help="file name prefix (default: the JSON's name without .json)")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        doc = json.load(f)
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.json))
    prefix = args.prefix or os.path.splitext(os.path.basename(args.json))[0]
    for p in plot(doc, out_dir, prefix):
        print(p)


if __name__ == "__main__":
    main(sys.argv[1:])
