"""The launcher's argument reuse (explorer.launcher), with a stand-in for a compiled kernel: on a
GPU every BFS test also runs through it; here its bookkeeping is checked without one."""
import numpy as np
import pytest
from numba.cuda import types

from explorer import launcher


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
                return type("F", (), {"kernel": "handle"})()

        self._codelibrary = _Lib()

    def _prepare_args(self, ty, val, stream, retr, out):
        self.marshalled.append(val)
        out.append(val)


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
    assert plan.update((qb, qa, 6, True)) and kern.marshalled == [qb, qa, 6]  # queues swap, level moves
    assert [c[0] for c in plan.chunks] == [qb, qa, 6, True]


@pytest.mark.parametrize("args", [
    (FakeArray(types.int64), FakeArray(), 5, True),  # another dtype: another compiled overload
    (FakeArray(), FakeArray(), 5, 1),  # int where the kernel was compiled for a bool
    (FakeArray(), FakeArray(), 5),  # another arity
])
def test_plan_refuses_arguments_of_another_type(args):
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2 + (types.int64, types.boolean))
    plan = launcher._Plan(kern, (FakeArray(), FakeArray(), 5, True))
    assert not plan.update(args)
