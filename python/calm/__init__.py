# SPDX-License-Identifier: Apache-2.0
"""calm: contended scatters (histograms, scatter-add, scatter-max/min) without the cost of colliding atomics.

Arrays come from numpy (a host build), torch or cupy (a CUDA build, on the caller's current stream) and
are read and written in place through DLPack. A CUDA build also takes any other array that offers
__cuda_array_interface__ (numba, pycuda, ...; on the stream it names), where the call is given its `out`
(calm cannot allocate such arrays) and its keys are int32 or int64. Keys are int32 or int64 (uint32 and
uint64 are read as the signed type of their width, smaller integers are converted); tables and values are
int32, int64, float32 or float64.

    import calm, torch
    keys = torch.randint(0, 256, (1 << 24,), device="cuda")
    counts = calm.histogram(keys, 256)                       # like torch.bincount(keys, minlength=256)
    out = calm.scatter(msg, dst, dim_size=nodes)             # like torch_scatter.scatter(msg, dst, reduce="sum")
    plan = calm.Plan(keys, counts)                           # the same shape again and again
    plan(keys, counts)
"""

import atexit

from . import _calm

backend = _calm.backend
"""The backend this module was built for: "openmp" (numpy and torch CPU arrays), "cuda" or "hip"."""

__all__ = ["histogram", "bincount", "scatter", "Plan", "backend"]

_REDUCTIONS = ("sum", "max", "min")


class _Lib:
    """What calm needs of one array library: dtype names, allocation, the current stream."""

    def __init__(self, x):
        mod = type(x).__module__.split(".")[0]
        if mod not in ("numpy", "torch", "cupy"):
            if hasattr(x, "__cuda_array_interface__"):
                self.name, self.xp, self.device = "cai", None, None
                return
            raise TypeError(f"calm: arrays must be numpy, torch or cupy arrays or offer __cuda_array_interface__, not {type(x).__name__}")
        self.name = mod
        if mod == "torch":
            import torch
            self.xp = torch
            self.device = x.device
        else:
            import importlib
            self.xp = importlib.import_module(mod)
            self.device = getattr(x, "device", None)

    def dtype_name(self, x):
        if self.name == "cai":
            t = x.__cuda_array_interface__["typestr"]
            return _TYPESTRS.get(t[1:], t)
        return str(x.dtype).replace("torch.", "")

    def _no_allocation(self):
        return TypeError("calm: arrays offered through __cuda_array_interface__ alone cannot be allocated or converted "
                         "by calm: give out= (and dim_size=), and keys of int32 or int64")

    def dtype(self, name):
        return getattr(self.xp, name)

    def full(self, shape, value, dtype_name):
        if self.name == "cai":
            raise self._no_allocation()
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if self.name == "torch":
            return self.xp.full(shape, value, dtype=self.dtype(dtype_name), device=self.device)
        if self.name == "cupy":
            with self.device:
                return self.xp.full(shape, value, dtype=dtype_name)
        return self.xp.full(shape, value, dtype=dtype_name)

    def as_type(self, x, dtype_name):
        if self.dtype_name(x) == dtype_name:
            return x
        if self.name == "cai":
            raise self._no_allocation()
        return x.to(self.dtype(dtype_name)) if self.name == "torch" else x.astype(dtype_name)

    def contiguous(self, x):
        if self.name == "cai":
            return x  # checked where it is read
        if self.name == "torch":
            return x.contiguous()
        return self.xp.ascontiguousarray(x)

    def stream(self, x=None):
        """The stream calm's work goes to, and the one DLPack producers are told of (an array offering
        __cuda_array_interface__ names its own: 1 legacy default, 2 per-thread default, None: any)."""
        if self.name == "cai":
            named = x.__cuda_array_interface__.get("stream") if x is not None else None
            return 0 if named is None else int(named)
        if self.name == "torch" and self.device.type == "cuda":
            # the handle current_stream(device).cuda_stream reads, without building a Stream object on every free
            # call; torch builds without it take the public way
            raw = getattr(self.xp._C, "_cuda_getCurrentRawStream", None)
            if raw is None:
                return self.xp.cuda.current_stream(self.device).cuda_stream
            return raw(self.device.index if self.device.index is not None else self.xp.cuda.current_device())
        if self.name == "cupy":
            return self.xp.cuda.get_current_stream().ptr
        return 0

    def capsule(self, x, stream):
        """What _calm reads x through: a DLPack capsule, or the __cuda_array_interface__ dict."""
        if self.name == "cai":
            return x.__cuda_array_interface__
        if self.name == "numpy":
            return x.__dlpack__()
        if self.name == "torch":
            if not isinstance(x, self.xp.Tensor):  # another library's array beside torch's (numpy keys, say)
                return x.__dlpack__(stream=-1 if self.device.type == "cuda" else None)
            # torch.to_dlpack: what x.__dlpack__(stream=-1) ends in (calm runs on torch's own stream: no
            # synchronization), without its Python checks, of which calm needs only this one
            if x.requires_grad:
                raise ValueError("calm: tensors that require grad cannot be read or written in place: pass x.detach()")
            return self.xp.to_dlpack(x)
        return x.__dlpack__(stream=stream)


