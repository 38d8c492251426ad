"""`install()`: patch the extension into numba-cuda's simulator, once, when asked.

What it changes (numba-cuda 0.30.4, see ``blockmanager.py`` for the version check):

* ``FakeCUDAModule`` (the ``cuda`` a simulated kernel sees) gains the warp intrinsics of
  ``warp.METHODS`` and correct ``popc``/``clz``/``ffs``/``brev``;
* ``BlockManager.run`` becomes ``grid.run_block``: ``blockmanager.run_block_threads`` (a poll loop
  that sleeps) within the launch's grid, whose blocks go side by side at the first grid barrier;
* ``GridGroup.sync`` (``cuda.cg.this_grid().sync()``) becomes ``grid.grid_sync``, the barrier of
  every thread of the grid; ``FakeOverload.max_cooperative_grid_blocks`` says how many blocks
  that may be (``grid.max_blocks``); ``FakeCUDAModule.shared`` gives each block started side by
  side its own shared memory;
* ``BlockManager.__init__`` makes the block's warps; ``BlockThread.__init__`` puts each thread in
  its warp; ``BlockThread.run`` records its exit (warp and cluster barriers stop waiting for it,
  grid barriers raise);
  ``BlockThread.syncthreads`` marks the thread as blocked for ``activemask``; ``BlockThread.abort``
  becomes a property that wakes the thread's warp barrier when the BlockManager aborts a failed
  block.
"""

from __future__ import annotations

import threading

from . import grid
from .common import WARP_SIZE, simulator_enabled
from .warp import METHODS, warps_of

_install_lock = threading.Lock()
_MARK = "_bfs4k_warp_intrinsics"


def _abort_get(thread):
    return thread.__dict__.get("_bfs4k_abort", False)


def _abort_set(thread, value):
    # The BlockManager sets ``abort`` on every thread when one of them raised;
    # wake lanes waiting in a warp barrier so they stop too.
    thread.__dict__["_bfs4k_abort"] = value
    warp = thread.__dict__.get("_bfs4k_warp")
    if value and warp is not None:
        with warp.cond:
            warp.cond.notify_all()


def is_installed() -> bool:
    """True when the simulator is on and :func:`install` has patched it."""
    if not simulator_enabled():
        return False
    from numba.cuda.simulator import kernelapi

    return bool(getattr(kernelapi.FakeCUDAModule, _MARK, False))


def install() -> bool:
    """Patch the extension into the simulator. Idempotent and thread-safe.

    Returns True when the simulator is active (patched now or before), False (and does nothing)
    on a real GPU. ``explorer.backend`` calls it when it selects the simulator.
    """
    if not simulator_enabled():
        return False
    with _install_lock:
        from numba.cuda.simulator import kernel, kernelapi

        module_cls = kernelapi.FakeCUDAModule
        if getattr(module_cls, _MARK, False):
            return True

        for name, fn in METHODS.items():
            setattr(module_cls, name, fn)

        block_manager = kernel.BlockManager
        block_thread = kernel.BlockThread
        orig_bm_init = block_manager.__init__
        orig_bt_init = block_thread.__init__
        orig_bt_run = block_thread.run
        orig_bt_syncthreads = block_thread.syncthreads

        def bm_init(self, *args, **kwargs):
            orig_bm_init(self, *args, **kwargs)
            warps_of(self)

        def bt_init(self, f, manager, blockIdx, threadIdx, debug):
            orig_bt_init(self, f, manager, blockIdx, threadIdx, debug)
            warp = warps_of(manager)[self.thread_id // WARP_SIZE]
            self._bfs4k_warp = warp
            warp.threads[self.thread_id % WARP_SIZE] = self

        def bt_run(self):
            # BlockThread.run stores (not raises) the kernel's exception.
            try:
                orig_bt_run(self)
            finally:
                failure = self.exception[0] if self.exception else None
                self._bfs4k_warp.lane_exited(
                    self.thread_id % WARP_SIZE, None if failure is None else str(failure)
                )
                cluster = getattr(self._manager, "_bfs4k_cluster", None)
                if cluster is not None:
                    cluster.thread_exited()
                launch = getattr(self._manager, "_bfs4k_grid", None)
                if launch is not None:
                    launch.thread_exited(self, failure)

        def bt_syncthreads(self):
            # Lets activemask() see this lane as blocked (diverged).
            with self._bfs4k_warp.blocked(self):
                orig_bt_syncthreads(self)

        block_manager.__init__ = bm_init
        block_manager.run = grid.run_block
        kernelapi.GridGroup.sync = grid.grid_sync
        kernel.FakeOverload.max_cooperative_grid_blocks = grid.max_cooperative_grid_blocks
        module_cls.shared = property(grid.block_shared)
        block_thread.syncthreads = bt_syncthreads
        block_thread.abort = property(_abort_get, _abort_set)
        block_thread.__init__ = bt_init
        block_thread.run = bt_run
        setattr(module_cls, _MARK, True)
        return True
