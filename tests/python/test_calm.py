# SPDX-License-Identifier: Apache-2.0
"""The calm Python package against numpy and torch references, on the arrays of its build's backend
(numpy and torch CPU arrays for openmp, torch CUDA tensors for cuda): every key distribution, sizes
that are not multiples of a warp or block, no keys, keys outside the table, every dtype and reduction."""

import os
import zlib

import numpy as np
import pytest

import calm

try:
    import torch
except ImportError:  # optional on the host; a GPU build is tested through torch
    torch = None

SEED = int(os.environ.get("CALM_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
print(f"calm python tests: CALM_TEST_SEED={SEED}")

ON_GPU = calm.backend in ("cuda", "hip")
LIBS = ["torch"] if ON_GPU else (["numpy", "torch"] if torch is not None else ["numpy"])
SIZES = [0, 1, 31, 1000, 65537]
DISTS = ["uniform", "runs", "hot", "zipf"]


def draw_keys(rng, dist, n, bins):
    if bins == 0:
        return np.zeros(n, np.int64)
    if dist == "uniform":
        return rng.integers(0, bins, n)
    if dist == "runs":  # runs of up to 64 equal keys (n runs of at least one key: never fewer than n keys)
        return np.repeat(rng.integers(0, bins, n), rng.integers(1, 65, n))[:n]
    if dist == "hot":  # half the keys on one entry
        k = rng.integers(0, bins, n)
        k[rng.random(n) < 0.5] = bins // 2
        return k
    return np.minimum(rng.zipf(1.3, n) - 1, bins - 1)


def to_lib(lib, a):
    a = np.ascontiguousarray(a)
    if lib == "numpy":
        return a
    return torch.from_numpy(a).to("cuda" if ON_GPU else "cpu")


def to_numpy(x):
    return x.cpu().numpy() if hasattr(x, "cpu") else np.asarray(x)


def rng_for(*parts):
    return np.random.default_rng([SEED, zlib.crc32(repr(parts).encode())])


def assert_sums_close(got, want, keys, terms, size, dtype):
    """Each entry within 2 (c + 1) eps sum|t| of the reference, for its c terms t summed in any order
    (the bound of recursive summation, once for calm and once for a reference in the same dtype)."""
    inside = (keys >= 0) & (keys < size)
    count = np.bincount(keys[inside], minlength=size)
    magnitude = np.bincount(keys[inside], weights=np.abs(terms[inside]).astype(np.float64), minlength=size)
    bound = 2 * (count + 1) * np.finfo(dtype).eps * magnitude
    error = np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64))
    assert np.all(error <= bound), f"worst entry {np.argmax(error - bound)}: error {error.max()}"


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("bins", [1, 7, 256, 5000, 300000])
@pytest.mark.parametrize("key_dtype", ["int32", "int64"])
def test_histogram_counts_every_key(lib, dist, n, bins, key_dtype):
    rng = rng_for("hist", lib, dist, n, bins, key_dtype)
    keys = draw_keys(rng, dist, n, bins).astype(key_dtype)
    got = calm.histogram(to_lib(lib, keys), bins)
    assert str(got.dtype).endswith("int64")
    np.testing.assert_array_equal(to_numpy(got), np.bincount(keys, minlength=bins))


@pytest.mark.parametrize("lib", LIBS)
def test_histogram_skips_keys_outside_and_accumulates(lib):
    keys = np.array([-1, 0, 3, 4, 2**31 - 1, 3, -(2**31)], np.int32)
    out = to_lib(lib, np.array([10, 0, 0, 0], np.int32))
    calm.histogram(to_lib(lib, keys), 4, out=out)
    np.testing.assert_array_equal(to_numpy(out), [11, 0, 0, 2])