_TYPESTRS = {"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8", "u2": "uint16", "u4": "uint32",
             "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64", "b1": "bool"}


def _keys(lib, keys):
    """keys as a contiguous int32 or int64 vector: unsigned keys of 32 and 64 bits are read as signed
    (keys of 2^31, 2^63 and above become negative: outside every table), smaller integers converted."""
    if len(keys.shape) != 1:
        raise ValueError(f"calm: keys must be one-dimensional, have shape {tuple(keys.shape)}")
    name = lib.dtype_name(keys)
    if name in ("int32", "int64"):
        return lib.contiguous(keys)
    if lib.name == "cai":
        raise lib._no_allocation()
    if name in ("uint32", "uint64"):
        signed = "int32" if name == "uint32" else "int64"
        return lib.contiguous(keys).view(lib.dtype(signed) if lib.name == "torch" else signed)
    if name in ("int8", "int16", "uint8", "uint16", "bool"):
        return lib.as_type(lib.contiguous(keys), "int32")
    raise TypeError(f"calm: keys must be integers, not {name}")


def _key_bound(lib, keys, what):
    """max(keys) + 1 (0 for no keys); ValueError on a negative key (waits for the device)."""
    if keys.shape[0] == 0:
        return 0
    if lib.name == "cai":
        raise lib._no_allocation()
    if int(keys.min()) < 0:
        raise ValueError(f"calm: {what} must be non-negative")
    return int(keys.max()) + 1


class Plan:
    """A scatter planned once for the shapes, dtypes and device of its example arrays, then run again and
    again (calm's plan: on a GPU the work of a repeated run is replayed as one recorded graph).

    reduce: "count" (out[k] += 1 for each key k), or "sum", "max", "min" of values into out[k]. Keys
    outside [0, len(out)) are skipped. A run updates out in place, on the current stream of the plan's
    arrays (no wait), and returns out. Arrays of another shape, dtype or device raise before anything runs.
    mode: "estimate" (calm's fitted choice at every run) or "measure" (the first run times the strategies
    on its keys, waits for them, and keeps the fastest; `measured` then says what it timed and its cost).

        plan = calm.Plan(keys, hist)              # hist: int64 zeros of 256
        for batch in batches: plan(batch, hist)   # every batch of the same length as keys
    """

    def __init__(self, keys, out, values=None, reduce="count", mode="estimate", _keys_ready=False):
        self._lib = _Lib(out)
        if reduce != "count" and reduce not in _REDUCTIONS:
            raise ValueError(f'calm: reduce must be "count", "sum", "max" or "min", not "{reduce}"')
        if mode not in ("estimate", "measure"):
            raise ValueError(f'calm: mode must be "estimate" or "measure", not "{mode}"')
        if (reduce == "count") != (values is None):
            raise ValueError('calm: values are given exactly where reduce is not "count"')
        if len(out.shape) != 1:
            raise ValueError(f"calm: out must be one-dimensional, has shape {tuple(out.shape)}")
        self._counts = reduce == "count"
        if not _keys_ready:
            keys = _keys(self._lib, keys)
        self._stream = self._lib.stream(out)
        table = self._lib.dtype_name(out)
        # int64 counts of fewer than 2^31 keys are counted in int32 and added to out: a block-local
        # table of 4-byte counters merges a warp's equal keys in hardware, one of 8 does not
        self._narrow = None
        self._narrow_zero = False  # the narrow table holds zeros (made so, not yet run)
        if self._counts and table == "int64" and keys.shape[0] < 2**31 and self._lib.name != "cai":
            self._narrow = self._lib.full(out.shape[0], 0, "int32")
            self._narrow_zero = True
            self._wide = (out.shape[0], str(out.dtype), getattr(out, "device", None))
            table = "int32"
        self._plan = _calm.Plan("sum" if self._counts else reduce, self._lib.dtype_name(keys), table, self._counts,
                                keys.shape[0], out.shape[0], self._stream, mode == "measure")
        self.strategy = None
        """The strategy the last run launched ("automatic" where the device chose), None before a run."""

    @property
    def measured(self):
        """What a measuring plan's first run timed, as a dict: "chosen" (the strategy kept), "seconds" (what the
        measuring cost), "chosen_seconds" (a run of the chosen one), "timed" ([(strategy, keys, seconds)]); None before."""
        return self._plan.measured()

    def __call__(self, keys, out, values=None, _keys_ready=False):
        lib = self._lib
        if not _keys_ready:
            keys = _keys(lib, keys)
        vc = None if values is None else lib.capsule(lib.contiguous(values), self._stream)
        if self._narrow is None:
            self.strategy = self._plan.run(lib.capsule(keys, self._stream), vc, lib.capsule(out, self._stream))
            return out
        if len(out.shape) != 1 or (out.shape[0], str(out.dtype), getattr(out, "device", None)) != self._wide:
            raise ValueError(f"calm: out must have the plan's shape, dtype and device {self._wide}, not {(tuple(out.shape), str(out.dtype), getattr(out, 'device', None))}")
        narrow = self._narrow
        if not self._narrow_zero:
            if lib.name == "torch":
                narrow.zero_()
            else:
                narrow.fill(0)
        self._narrow_zero = False
        self.strategy = self._plan.run(lib.capsule(keys, self._stream), vc, lib.capsule(narrow, self._stream))
        out += narrow
        return out


