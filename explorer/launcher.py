"""Kernel launches with their arguments marshalled once per run.

Numba's dispatcher types and marshals every argument on every launch: about 110 µs for BFS-4K's
25-argument kernels on an H100, more than the GPU needs for a small level, and a BFS launches
two or three kernels a level. Within one run the arrays are the same objects and only a few
scalars change, so `Launcher` keeps each kernel's marshalled argument list and redoes only the
arguments that changed. Compilation (or loading from the disk cache) still goes through Numba,
in `prepare`, which the engine calls outside its timed window.

This uses numba-cuda internals (`_prepare_args`, the code library's kernel handle, cuda.core's
`launch`), tested with the 0.30 series pyproject.toml pins; where they are missing the plain
dispatcher launch is used. The simulator always uses the plain launch.
"""
from __future__ import annotations

from itertools import chain
from typing import Callable

class PlainLauncher:
    """Numba's own launch path (the simulator's): `launcher(kernel, blocks, threads, shared, *args)`."""

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        kernel[blocks, threads, 0, shared](*args)

    def zero(self, arr) -> None:
        from kernels import common

        self(common.zero_int64, 1, 128, 0, arr)


class _Plan:
    """One kernel's compiled overload and the marshalled form of its last arguments."""

    __slots__ = ("kern", "func", "types", "args", "chunks")

    def __init__(self, kern, args):
        self.kern = kern
        self.func = kern._codelibrary.get_cufunc().kernel
        self.types = kern.argument_types
        self.args = list(args)
        self.chunks = [self._marshal(i, a) for i, a in enumerate(args)]

    def _marshal(self, i, value):
        out, retr = [], []
        self.kern._prepare_args(self.types[i], value, 0, retr, out)
        if retr:  # a host array was copied for this launch: never reuse that
            raise TypeError("host arrays are not reused between launches")
        return out

    def update(self, args) -> bool:
        """Re-marshal the arguments that changed; False if the compiled overload no longer fits."""
        if len(args) != len(self.args):
            return False
        for i, a in enumerate(args):
            old = self.args[i]
            if a is old:
                continue
            if _fast_type(a) != self.types[i]:
                return False  # a type change (or an unusual argument): let Numba type it again
            self.chunks[i] = self._marshal(i, a)
            self.args[i] = a
        return True


def _fast_type(value):
    """Numba's type of a kernel argument, for the cases a BFS passes: Python scalars and device
    arrays (the frontier queues swap places every level). None for anything else."""
    from numba.cuda import types

    if type(value) is bool:
        return types.boolean
    if type(value) is int:
        return types.int64
    if type(value) is float:
        return types.float64
    return getattr(value, "_numba_type_", None)


class Launcher:
    """`launcher(kernel, blocks, threads, shared_bytes, *args)` launches on the default stream.

    Call `prepare` with the same arguments first (outside any timing): it compiles what is not
    compiled yet, reporting through `on_compile(kernel_name)`, and marshals the arguments. One
    launcher serves every run of the process (`Launcher.shared()`): the engine reuses a graph's
    device buffers between runs, so a second run re-marshals only its scalars.
    """

    _shared: "Launcher | None" = None

    def __init__(self):
        from numba.cuda.cudadrv import driver

        self._plans: dict = {}
        self._configs: dict = {}
        self._stream = driver._to_core_stream(0)

    @classmethod
    def shared(cls) -> "Launcher":
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def prepare(self, kernel, blocks, threads, shared, *args,
                on_compile: Callable[[str], None] | None = None) -> None:
        plan = self._plans.get(kernel)
        if plan is not None and plan.update(args):
            return
        argtypes = tuple(kernel.typeof_pyval(a) for a in args)
        if argtypes not in kernel.overloads:
            if on_compile is not None:
                on_compile(getattr(kernel, "__name__", None) or kernel.py_func.__name__)
            kernel.compile(argtypes)
        self._plans[kernel] = _Plan(kernel.overloads[argtypes], args)

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        from cuda.core import launch

        plan = self._plans.get(kernel)
        if plan is None or not plan.update(args):
            self.prepare(kernel, blocks, threads, shared, *args)
            plan = self._plans[kernel]
        launch(self._stream, self._config(blocks, threads, shared), plan.func, *chain.from_iterable(plan.chunks))

    def preparing(self, on_compile: Callable[[str], None] | None = None) -> "_Preparing":
        """A launcher-shaped object that only prepares: for the untimed first pass."""
        return _Preparing(self, on_compile)

    def zero(self, arr) -> None:
        """arr[:] = 0 with one memset on the default stream (no kernel launch)."""
        from numba.cuda.cudadrv import driver

        driver.device_memset(arr, 0, arr.nbytes)

    def _config(self, blocks, threads, shared):
        key = (blocks, threads, shared)
        cfg = self._configs.get(key)
        if cfg is None:
            from cuda.core import LaunchConfig

            cfg = self._configs[key] = LaunchConfig(grid=blocks, block=threads, shmem_size=shared)
        return cfg


class _Preparing:
    def __init__(self, launcher: Launcher, on_compile):
        self._launcher = launcher
        self._on_compile = on_compile

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        self._launcher.prepare(kernel, blocks, threads, shared, *args, on_compile=self._on_compile)

    def zero(self, arr) -> None:
        pass
