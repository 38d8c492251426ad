"""Work-efficient (McLaughlin & Bader, SC14; the multi-search paper §IV): a block per search, a
thread per frontier vertex (the warp-thread hybrid with T = infinity, its kernel without a warp
queue)."""
from __future__ import annotations

from ..threshold import T_INFINITE
from . import Method
from .block import BlockSearch


class WorkEfficient(BlockSearch):
    method = Method.WORK_EFFICIENT
    fixed_T = T_INFINITE

    def kernel(self, callbacks, T):
        from kernels import multisearch as km

        return km.search_kernel(callbacks, False, True)
