#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn the perf suite's Google Benchmark JSON into a markdown table.

    python3 perf/report.py results.json [more.json ...] [--out table.md]

One table per workload; rows are (distribution, bins); columns are calm's automatic choice first, then the
strategies and peers that ran, in GB/s of input read, each with its fraction of the device read rate measured
in the same process (16-byte loads; the copy bandwidth for older results that lack it). The fastest cell of a
row is bold; "-" marks a case that did not run for that input.
"""
import argparse
import os
import json
import sys
from collections import OrderedDict


WORKLOADS = ("spmv", "kmeans", "sum_compacted", "count_duplicates", "count_duplicates_any")
AUTOMATIC = ("automatic", "calm")  # calm's own choice, the first columns where a table has them


def number(x):
    """A rate with three significant figures at most (and no more decimals than it needs)."""
    x = float(x)
    if x >= 100:
        return "%.0f" % x
    return ("%.3g" % x) if x >= 1 else ("%.2g" % x)


def load(path):
    with open(path) as f:
        return json.load(f)


def collect(doc):
    """The cases of one results file as (rows, columns, copy): rows maps (workload, dist, bins) to
    {implementation: (GB/s, fraction of the read rate)}; columns lists the implementations in order."""
    rows = OrderedDict()
    columns = []
    copy = None
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("error_occurred"):
            continue
        parts = b["name"].split("/")
        parts = [p for p in parts if p != "manual_time" and not p.startswith("iterations:") and not p.startswith("min_time:")]
        if parts[0] in WORKLOADS:  # perf/bench_workloads.cpp: tables of their own (workloads_table.py)
            continue
        if parts[0] == "copy":
            copy = b.get("GBps")
            continue
        if parts[0] in ("characterize", "setup_cost"):  # not throughput of input: characterization() below
            continue
        if parts[0] == "bulk":  # bulk/<set>/<workload>/<dist>/<bins>/<log2 keys>/<strategy> (perf/bench_bulk.cpp)
            if len(parts) < 7 or parts[6] in ("stats", "sampling"):
                continue
            parts = ["bulk_%s_log2n%s" % (parts[2], parts[5]), parts[6], parts[3], parts[4]]  # one table per key count
        if parts[0] == "cpu":  # cpu/<workload>/<implementation>/<dist>/<bins> (perf/bench_cpu.cpp)
            parts = ["cpu_" + parts[1]] + parts[2:]
        if len(parts) < 4:
            continue
        workload, strategy, dist, bins = parts[0], parts[1], parts[2], parts[3]
        if not bins.isdigit():
            continue
        key = (workload, dist, int(bins))
        if strategy not in columns:
            columns.append(strategy)
        frac = b.get("of_read", b.get("of_copy", 0.0))
        rows.setdefault(key, {})[strategy] = (b.get("GBps", 0.0), frac)
    return rows, columns, copy


def characterization(doc):
    """perf/bench_characterize.cpp's atomics (G updates/s and ns per dependent update, shared and global
    memory, per pattern and n) and perf/bench_setup_cost.cpp's set-up steps, as markdown ("" if absent)."""
    cells, setup = {}, None
    for b in doc.get("benchmarks", []):
        parts = b["name"].split("/")
        if parts[0] == "characterize" and len(parts) >= 5 and not b.get("error_occurred"):
            mem, pattern, n, kind = parts[1], parts[2], int(parts[3]), parts[4]
            value = b.get("Gupdates_per_s") if kind == "throughput" else b.get("ns_per_update")
            cells.setdefault((pattern, n), {})[(mem, kind)] = value
        elif parts[0] == "setup_cost" and "step_ns" in b:
            setup = b
    out = []
    if cells:
        out.append("Atomics (perf/bench_characterize.cpp): G updates/s, and ns per dependent update")
        out.append("")
        out.append("| pattern | n | shared: G updates/s | shared: ns | global: G updates/s | global: ns |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for (pattern, n), c in sorted(cells.items()):
            vals = ["%.1f" % c[k] if c.get(k) is not None else "-" for k in
                    [("shared", "throughput"), ("shared", "latency"), ("global", "throughput"), ("global", "latency")]]
            out.append("| %s | %d | %s |" % (pattern, n, " | ".join(vals)))
        out.append("")
    if setup is not None:
        steps = ", ".join("%s %.2f" % (k[:-len("_setup_steps")], v) for k, v in sorted(setup.items()) if k.endswith("_setup_steps"))
        out.append("Set-up cost s of the warp strategies (perf/bench_setup_cost.cpp), in steps of %.4f ns: %s" % (setup["step_ns"], steps))
        out.append("")
    return "\n".join(out)


def table(doc):
    ctx = doc.get("context", {})
    rows, columns, copy = collect(doc)
    out = []
    read = ctx.get("calm_read_GBps")
    out.append("device: %s; backend: %s; keys: %s; copy bandwidth %s GB/s (read + write); read rate %s GB/s" % (
        ctx.get("calm_device", "?"), ctx.get("calm_backend", "?"), ctx.get("calm_keys", "?"),
        number(ctx.get("calm_copy_GBps", copy or 0)), number(read) if read is not None else "?"))
    out.append("date: %s; host: %s" % (ctx.get("date", "?"), ctx.get("host_name", "?")))
    out.append("")
    out.append("GB/s of input read (keys, plus values for scatters); in brackets the fraction of the read rate "
               "(of the copy bandwidth for results without one). Bold: the fastest of the row; -: not run for that "
               "input (a block-local strategy on a table larger than a block, or a case the sweep leaves out)")
    out.append("")
    # one table per workload, with the columns that workload has
    for workload in sorted({w for (w, _, _) in rows}):
        mine = [c for c in columns if any(c in cells for (w, _, _), cells in rows.items() if w == workload)]
        mine = [c for c in AUTOMATIC if c in mine] + [c for c in mine if c not in AUTOMATIC]
        out.append("| workload | dist | bins | " + " | ".join(mine) + " |")
        out.append("|---|---|---:|" + "---:|" * len(mine))
        for (w, dist, bins), cells in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
            if w != workload:
                continue
            vals = []
            best = max((cells[c][0] for c in mine if c in cells), default=None)
            for c in mine:
                if c in cells:
                    gbps, frac = cells[c]
                    cell = "%s (%.2f)" % (number(gbps), frac)
                    vals.append("**%s**" % cell if gbps == best else cell)
                else:
                    vals.append("-")
            out.append("| %s | %s | %d | %s |" % (workload, dist, bins, " | ".join(vals)))
        out.append("")
    extra = characterization(doc)
    if extra:
        out.append(extra)
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    text = "\n\n".join(table(load(p)) for p in args.json) + "\n"
    if any(b["name"].split("/")[0] in WORKLOADS for p in args.json for b in load(p).get("benchmarks", [])):
        import io
        import contextlib
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import workloads_table
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            workloads_table.main(args.json, only=WORKLOADS)
        text += "\nThe workloads (perf/bench_workloads.cpp):\n" + buf.getvalue()
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
