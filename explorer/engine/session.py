"""A graph's device arrays and buffer pool, owned by the caller and closed deterministically.

Copying a graph to the GPU is the slow part of a short run, and allocating a run's buffers costs
milliseconds on large graphs: a `Session` keeps both for as many runs as the caller makes.

    with Session(graph) as s:
        for knobs in settings:
            run_bfs(graph, 0, "bfs4k", knobs, session=s).complete()

Each run takes a pool of buffers of its own for as long as it lasts, so two runs advanced
alternately never share a buffer. `run_bfs` without a session makes one for the run alone.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

import numpy as np

from .runtime import Runtime


class SessionClosed(RuntimeError):
    """The session was closed: its device arrays are gone."""


class Session:
    def __init__(self, graph, on_status: Callable[[str], None] | None = None):
        self.graph = graph
        self._status = on_status or (lambda msg: None)
        self._graph_arrays: dict = {}  # runtime kind -> (offsets, indices)
        self._derived: dict = {}  # (name, runtime kind) -> arrays built from the graph
        self._free: dict = {}  # runtime kind -> [pool, ...] not in use by a run
        self._closed = False

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Drop the device arrays and buffers (GPU memory is freed when no run holds them)."""
        self._graph_arrays.clear()
        self._derived.clear()
        self._free.clear()
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise SessionClosed("this session is closed: open a new Session(graph) for more runs")

    def graph_arrays(self, runtime: Runtime):
        """(offsets int64, indices int32) where `runtime` reads them, copied there once."""
        self._check_open()
        arrays = self._graph_arrays.get(runtime.kind)
        if arrays is None:
            g = self.graph
            if runtime.kind != "cpu" and g.num_arcs > 5_000_000:
                self._status(f"copying {g.name} ({g.num_arcs:,} arcs) to the GPU")
            arrays = (runtime.to_device(np.ascontiguousarray(g.offsets, dtype=np.int64)),
                      runtime.to_device(np.ascontiguousarray(g.indices, dtype=np.int32)))
            self._graph_arrays[runtime.kind] = arrays
        return arrays

    def derived(self, name: str, build, runtime: Runtime) -> tuple:
        """Arrays a technique derives from the graph (e.g. its reverse CSR for bottom-up steps):
        `build(graph)` returns a tuple of numpy arrays, built once a session and copied to where
        `runtime` reads them."""
        self._check_open()
        key = (name, runtime.kind)
        arrays = self._derived.get(key)
        if arrays is None:
            arrays = self._derived[key] = tuple(runtime.to_device(np.ascontiguousarray(a)) for a in build(self.graph))
        return arrays

    def acquire(self, runtime: Runtime) -> "BufferPool":
        """A pool of buffers for one run (reused from an earlier run on this graph where free)."""
        self._check_open()
        free = self._free.setdefault(runtime.kind, [])
        return BufferPool(runtime, free.pop() if free else {})

    def release(self, pool: "BufferPool") -> None:
        if not self._closed:
            self._free.setdefault(pool.runtime.kind, []).append(pool.arrays)


@contextmanager
def session_or_own(session: "Session | None", graph, on_status: Callable[[str], None] | None = None):
    """The caller's session, or one of `graph` of its own, closed when the block ends."""
    if session is not None:
        yield session
        return
    with Session(graph, on_status) as own:
        yield own


@contextmanager
def run_pool(session: "Session | None", graph, runtime: Runtime, on_status: Callable[[str], None] | None = None):
    """(session, pool) for one run: a pool of the caller's session, or of a session of the run's
    own (closed with it), given back however the run ends."""
    with session_or_own(session, graph, on_status) as s:
        pool = s.acquire(runtime)
        try:
            yield s, pool
        finally:
            s.release(pool)


class BufferPool:
    """A run's buffers by name, kept for the next run on the same session."""

    def __init__(self, runtime: Runtime, arrays: dict):
        self.runtime = runtime
        self.arrays = arrays

    def buffer(self, name: str, shape, dtype, host: bool | str = False):
        """A device array of this shape and type; with host=True pinned host memory, with
        host="mapped" host memory a kernel reads and writes while it runs."""
        key = (name, host)
        shape = shape if isinstance(shape, tuple) else (shape,)
        arr = self.arrays.get(key)
        if arr is None or arr.shape != shape or arr.dtype != dtype:
            rt = self.runtime
            arr = (rt.mapped_array if host == "mapped" else rt.host_array if host else rt.device_array)(shape, dtype)
            self.arrays[key] = arr
        return arr

    def group(self, name: str, value):
        """`value`, a namedtuple of a kernel's arguments, or the one kept under `name` when it holds
        the same objects: the same object in every run while its arrays are, so launches reuse the
        arguments they marshalled (a group made anew is typed and marshalled again)."""
        key = (name, "group")
        kept = self.arrays.get(key)
        if type(kept) is type(value) and all(a is b for a, b in zip(kept, value)):
            return kept
        self.arrays[key] = value
        return value

    def view(self, name: str, base, lo: int, hi: int):
        """base[lo:hi], the same object in every run while `base` is: launches reuse marshalled arguments."""
        key = (name, "view")
        cached = self.arrays.get(key)
        if cached is None or cached[0] is not base:
            cached = self.arrays[key] = (base, base[lo:hi])
        return cached[1]