@pytest.mark.skipif(ON_GPU, reason="numpy arrays are host arrays")
def test_unsigned_keys_are_read_in_place():
    keys = np.array([0, 5, 2**32 - 1, 2**31, 5], np.uint32)  # the top two are outside any table
    np.testing.assert_array_equal(calm.histogram(keys, 6), [1, 0, 0, 0, 0, 2])
    keys64 = np.array([1, 2**64 - 1, 2**63 + 1, 1], np.uint64)
    np.testing.assert_array_equal(calm.histogram(keys64, 3), [0, 2, 0])
    np.testing.assert_array_equal(calm.histogram(np.array([3, 3, 200], np.uint8), 256)[[3, 200]], [2, 1])


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("n", [0, 33, 20000])
def test_bincount_matches_the_library(lib, dist, n):
    rng = rng_for("bincount", lib, dist, n)
    keys = draw_keys(rng, dist, n, 3000)
    weights = rng.random(n).astype(np.float32)
    np.testing.assert_array_equal(to_numpy(calm.bincount(to_lib(lib, keys), minlength=10)), np.bincount(keys, minlength=10))
    got = calm.bincount(to_lib(lib, keys), weights=to_lib(lib, weights))
    want = np.bincount(keys, weights=weights.astype(np.float64))
    assert str(got.dtype).endswith("float64" if lib == "numpy" else "float32")
    assert_sums_close(to_numpy(got), want, keys, weights, len(want), np.float32)


@pytest.mark.parametrize("lib", LIBS)
def test_bincount_rejects_negative_keys(lib):
    with pytest.raises(ValueError, match="non-negative"):
        calm.bincount(to_lib(lib, np.array([0, -3, 2])))


