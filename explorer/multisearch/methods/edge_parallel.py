"""Edge-parallel (Jia et al.; the multi-search paper §IV): a block per search; every level, the
block's threads take every arc of the graph and expand those whose source is on the level. It
keeps each arc's source for the whole run (4 bytes an arc) and no BFS order."""
from __future__ import annotations

import numpy as np

from . import Method
from .block import BlockSearch


def arc_sources(g) -> tuple:
    return (np.repeat(np.arange(g.num_vertices, dtype=np.int32), g.degrees()),)


class EdgeParallel(BlockSearch):
    method = Method.EDGE_PARALLEL
    slot_bytes_per_vertex = 4  # levels only
    keeps_order = False

    def kernel(self, callbacks, T):
        from kernels import multisearch as km

        return km.edge_kernel(callbacks)

    def run_bytes(self, graph) -> int:
        return 4 * graph.num_arcs

    def arc_source(self, ctx):
        return ctx.derived("multisearch.arc-sources", arc_sources)[0]
