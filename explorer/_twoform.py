"""CPU kernels compiled from one source in two forms: parallel (its prange loops over threads) for
large inputs, serial (prange runs as range) for small ones.

Numba's parallel form costs about twice as long to compile, and a graph of a few hundred thousand
arcs gains nothing from threads: a first run on such a graph, in a fresh environment, waits for the
serial forms only. The warm-up compiles both (`both_forms`). Both forms compute the same values:
each loop's iterations are independent, or sum in an order that does not change the result."""
from __future__ import annotations

import contextlib
import types

import numba

SERIAL_BELOW = 1 << 19  # elements of the input that decides: under it, the serial form (a build about 0.1 s slower there)

_parallel_only = [False]


class TwoForm:
    """`kernel.at(size)` is the form for an input of `size` elements; `.serial` and `.parallel`
    are the two Numba dispatchers (cached on disk under distinct names)."""

    def __init__(self, fn):
        self.parallel = numba.njit(cache=True, parallel=True)(fn)
        # A distinct function object and name: Numba's disk cache is keyed by the function's
        # name and line, not by its parallel flag, so the two forms would overwrite each other.
        serial = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
        serial.__qualname__ = fn.__qualname__ + "__serial"
        serial.__doc__ = fn.__doc__
        self.serial = numba.njit(cache=True)(serial)
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__

    def at(self, size: int):
        return self.parallel if size >= SERIAL_BELOW or _parallel_only[0] else self.serial


def two_forms(fn) -> TwoForm:
    return TwoForm(fn)


@contextlib.contextmanager
def parallel_forms():
    """Within it, every input takes the parallel form (the warm-up compiles it on tiny graphs)."""
    _parallel_only[0] = True
    try:
        yield
    finally:
        _parallel_only[0] = False
