"""Warp-based (McLaughlin, Riedy & Bader §III-A): a block per search, a warp per frontier vertex
(the warp-thread hybrid with T = 0, its kernel without a thread queue)."""
from __future__ import annotations

from . import Method
from .block import BlockSearch


class WarpBased(BlockSearch):
    method = Method.WARP
    fixed_T = 0

    def kernel(self, callbacks, T):
        from kernels import multisearch as km

        return km.search_kernel(callbacks, True, False)