# The C++ plans of the last free calls, by shape, stream and device (as torch keeps cuFFT's plans): a free call
# of a shape met before makes none. A plan is taken out while it runs, so no two threads run one at once.
_free_plans = {}
_FREE_PLANS_KEPT = 16
atexit.register(_free_plans.clear)  # released while the device runtime and the arrays' streams still stand


def _once(lib, keys, out, values=None, reduce="count"):
    """Plan(keys, out, values, reduce)(keys, out, values) for a free call, keys already as _keys makes them, where
    the plan needs no int32 table of its own (not int64 counts): a C++ plan (kept for the next call of its
    shape) run, no Python plan."""
    if len(out.shape) != 1:
        raise ValueError(f"calm: out must be one-dimensional, has shape {tuple(out.shape)}")
    if type(out).__module__.split(".")[0] != lib.name:
        lib = _Lib(out)  # as a Plan: out's library gives the stream and reads every array
    stream = lib.stream(out)
    counts = reduce == "count"
    shape = ("sum" if counts else reduce, lib.dtype_name(keys), lib.dtype_name(out), counts, keys.shape[0], out.shape[0], stream)
    where = (shape, _calm.current_device())
    plan = _free_plans.pop(where, None)
    if plan is None:
        plan = _calm.Plan(*shape, False)
    vc = None if values is None else lib.capsule(lib.contiguous(values), stream)
    plan.run(lib.capsule(keys, stream), vc, lib.capsule(out, stream))
    _free_plans[where] = plan  # the newest last: the oldest goes first
    if len(_free_plans) > _FREE_PLANS_KEPT:
        del _free_plans[next(iter(_free_plans))]
    return out


def histogram(keys, bins, out=None):
    """out[k] += 1 for each key k of keys in [0, bins); other keys are skipped, as CUB's histograms skip them.
    Returns out: where None, a new int64 array of bins counts on the keys' device."""
    lib = _Lib(keys)
    keys = _keys(lib, keys)
    if out is None:
        if keys.shape[0] >= 2**31 or lib.name == "cai":
            out = lib.full(int(bins), 0, "int64")
            return Plan(keys, out, _keys_ready=True)(keys, out, _keys_ready=True)
        return lib.as_type(_once(lib, keys, lib.full(int(bins), 0, "int32")), "int64")  # counted in int32: one conversion
    if out.shape[0] != bins:
        raise ValueError(f"calm: out has {out.shape[0]} entries, bins is {bins}")
    if lib.dtype_name(out) == "int64":
        return Plan(keys, out, _keys_ready=True)(keys, out, _keys_ready=True)
    return _once(lib, keys, out)


