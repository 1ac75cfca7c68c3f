# SPDX-License-Identifier: Apache-2.0
"""The calm Python package on arrays that offer __cuda_array_interface__ alone (numba, pycuda): read in place on
a CUDA build where the call is given out=, refused as device memory elsewhere, and their interfaces checked
before anything runs."""

import numpy as np
import pytest

import calm
from test_calm import rng_for, to_numpy, torch


class InterfaceArray:
    """An array that offers __cuda_array_interface__ alone (as numba's and pycuda's do): over a torch
    CUDA tensor on a CUDA build, over a numpy array elsewhere (where calm must refuse it as device
    memory, after reading it)."""

    def __init__(self, base, **changes):
        self.base = base
        self.shape = tuple(base.shape)
        if hasattr(base, "__cuda_array_interface__"):
            self.interface = dict(base.__cuda_array_interface__)
        else:
            self.interface = {"shape": self.shape, "typestr": base.dtype.str, "data": (base.ctypes.data, False), "strides": None, "version": 3}
        self.interface.update(changes)

    @property
    def __cuda_array_interface__(self):
        return self.interface


def interface_pair(keys, table):
    """keys and table (numpy arrays) as InterfaceArrays on this build's device, and the table's base."""
    if calm.backend == "cuda":
        k, t = torch.from_numpy(keys).cuda(), torch.from_numpy(table).cuda()
        return InterfaceArray(k), InterfaceArray(t), t
    return InterfaceArray(keys), InterfaceArray(table), table


@pytest.mark.skipif(calm.backend == "hip", reason="the CUDA Array Interface names CUDA memory")
def test_arrays_offering_the_cuda_array_interface():
    rng = rng_for("interface")
    keys = rng.integers(-3, 40, 5001).astype(np.int32)
    table = np.zeros(37, np.int64)
    k, t, base = interface_pair(keys, table)
    want = np.bincount(keys[(keys >= 0) & (keys < 37)], minlength=37)
    if calm.backend == "cuda":
        assert calm.histogram(k, 37, out=t) is t
        torch.cuda.synchronize()
        np.testing.assert_array_equal(to_numpy(base), want)
        w = rng.random(5001)
        wt = InterfaceArray(torch.from_numpy(w).cuda())
        out_base = torch.zeros(37, dtype=torch.float64, device="cuda")
        calm.scatter(wt, k, out=InterfaceArray(out_base))
        np.testing.assert_allclose(to_numpy(out_base), np.bincount(keys[keys >= 0], weights=w[keys >= 0], minlength=40)[:37], rtol=1e-12)
    else:
        with pytest.raises(TypeError, match="CUDA device.*built for the host"):
            calm.histogram(k, 37, out=t)
        np.testing.assert_array_equal(base, table)
    # what calm cannot do for such arrays: allocate or convert them
    with pytest.raises(TypeError, match="out="):
        calm.histogram(k, 37)
    with pytest.raises(TypeError, match="out="):
        calm.bincount(k)
    with pytest.raises(TypeError, match="out="):
        calm.histogram(InterfaceArray(keys.astype(np.uint8)), 37, out=t)
    # interfaces calm cannot read, refused before anything runs on any build
    with pytest.raises(TypeError, match="little-endian"):
        calm.histogram(InterfaceArray(keys, typestr=">i4"), 37, out=t)
    with pytest.raises(ValueError, match="contiguous"):
        calm.histogram(InterfaceArray(keys, strides=(8,)), 37, out=t)
    with pytest.raises(ValueError, match="masked"):
        calm.histogram(InterfaceArray(keys, mask=(1, False)), 37, out=t)
    if calm.backend == "cuda":
        with pytest.raises(ValueError, match="read-only"):
            calm.histogram(k, 37, out=InterfaceArray(base, data=(base.data_ptr(), True)))
        torch.cuda.synchronize()
        np.testing.assert_array_equal(to_numpy(base), want)