def reference_scatter(keys, src, size, reduce):
    out = np.zeros(size, src.dtype)
    seen = np.zeros(size, bool)
    for k, v in zip(keys, src):
        if 0 <= k < size:
            if reduce == "sum":
                out[k] += v
            elif not seen[k]:
                out[k] = v
            else:
                out[k] = max(out[k], v) if reduce == "max" else min(out[k], v)
            seen[k] = True
    return out


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("reduce", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("n,size", [(0, 5), (37, 3), (5000, 97), (40000, 40000)])
def test_scatter_matches_a_sequential_reference(lib, reduce, dtype, dist, n, size):
    rng = rng_for("scatter", lib, reduce, dtype, dist, n, size)
    keys = draw_keys(rng, dist, n, size)
    src = (rng.standard_normal(n) * 100).astype(dtype)
    got = to_numpy(calm.scatter(to_lib(lib, src), to_lib(lib, keys), dim_size=size, reduce=reduce))
    want = reference_scatter(keys, src, size, reduce)
    if dtype.startswith("float") and reduce == "sum":
        assert_sums_close(got, want, keys, src, size, dtype)
    else:
        np.testing.assert_array_equal(got, want)


def reference_rows(keys, src, size, reduce):
    """out[k, :] folded sequentially; keys outside [0, size) skipped; entries no key reaches are 0 (torch_scatter)."""
    out = np.zeros((size, src.shape[1]), src.dtype)
    inside = (keys >= 0) & (keys < size)
    if reduce == "sum":
        np.add.at(out, keys[inside], src[inside])
        return out
    info = np.iinfo(src.dtype) if src.dtype.kind == "i" else np.finfo(src.dtype)
    start = info.min if reduce == "max" else info.max
    out[:] = start
    (np.maximum if reduce == "max" else np.minimum).at(out, keys[inside], src[inside])
    out[out == start] = 0
    return out


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("reduce", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("dist", DISTS)
@pytest.mark.parametrize("n,d,size", [(0, 4, 5), (37, 1, 3), (1000, 64, 97), (5000, 3, 4000), (300, 70, 1)])
def test_scatter_of_rows_matches_a_sequential_reference(lib, reduce, dtype, dist, n, d, size):
    rng = rng_for("rows", lib, reduce, dtype, dist, n, d, size)
    keys = draw_keys(rng, dist, n, size)
    src = (rng.standard_normal((n, d)) * 100).astype(dtype)
    got = to_numpy(calm.scatter(to_lib(lib, src), to_lib(lib, keys), dim_size=size, reduce=reduce))
    want = reference_rows(keys, src, size, reduce)
    assert got.shape == (size, d) and got.dtype == want.dtype
    if dtype.startswith("float") and reduce == "sum":
        assert_sums_close(got.reshape(-1), want.reshape(-1), (keys[:, None] * d + np.arange(d)).reshape(-1), src.reshape(-1), size * d, dtype)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("lib", LIBS)
def test_scatter_of_rows_into_out_accumulates_skips_outside_and_checks_shapes(lib):
    out = to_lib(lib, np.ones((3, 2), np.float32))
    src = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)
    calm.scatter(to_lib(lib, src), to_lib(lib, np.array([2, 0, 5, 2])), reduce="sum", out=out)
    np.testing.assert_array_equal(to_numpy(out), [[4, 5], [1, 1], [9, 11]])
    with pytest.raises(ValueError, match="index"):
        calm.scatter(to_lib(lib, src), to_lib(lib, np.array([0, 1])), dim_size=3)
    with pytest.raises(ValueError, match="out"):
        calm.scatter(to_lib(lib, src), to_lib(lib, np.array([0, 1, 2, 0])), out=to_lib(lib, np.zeros((3, 3), np.float32)))
    with pytest.raises(ValueError, match="non-negative"):
        calm.scatter(to_lib(lib, src), to_lib(lib, np.array([0, -1, 2, 0])))
    np.testing.assert_array_equal(to_numpy(out), [[4, 5], [1, 1], [9, 11]])


@pytest.mark.parametrize("lib", LIBS)
def test_scatter_into_out_accumulates_and_skips_outside(lib):
    out = to_lib(lib, np.array([1.0, 5.0, -2.0], np.float32))
    calm.scatter(to_lib(lib, np.array([4.0, 7.0, 1.0, 9.0], np.float32)), to_lib(lib, np.array([0, 2, 3, -1])), reduce="max", out=out)
    np.testing.assert_array_equal(to_numpy(out), [4.0, 5.0, 7.0])


@pytest.mark.parametrize("lib", LIBS)
def test_scatter_extremes_of_each_value_type(lib):
    for dtype in ["int32", "int64"]:
        info = np.iinfo(dtype)
        src = np.array([info.min, info.max, info.min + 1, 0], dtype)
        keys = np.array([0, 0, 1, 1])
        for reduce in ["max", "min"]:
            got = to_numpy(calm.scatter(to_lib(lib, src), to_lib(lib, keys), dim_size=2, reduce=reduce))
            np.testing.assert_array_equal(got, reference_scatter(keys, src, 2, reduce))


@pytest.mark.parametrize("lib", LIBS)
def test_plan_runs_again_and_rejects_other_shapes(lib):
    rng = rng_for("plan", lib)
    hist = to_lib(lib, np.zeros(300, np.int64))
    plan = calm.Plan(to_lib(lib, np.zeros(4096, np.int64)), hist)
    total = np.zeros(300, np.int64)
    for _ in range(3):
        keys = rng.integers(0, 300, 4096)
        plan(to_lib(lib, keys), hist)
        total += np.bincount(keys, minlength=300)
    np.testing.assert_array_equal(to_numpy(hist), total)
    assert plan.strategy is not None
    before = to_numpy(hist).copy()
    with pytest.raises(ValueError, match="shape"):
        plan(to_lib(lib, np.zeros(100, np.int64)), hist)
    with pytest.raises(TypeError, match="dtype"):
        plan(to_lib(lib, np.zeros(4096, np.int32)), hist)
    with pytest.raises(ValueError, match="shape"):
        plan(to_lib(lib, np.zeros(4096, np.int64)), to_lib(lib, np.zeros(301, np.int64)))
    np.testing.assert_array_equal(to_numpy(hist), before)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("reduce", ["count", "sum", "max"])
def test_measuring_plan_matches_the_reference_and_says_what_it_timed(lib, reduce):
    rng = rng_for("measure" + reduce, lib)
    n, bins = 50000, 3000
    values = None if reduce == "count" else rng.standard_normal(n)
    init = np.zeros(bins) if reduce != "max" else np.full(bins, -np.inf)
    out = to_lib(lib, init.astype(np.int64 if reduce == "count" else np.float64))
    example = to_lib(lib, np.zeros(n, np.int64))
    plan = calm.Plan(example, out, None if values is None else to_lib(lib, values), reduce, mode="measure")
    assert plan.measured is None
    want = init.copy()
    all_keys = np.zeros(0, np.int64)
    for r in range(2):
        keys = (rng.zipf(1.5, n) - 1) % (bins + 10)  # a few keys outside the table
        all_keys = np.concatenate([all_keys, keys])
        plan(to_lib(lib, keys), out, None if values is None else to_lib(lib, values))
        inside = keys < bins
        if reduce == "count":
            want += np.bincount(keys[inside], minlength=bins)
        elif reduce == "sum":
            np.add.at(want, keys[inside], values[inside])
        else:
            np.maximum.at(want, keys[inside], values[inside])
        if reduce == "sum":
            assert_sums_close(to_numpy(out), want, all_keys, np.tile(values, r + 1), bins, np.float64)
        else:
            np.testing.assert_array_equal(to_numpy(out), want)
        m = plan.measured
        assert m is not None and m["chosen"] == plan.strategy
        assert m["seconds"] >= 0 and len(m["timed"]) >= 1
        if len(m["timed"]) > 1:
            assert m["timed"][0][0] == m["chosen"] and all(t[1] > 0 and t[2] >= 0 for t in m["timed"])
    with pytest.raises(ValueError, match="mode"):
        calm.Plan(example, out, None if values is None else to_lib(lib, values), reduce, mode="fast")


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(TypeError, match="integers"):
        calm.histogram(np.zeros(3, np.float32), 4)
    with pytest.raises(TypeError, match="numpy, torch or cupy arrays or offer __cuda_array_interface__"):
        calm.histogram([1, 2], 4)
    with pytest.raises(ValueError, match="one-dimensional"):
        calm.histogram(np.zeros((2, 2), np.int32), 4)
    with pytest.raises(ValueError, match="reduce"):
        calm.scatter(np.zeros(3), np.zeros(3, np.int64), reduce="mean")
    with pytest.raises(ValueError, match="shape"):
        calm.scatter(np.zeros(3), np.zeros(4, np.int64))
    if calm.backend == "openmp" and torch is not None and torch.cuda.is_available():
        with pytest.raises(TypeError, match="built for"):
            calm.histogram(torch.zeros(3, dtype=torch.int64, device="cuda"), 4)



@pytest.mark.skipif(torch is None, reason="torch")
def test_tensors_that_require_grad_raise_before_anything_runs():
    dev = "cuda" if ON_GPU else "cpu"
    src = torch.ones(5, device=dev, requires_grad=True)
    out = torch.zeros(3, device=dev)
    with pytest.raises(ValueError, match="detach"):
        calm.scatter(src, torch.zeros(5, dtype=torch.int64, device=dev), out=out)
    assert not out.any()
    calm.scatter(src.detach(), torch.zeros(5, dtype=torch.int64, device=dev), out=out)
    assert out.tolist() == [5.0, 0.0, 0.0]


def test_free_calls_count_into_int64_whatever_they_count_in():
    rng = rng_for("int64 counts")
    keys = rng.integers(0, 300, 10007)
    for lib in LIBS:
        got = calm.histogram(to_lib(lib, keys), 300)
        assert str(got.dtype).replace("torch.", "") == "int64"
        np.testing.assert_array_equal(to_numpy(got), np.bincount(keys, minlength=300))
        got = calm.bincount(to_lib(lib, keys))
        assert str(got.dtype).replace("torch.", "") == "int64"
        np.testing.assert_array_equal(to_numpy(got), np.bincount(keys))


@pytest.mark.skipif(ON_GPU or torch is None, reason="numpy and torch arrays side by side on the host")
def test_keys_and_out_of_two_libraries():
    keys = np.array([1, 2, 2, 5, 9])
    out = torch.zeros(6, dtype=torch.int32)
    assert calm.histogram(keys, 6, out=out).tolist() == [0, 1, 2, 0, 0, 1]
    table = np.zeros(4, np.float32)
    calm.scatter(torch.ones(4), torch.tensor([0, 1, 1, 3]), out=table)
    assert table.tolist() == [1.0, 2.0, 0.0, 1.0]


def test_free_calls_of_one_shape_again_and_again_and_of_many_shapes():
    """A free call keeps its plan for the next call of its shape (at most 16 kept): new keys, new and reused
    out arrays, other ops and sizes in between, each call exact."""
    rng = rng_for("kept plans")
    for lib in LIBS:
        out = to_lib(lib, np.zeros(50, np.int32))
        want = np.zeros(50, np.int64)
        for r in range(5):
            keys = rng.integers(0, 60, 1000 + r % 2)  # two shapes in turn, keys outside the table too
            calm.histogram(to_lib(lib, keys), 50, out=out)
            want += np.bincount(keys[keys < 50], minlength=50)
            np.testing.assert_array_equal(to_numpy(out), want)
            fresh = to_lib(lib, np.zeros(50, np.int32))
            np.testing.assert_array_equal(to_numpy(calm.histogram(to_lib(lib, keys), 50, out=fresh)), np.bincount(keys[keys < 50], minlength=50))
            src = rng.random(len(keys)).astype(np.float32)
            got = calm.scatter(to_lib(lib, src), to_lib(lib, keys), out=to_lib(lib, np.zeros(50, np.float32)), reduce="max")
            ref = np.zeros(50, np.float32)
            np.maximum.at(ref, keys[keys < 50], src[keys < 50])
            np.testing.assert_array_equal(to_numpy(got), ref)
        for size in range(1, 40):  # more shapes than are kept
            keys = rng.integers(0, size, 100)
            np.testing.assert_array_equal(to_numpy(calm.histogram(to_lib(lib, keys), size, out=to_lib(lib, np.zeros(size, np.int32)))),
                                          np.bincount(keys, minlength=size))
        assert 0 < len(calm._free_plans) <= calm._FREE_PLANS_KEPT


@pytest.mark.skipif(not ON_GPU or torch is None, reason="CUDA streams")
def test_free_calls_run_on_the_current_stream():
    """A free call goes to torch's current stream (a side stream here), read as torch reads it, and its kept plan
    is one of that stream: the same shape on the default stream after it makes its own."""
    lib = calm._Lib(torch.zeros(1, device="cuda"))
    side = torch.cuda.Stream()
    keys = torch.randint(0, 300, (100003,), device="cuda")
    want = torch.bincount(keys[keys < 256], minlength=256).cpu()
    side.wait_stream(torch.cuda.current_stream())  # the keys, made on the default stream
    with torch.cuda.stream(side):
        assert lib.stream() == side.cuda_stream
        out = torch.zeros(256, dtype=torch.int32, device="cuda")
        calm.histogram(keys, 256, out=out)
        side.synchronize()
        assert torch.equal(out.cpu().long(), want)
    assert lib.stream() == torch.cuda.current_stream().cuda_stream
    out2 = torch.zeros(256, dtype=torch.int32, device="cuda")
    calm.histogram(keys, 256, out=out2)
    assert torch.equal(out2.cpu().long(), want)