def bincount(keys, weights=None, minlength=0):
    """As numpy.bincount and torch.bincount: the number (or the weights' sum) of each value of the
    non-negative integer keys, in an array of max(minlength, max(keys) + 1) entries: int64 counts, and
    weights summed in float64 for numpy arrays, in the weights' dtype for torch and cupy arrays."""
    lib = _Lib(keys)
    keys = _keys(lib, keys)
    size = max(int(minlength), _key_bound(lib, keys, "bincount's keys"))
    if weights is None:
        return histogram(keys, size)
    if weights.shape != keys.shape:
        raise ValueError(f"calm: weights have shape {tuple(weights.shape)}, keys {tuple(keys.shape)}")
    wt = "float64" if lib.name == "numpy" else lib.dtype_name(weights)
    weights = lib.as_type(weights, wt)
    return _once(lib, keys, lib.full(size, 0, wt), weights, "sum")


def _identity(reduce, dtype_name):
    if dtype_name.startswith("float"):
        return float("-inf") if reduce == "max" else float("inf")
    import numpy
    info = numpy.iinfo(dtype_name)
    return int(info.min) if reduce == "max" else int(info.max)


def scatter(src, index, dim_size=None, reduce="sum", out=None):
    """As torch_scatter.scatter over dimension 0: out[index[i]] = reduce(out[index[i]], src[i]) for src of
    shape (n,), and out[index[i], :] = reduce(out[index[i], :], src[i, :]) for rows of d components, src
    of shape (n, d) (messages summed into the nodes of a graph). Where out is given it is updated in place
    (keys outside it skipped) and returned. Where it is not, a new array of dim_size entries or rows
    (max(index) + 1 where dim_size is None; negative keys then raise) starts at 0 for "sum"; for "max"
    and "min" entries no key reaches are 0, as torch_scatter leaves them."""
    if reduce not in _REDUCTIONS:
        raise ValueError(f'calm: reduce must be "sum", "max" or "min", not "{reduce}"')
    lib = _Lib(src)
    if len(src.shape) == 2:
        return _scatter_rows(lib, src, index, dim_size, reduce, out)
    if len(src.shape) != 1:
        raise ValueError(f"calm: src must have one or two dimensions, has shape {tuple(src.shape)}")
    if index.shape != src.shape:
        raise ValueError(f"calm: index has shape {tuple(index.shape)}, src {tuple(src.shape)}")
    keys = _keys(lib, index)
    if out is not None:
        return _once(lib, keys, out, lib.as_type(src, lib.dtype_name(out)), reduce)
    return _into_new_out(lib, keys, src, dim_size, reduce, lambda out: _once(lib, keys, out, src, reduce))


def _into_new_out(lib, keys, src, dim_size, reduce, run):
    """run(out) on a new out of src's dtype and dim_size (or max(keys) + 1) entries or rows, starting at 0
    for "sum" and at the reduction's identity otherwise; entries no key reached are then set to 0."""
    size = _key_bound(lib, keys, "scatter's index") if dim_size is None else int(dim_size)
    dt = lib.dtype_name(src)
    start = 0 if reduce == "sum" else _identity(reduce, dt)
    out = lib.full((size,) + tuple(src.shape[1:]), start, dt)
    run(out)
    if reduce != "sum":
        out[out == start] = 0
    return out


def _scatter_rows(lib, src, index, dim_size, reduce, out):
    """scatter for src of shape (n, d): calm::scatter_rows, each key's rows folded once per warp."""
    if len(index.shape) != 1 or index.shape[0] != src.shape[0]:
        raise ValueError(f"calm: index has shape {tuple(index.shape)}; src {tuple(src.shape)} needs ({src.shape[0]},)")
    keys = _keys(lib, index)
    stream = lib.stream(out if out is not None else src)
    if out is not None:
        if len(out.shape) != 2 or out.shape[1] != src.shape[1]:
            raise ValueError(f"calm: out has shape {tuple(out.shape)}; src {tuple(src.shape)} needs (rows, {src.shape[1]})")
        values = lib.contiguous(lib.as_type(src, lib.dtype_name(out)))
        _calm.scatter_rows(reduce, lib.capsule(keys, stream), lib.capsule(values, stream), lib.capsule(out, stream), stream)
        return out
    values = lib.contiguous(src)
    return _into_new_out(lib, keys, src, dim_size, reduce,
                         lambda out: _calm.scatter_rows(reduce, lib.capsule(keys, stream), lib.capsule(values, stream), lib.capsule(out, stream), stream))
