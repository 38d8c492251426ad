"""The launcher's argument reuse (explorer.launcher), with a stand-in for a compiled kernel: on a
GPU every BFS test also runs through it; here its bookkeeping is checked without one."""
import numpy as np
import pytest
from numba.cuda import types

from explorer.engine import launcher


class FakeArray:
    """Stands in for a device array: only its Numba type matters to the launcher."""

    def __init__(self, dtype=types.int32, ndim=1):
        self._numba_type_ = types.Array(dtype, ndim, "C")


class FakeKernel:
    """Records which arguments were marshalled."""

    def __init__(self, argument_types):
        self.argument_types = argument_types
        self.marshalled = []

        class _Lib:
            @staticmethod
            def get_cufunc():
                return type("F", (), {"handle": "handle"})()

        self._codelibrary = _Lib()

    def _prepare_args(self, ty, val, stream, retr, out):
        self.marshalled.append(val)
        out.append(7)  # what Numba leaves for an array field: a Python int


def test_fast_type_matches_numba_for_what_a_bfs_passes():
    assert launcher._fast_type(3) == types.int64
    assert launcher._fast_type(True) == types.boolean
    assert launcher._fast_type(2.5) == types.float64
    assert launcher._fast_type(FakeArray()) == types.Array(types.int32, 1, "C")
    assert launcher._fast_type(np.int32(3)) is None  # unusual: Numba types it again


def test_plan_remarshals_only_what_changed():
    qa, qb = FakeArray(), FakeArray()
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2 + (types.int64, types.boolean))
    plan = launcher._Plan(kern, (qa, qb, 5, True))
    assert kern.marshalled == [qa, qb, 5, True]
    kern.marshalled.clear()
    assert plan.update((qa, qb, 5, True)) and kern.marshalled == []  # nothing changed
    # the queues swap (marshalled once per position) and the level moves (its slot takes the value)
    assert plan.update((qb, qa, 6, True)) and kern.marshalled == [qb, qa]
    assert plan.args == [qb, qa, 6, True] and plan.chunks[2][0].value == 6
    kern.marshalled.clear()
    assert plan.update((qa, qb, 6, True)) and kern.marshalled == []  # both orders seen; an equal int
    assert plan.update((qb, qa, 6, True)) and kern.marshalled == []
    assert plan.args == [qb, qa, 6, True]
    qc = FakeArray()
    assert plan.update((qc, qb, 8, False)) and kern.marshalled == [qc]  # a new array is
    assert plan.chunks[2][0].value == 8 and not plan.chunks[3][0].value
    # Only the last two arrays of a position stay marshalled (and alive): qb, seen there before
    # qa and qc, has to be marshalled again.
    assert [a for a, _ in plan.seen[0]] == [qc, qb]
    kern.marshalled.clear()
    assert plan.update((qa, qb, 8, False)) and kern.marshalled == [qa]


def test_params_array_kept_per_order_of_the_queues():
    qa, qb = FakeArray(), FakeArray()
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2)
    plan = launcher._Plan(kern, (qa, qb))
    first = plan.params_address()
    plan.update((qb, qa))
    second = plan.params_address()
    assert second != first
    plan.update((qa, qb))
    assert plan.params_address() == first  # the swap back reuses the first array, not a new one


def test_params_array_points_at_the_marshalled_arguments():
    import ctypes

    class CtypesKernel(FakeKernel):
        def _prepare_args(self, ty, val, stream, retr, out):
            out.append(ctypes.c_int64(val))

    kern = CtypesKernel((types.int64, types.int64))
    plan = launcher._Plan(kern, (3, 4))
    addr = plan.params_address()
    ptrs = (ctypes.c_void_p * 2).from_address(addr)
    assert [ctypes.c_int64.from_address(p).value for p in ptrs] == [3, 4]
    assert isinstance(launcher._ctype(True), ctypes.c_bool)  # Numba's bools and array fields
    assert launcher._ctype(2**40).value == 2**40
    with pytest.raises(TypeError):
        launcher._ctype("x")
    assert plan.params_address() == addr  # unchanged arguments: the same array
    plan.update((3, 9))
    ptrs = (ctypes.c_void_p * 2).from_address(plan.params_address())
    assert [ctypes.c_int64.from_address(p).value for p in ptrs] == [3, 9]


@pytest.mark.parametrize("args", [
    (FakeArray(types.int64), FakeArray(), 5, True),  # another dtype: another compiled overload
    (FakeArray(), FakeArray(), 5, 1),  # int where the kernel was compiled for a bool
    (FakeArray(), FakeArray(), 5),  # another arity
])
def test_plan_refuses_arguments_of_another_type(args):
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2 + (types.int64, types.boolean))
    plan = launcher._Plan(kern, (FakeArray(), FakeArray(), 5, True))
    assert not plan.update(args)
