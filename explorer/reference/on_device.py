"""check_result's fast path where a run's arrays are: on the GPU (or the simulator), with nothing
but the verdict copied back.

A sweep repeats a run hundreds of times and needs of each only its time and whether it was right.
On the host a check reads the run's two arrays back and looks up every parent's arc (Kronecker
scale 22: 32 MB copied and about 30 ms of host memory traffic a run, shared by every process of
the host); kernels/check.py does the same on the device in well under a millisecond.

    check = DeviceCheck(graph, source, bfs_distances(graph, source))
    run_bfs(graph, Vertex(source), technique, knobs, session=s, check=check).complete()

A run that passes keeps its arrays on the device (its RunResult's distances and parents are None,
its validation "ok"); one that does not is read back as any other, for check_result's report.
"""
from __future__ import annotations

import weakref

import numpy as np

from .bfs import CSRLike, _check_source, rows_sorted, traversed_edges
from .validate import _valid_message

__all__ = ["DeviceCheck"]

#: Threads a block of the check's kernels; their blocks are capped at this many an SM.
THREADS = 256
BLOCKS_PER_SM = 8


#: Whether each graph's rows are sorted (a pass over its arcs, made once a graph).
_SORTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rows_sorted(graph) -> bool:
    held = _SORTED.get(graph)
    if held is None:
        held = _SORTED[graph] = bool(rows_sorted(np.ascontiguousarray(graph.offsets, dtype=np.int64),
                                                 np.ascontiguousarray(graph.indices, dtype=np.int32)))
    return held


class DeviceCheck:
    """The check of BFS results from `source` (a vertex 0..n-1) against `expected`
    (bfs_distances(graph, source)), run where each result is. One check at a time: its scratch
    array is shared by the checks it makes."""

    def __init__(self, graph: CSRLike, source: int, expected):
        n = graph.num_vertices
        e = np.ascontiguousarray(expected, dtype=np.int32)
        if e.shape != (n,):
            raise ValueError(f"expected distances have shape {e.shape}, not ({n},) for graph {graph.name!r}")
        self.graph, self.source, self.expected = graph, _check_source(source, n), e
        #: What a passed result's RunResult holds, computed once from the distances it equals.
        self.traversed_edges = traversed_edges(graph, e)
        self.message = f"{_valid_message(self.source, e)}; distances equal the CPU reference BFS (checked on the device)"
        # Sorted rows: a binary search finds each parent's arc. Else a pass over every arc marks them.
        self.marked = not _rows_sorted(graph)
        self._arrays: dict = {}  # runtime kind -> (expected, found, failures) where that runtime reads
        self._failures: dict = {}  # runtime kind -> the failures counted there so far

    def passes(self, runtime, graph_arrays, dist, parent) -> bool:
        """Whether (dist, parent), device arrays of `runtime` in the graph's ids (int32[n]), are a BFS
        tree with exactly the expected distances. `graph_arrays`: the graph's (offsets, indices) there."""
        from kernels.args import Graph, Tree
        from kernels.check import mark_parent_arcs, wrong_vertices

        from ..device import blocks_for

        kind, n = runtime.kind, self.graph.num_vertices
        if any(a.shape != (n,) or a.dtype != np.int32 for a in (dist, parent)):
            return False  # not the arrays the kernels read: the host's check has them
        arrays = self._arrays.get(kind)
        if arrays is None:
            arrays = self._arrays[kind] = (runtime.to_device(self.expected),
                                           runtime.to_device(np.zeros(n if self.marked else 1, np.int32)),
                                           runtime.to_device(np.zeros(1, np.int64)))
            self._failures[kind] = 0
        expected, found, failures = arrays
        graph, cap = Graph(*graph_arrays), runtime.limits.sm_count * BLOCKS_PER_SM
        quiet = lambda *a: None  # noqa: E731 (the kernels compile once, on the first check)
        if self.marked:
            runtime.launch_now(quiet, mark_parent_arcs, min(cap, blocks_for(32 * n, THREADS)), THREADS, 0,
                               graph, parent, found)
        runtime.launch_now(quiet, wrong_vertices, min(cap, blocks_for(n, THREADS)), THREADS, 0, graph,
                           Tree(dist, parent), expected, self.source, bool(self.graph.directed), self.marked,
                           found, failures)
        before, self._failures[kind] = self._failures[kind], int(runtime.to_host(failures)[0])
        return self._failures[kind] == before
