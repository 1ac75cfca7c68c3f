# SPDX-License-Identifier: Apache-2.0
"""Python's cost per call on the host build, best of five rounds of 3,000 calls (4,096 int64 keys, 256 entries):
a plan run from C++ (Plan._plan.seconds_per_run), the plan called from Python, calm.histogram into int32 and
int64 tables and into a new one, calm.bincount, torch.bincount; also a numpy histogram into a new table.
Run with the package under test first on PYTHONPATH: `python3 python_call_overhead.py LABEL`."""
import sys
import time

import torch

import calm


def best_us(fn, reps=3000):
    fn()
    best = 1e9
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - start) / reps)
    return best * 1e6


torch.set_num_threads(1)
keys = torch.randint(0, 256, (4096,))
out32 = torch.zeros(256, dtype=torch.int32)
out64 = torch.zeros(256, dtype=torch.int64)
plan = calm.Plan(keys, out32)
res = {"cpp_plan_run": plan._plan.seconds_per_run(keys.__dlpack__(), None, out32.__dlpack__(), 3000) * 1e6,
       "plan_call": best_us(lambda: plan(keys, out32)),
       "histogram_out32": best_us(lambda: calm.histogram(keys, 256, out=out32)),
       "histogram_out64": best_us(lambda: calm.histogram(keys, 256, out=out64)),
       "histogram_new": best_us(lambda: calm.histogram(keys, 256)),
       "bincount": best_us(lambda: calm.bincount(keys, minlength=256)),
       "torch_bincount": best_us(lambda: torch.bincount(keys, minlength=256))}
numpy_keys = keys.numpy()
res["numpy_histogram_new"] = best_us(lambda: calm.histogram(numpy_keys, 256))
print(sys.argv[1] if len(sys.argv) > 1 else "", " ".join(f"{k}={v:.1f}" for k, v in res.items()))
