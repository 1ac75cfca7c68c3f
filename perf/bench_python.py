# SPDX-License-Identifier: Apache-2.0
"""calm's Python package beside torch on one device, in one process: histograms against torch.bincount,
float scatters against index_add_ and scatter_reduce, on the perf suite's key distributions, rows of 64
floats summed into the nodes of a graph (2^log2n floats in all) against index_add_, and the cost
of a call from Python against the same plan run from C++. Prints a table and writes JSON.

    PYTHONPATH=<build>/python python3 perf/bench_python.py [--log2n 26] [--json out.json] [--device cuda] [--kinds rows_sum]
"""

import argparse
import json
import statistics
import time

import numpy as np
import torch

import calm


def draw_keys(dist, n, bins, gen):
    if dist == "uniform":
        return torch.randint(0, bins, (n,), generator=gen)
    if dist == "runs32":  # runs of 32 equal keys
        return torch.randint(0, bins, (n // 32 + 1,), generator=gen).repeat_interleave(32)[:n]
    if dist == "halfhot":  # half the keys on one entry
        k = torch.randint(0, bins, (n,), generator=gen)
        k[torch.rand(n, generator=gen) < 0.5] = bins // 2
        return k
    if dist == "zipf":
        z = np.random.default_rng(7).zipf(1.3, n) - 1
        return torch.from_numpy(np.minimum(z, bins - 1))
    if dist == "powerlaw":  # in-degrees of a power-law graph: zipf ranks of nodes in a random order
        z = np.minimum(np.random.default_rng(7).zipf(1.8, n) - 1, bins - 1)
        return torch.from_numpy(np.random.default_rng(8).permutation(bins)[z])
    raise ValueError(dist)


def median_seconds(fn, reps, device):
    fn()  # warm-up (plans, caches, allocator)
    times = []
    for _ in range(reps):
        if device == "cuda":
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        else:
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def cases(args):
    dists = ["uniform", "runs32", "halfhot", "zipf"]
    for bins in [256, 4096, 65536, 1 << 20]:
        for dist in dists:
            yield "histogram", dist, bins
    for bins in [256, 4096, 65536, 1 << 20]:
        for dist in dists:
            yield "scatter_sum", dist, bins
            yield "scatter_max", dist, bins
    for nodes in [4096, 65536, 1 << 20]:  # message passing: rows of 64 floats into the nodes of a graph
        for dist in ["uniform", "powerlaw"]:
            yield "rows_sum", dist, nodes


def run_case(kind, dist, bins, n, dev, gen, reps):
    keys = draw_keys(dist, n, bins, gen).to(dev)
    row = {"kind": kind, "dist": dist, "bins": bins, "n": n}
    if kind == "histogram":
        out = torch.zeros(bins, dtype=torch.int64, device=dev)
        k32 = keys.to(torch.int32)
        row["calm_us"] = median_seconds(lambda: calm.histogram(keys, bins, out=out), reps, dev) * 1e6
        row["calm_int32_keys_us"] = median_seconds(lambda: calm.histogram(k32, bins, out=out), reps, dev) * 1e6
        row["peer"] = "torch.bincount"
        row["peer_us"] = median_seconds(lambda: torch.bincount(keys, minlength=bins), reps, dev) * 1e6
        assert torch.equal(calm.histogram(keys, bins), torch.bincount(keys, minlength=bins))
        row["bytes"] = n * 8
    elif kind == "rows_sum":
        d = 64
        keys = keys[: n // d]
        src = torch.rand(n // d, d, generator=gen).to(dev)
        out = torch.zeros(bins, d, device=dev)
        row["d"] = d
        row["calm_us"] = median_seconds(lambda: calm.scatter(src, keys, out=out), reps, dev) * 1e6
        row["peer"] = "index_add_"
        row["peer_us"] = median_seconds(lambda: out.index_add_(0, keys, src), reps, dev) * 1e6
        row["bytes"] = (n // d) * (8 + 4 * d)
    else:
        src = torch.rand(n, generator=gen).to(dev)
        out = torch.zeros(bins, device=dev)
        reduce = kind.split("_")[1]
        row["calm_us"] = median_seconds(lambda: calm.scatter(src, keys, out=out, reduce=reduce), reps, dev) * 1e6
        if reduce == "sum":
            row["peer"] = "index_add_"
            row["peer_us"] = median_seconds(lambda: out.index_add_(0, keys, src), reps, dev) * 1e6
        else:
            row["peer"] = "scatter_reduce_(amax)"
            row["peer_us"] = median_seconds(lambda: out.scatter_reduce_(0, keys, src, "amax"), reps, dev) * 1e6
        row["bytes"] = n * 12
    row["speedup"] = row["peer_us"] / row["calm_us"]
    return row


def call_overhead(dev, reps=2000):
    """Per call: a plan run from C++, the same plan called from Python, calm.histogram (a plan made each call)
    into int32 counts, and into a new int64 array (counted in int32, then converted: one launch more)."""
    keys = torch.randint(0, 256, (4096,), device=dev)
    out = torch.zeros(256, dtype=torch.int32, device=dev)
    plan = calm.Plan(keys, out)
    res = {"n": 4096, "bins": 256}
    cap = lambda x: x.__dlpack__(stream=-1) if x.device.type == "cuda" else x.__dlpack__()  # noqa: E731
    res["cpp_plan_run_us"] = plan._plan.seconds_per_run(cap(keys), None, cap(out), reps) * 1e6
    for name, fn in [("python_plan_call_us", lambda: plan(keys, out)), ("python_histogram_us", lambda: calm.histogram(keys, 256, out=out)),
                     ("python_histogram_new_us", lambda: calm.histogram(keys, 256)),
                     ("torch_bincount_us", lambda: torch.bincount(keys, minlength=256))]:
        fn()
        if dev == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        if dev == "cuda":
            torch.cuda.synchronize()
        res[name] = (time.perf_counter() - t) / reps * 1e6
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--device", default="cuda" if calm.backend == "cuda" else "cpu")
    ap.add_argument("--json")
    ap.add_argument("--kinds", default="histogram,scatter_sum,scatter_max,rows_sum", help="the cases to run, by kind")
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(1)
    n = 1 << args.log2n
    rows = []
    print(f"{'case':<12} {'dist':<8} {'bins':>8} | {'calm us':>10} {'peer us':>10} {'x peer':>7}  peer")
    for kind, dist, bins in cases(args):
        if kind not in args.kinds.split(","):
            continue
        r = run_case(kind, dist, bins, n, args.device, gen, args.reps)
        rows.append(r)
        print(f"{kind:<12} {dist:<8} {bins:>8} | {r['calm_us']:>10.1f} {r['peer_us']:>10.1f} {r['speedup']:>7.2f}  {r['peer']}", flush=True)
    over = call_overhead(args.device)
    print("per call (4096 keys, 256 bins, us):", {k: round(v, 2) for k, v in over.items()})
    if args.json:
        info = {"device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu", "torch": torch.__version__, "backend": calm.backend}
        with open(args.json, "w") as f:
            json.dump({"context": info, "cases": rows, "call_overhead": over}, f, indent=1)


if __name__ == "__main__":
    main()
