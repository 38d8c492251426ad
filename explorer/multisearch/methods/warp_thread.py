"""The warp-thread hybrid (McLaughlin, Riedy & Bader §III-B, Algorithm 1): a block per search, two
queues; a frontier vertex of out-degree < T goes to the thread queue (a thread gathers its
neighbours), the others to the warp queue (a warp each). T = 16 by default (the paper's), any
T >= 0, infinity, or "auto": chosen from the graph's out-degree histogram (threshold.py)."""
from __future__ import annotations

from ..threshold import T_DEFAULT, T_INFINITE, choose_threshold
from . import Method
from .block import BlockSearch


class WarpThread(BlockSearch):
    method = Method.WARP_THREAD

    def threshold(self, T, graph):
        choice = choose_threshold(graph) if T == "auto" else None
        return (choice.T if choice else (T_DEFAULT if T is None else T)), choice

    def kernel(self, callbacks, T):
        from kernels import multisearch as km

        # T = 0 leaves the thread queue empty and T = infinity the warp queue: their kernels skip it.
        return km.search_kernel(callbacks, T != T_INFINITE, T != 0)
