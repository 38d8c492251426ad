"""Grid-wide synchronisation under the simulator: ``cuda.cg.this_grid().sync()`` across every
block of the grid.

On a GPU a kernel that calls ``cuda.cg.this_grid().sync()`` is launched cooperatively by Numba
(``kernel[blocks, threads](...)`` as usual), and its grid may hold only co-resident blocks:
``kernel.overloads[signature].max_cooperative_grid_blocks(threads)``. numba-cuda's simulator runs
blocks one after another, so its grid barrier only synchronises the calling block (and its
``max_cooperative_grid_blocks`` says 1). Once installed, this module makes the ordinary launch
work instead:

* A launch starts as the simulator's: block after block, sharing one set of shared arrays. When a
  thread first reaches the grid barrier, the launch becomes a cooperative one: every other block
  of the grid starts at once, side by side with the first, each with its own shared memory, each
  polled by its own BlockManager; then the barrier releases only when every thread of every
  block has arrived. Kernels that never call it run exactly as before.
* ``max_cooperative_grid_blocks(threads)`` says how many blocks run side by side: the simulator's
  cap is ``config.grid_threads`` threads in all (default 1024, environment variable
  ``BFS4K_SIM_GRID_THREADS``), so ``grid_threads // threads`` blocks (at least 1). A grid barrier
  in a larger grid raises :class:`GridSyncError` naming the cap, as a GPU rejects a cooperative
  launch beyond its co-resident blocks.
* Every thread of the grid must reach every grid barrier. A thread that has returned from the
  kernel (an ``if i >= n: return`` before it, or a block that finished before another reached
  the barrier) can never arrive: the threads waiting at the barrier, and any that reach it later,
  raise :class:`GridSyncError` naming the threads that returned, instead of hanging.
* A barrier that cannot complete (some threads in ``syncthreads`` or a warp barrier that never
  meets the others) raises :class:`GridTimeoutError` after ``config.timeout`` seconds, naming the
  blocks and threads that did not arrive and what they are doing.
* When one block fails, the threads of the others waiting at the barrier stop too; the launch
  raises the first failure, not the broken barriers it caused.

Limits: a grid barrier in a cluster launch (``run_cluster``) is not simulated (it raises); the
cooperative launch is recognised at the first grid barrier, not at the launch; with every
thread a Python thread, keep such grids to a few blocks of 32-64 threads in tests.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from .blockmanager import run_block_threads
from .common import GridSyncError, GridTimeoutError, config, fmt_ranges


class _GridBroken(GridSyncError):
    """A thread waiting at the grid barrier was released because another block failed."""


def max_blocks(block_dim) -> int:
    """Blocks a cooperative grid may have under the simulator, for blocks of ``block_dim``."""
    threads = int(np.prod(block_dim))
    return max(1, config.grid_threads // max(1, threads))


def max_cooperative_grid_blocks(overload, blockdim, dynsmemsize=0):
    """FakeOverload.max_cooperative_grid_blocks: the simulator's cap (upstream says 1)."""
    return max_blocks(blockdim)


class _GridLaunch:
    """One launch's grid: which blocks run side by side, and its barrier."""

    def __init__(self, module, manager):
        self.grid_dim = tuple(manager._grid_dim)
        self.block_dim = tuple(manager._block_dim)
        self.fn = manager._f
        self.debug = manager._debug
        self.dynshared = module._shared._dynshared_size
        self.nblocks = int(np.prod(self.grid_dim))
        self.parties = self.nblocks * int(np.prod(self.block_dim))
        self.cond = threading.Condition()
        self.args = ()
        self.side_by_side = False
        self.managers = {}  # block -> BlockManager
        self.runners = []  # threads running the other blocks once side by side
        self.errors = []  # failures of the blocks the runners ran
        self.joined = False
        self.waiting = set()  # BlockThreads at the barrier
        self.generation = 0
        self.exited = []  # (block, thread id) of the threads that returned
        self.broken = None

    # -- the blocks
    def run_first(self, manager, grid_point, args):
        """A block run by the simulator's own loop (every block until the grid goes side by side)."""
        manager._bfs4k_grid = self
        self.args = args
        self.managers[tuple(grid_point)] = manager
        try:
            run_block_threads(manager, grid_point, *args)
        except BaseException as e:
            if not self.side_by_side:
                raise
            self.abort(f"block {tuple(grid_point)} failed: {e}")
            raise self._first_failure([e]) from None

    def _start_others(self, first):
        from numba.cuda.simulator import kernel as simkernel
        from numba.cuda.simulator.kernelapi import FakeCUDAShared

        self.side_by_side = True
        for point in np.ndindex(*self.grid_dim):
            if point == first:
                continue
            manager = simkernel.BlockManager(self.fn, self.grid_dim, self.block_dim, self.debug)
            manager._bfs4k_grid = self
            manager._bfs4k_shared = FakeCUDAShared(self.dynshared)
            self.managers[point] = manager
            runner = threading.Thread(target=self._run_other, args=(manager, point), daemon=True)
            self.runners.append(runner)
            runner.start()

    def _run_other(self, manager, point):
        try:
            run_block_threads(manager, point, *self.args)
        except BaseException as e:  # noqa: BLE001 - raised by the launch, in the caller's thread
            with self.cond:
                self.errors.append(e)
            self.abort(f"block {point} failed: {e}")

    def join_all(self):
        """After the first block: wait for the blocks started beside it; raise the first failure."""
        if self.joined:
            return
        self.joined = True
        for runner in self.runners:
            runner.join()
        if self.errors:
            raise self._first_failure([])

    def _first_failure(self, own):
        deadline = time.monotonic() + config.timeout
        for runner in self.runners:
            runner.join(max(0.0, deadline - time.monotonic()))
        failures = sorted(own + self.errors, key=lambda e: isinstance(e, _GridBroken))
        return failures[0]

    def thread_exited(self, thread, failure):
        # A thread that failed fails its block, which breaks the barrier (abort); one that returned
        # can never arrive.
        if failure is not None:
            return
        with self.cond:
            self.exited.append((tuple(thread.blockIdx), thread.thread_id))
            if self.waiting:
                self.cond.notify_all()

    def abort(self, reason):
        with self.cond:
            if self.broken is None:
                self.broken = reason
            self.cond.notify_all()

    # -- the barrier
    def sync(self, thread):
        where = f"cuda.cg.this_grid().sync() in thread {thread.thread_id} of block {tuple(thread.blockIdx)}"
        with self.cond:
            self._check_exited(where)
            if not self.side_by_side:
                cap = max_blocks(self.block_dim)
                if self.nblocks > cap:
                    threads = int(np.prod(self.block_dim))
                    raise GridSyncError(
                        f"{where}: the grid has {self.nblocks} blocks of {threads} threads, but the simulator "
                        f"runs at most {cap} of them side by side (kernels.cudasim.config.grid_threads = "
                        f"{config.grid_threads} threads). Size a cooperative grid by "
                        f"kernel.overloads[signature].max_cooperative_grid_blocks({threads}), which says {cap} "
                        "here; a GPU rejects a cooperative launch beyond its co-resident blocks too")
                self._start_others(tuple(thread.blockIdx))
            generation = self.generation
            self.waiting.add(thread)
            if len(self.waiting) == self.parties:
                self.waiting.clear()
                self.generation += 1
                self.cond.notify_all()
                return
            deadline = time.monotonic() + config.timeout
            while generation == self.generation:
                if self.broken is not None:
                    self.waiting.discard(thread)
                    raise _GridBroken(f"{where}: grid barrier broken: {self.broken}")
                if getattr(thread, "abort", False):
                    self.waiting.discard(thread)
                    raise RuntimeError(f"abort flag set while {where} waited")
                if self.exited:
                    self.waiting.discard(thread)
                    self._check_exited(where)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    missing = self._describe_missing()
                    self.waiting.discard(thread)
                    raise GridTimeoutError(
                        f"{where} timed out after {config.timeout:g} s waiting for {missing}. Every thread of "
                        "every block must reach the same grid barrier (kernels.cudasim.config.timeout sets "
                        "the bound)")
                self.cond.wait(remaining)

    def _check_exited(self, where):
        if not self.exited:
            return
        by_block = {}
        for block, tid in self.exited:
            by_block.setdefault(block, []).append(tid)
        parts = [f"block {block}: threads {fmt_ranges(tids)}" for block, tids in sorted(by_block.items())[:4]]
        if len(by_block) > 4:
            parts.append(f"{len(by_block) - 4} more blocks")
        raise GridSyncError(
            f"{where}: threads of the grid have returned from the kernel and will never arrive "
            f"({'; '.join(parts)}). Every thread of the grid must reach every grid barrier: a thread that "
            "returns before one (if i >= n: return) leaves the others waiting forever on a GPU")

    def _describe_missing(self):
        parts = []
        for block, manager in sorted(self.managers.items()):
            missing = []
            for warp in getattr(manager, "_bfs4k_warps", []):
                for lane, t in sorted(warp.threads.items()):
                    if t not in self.waiting:
                        missing.append((t.thread_id, warp.lane_state(lane)))
            if missing:
                states = "; ".join(f"thread {tid}: {state}" for tid, state in missing[:3])
                parts.append(f"block {block}, threads {fmt_ranges([tid for tid, _ in missing])} ({states})")
        shown = parts[:4] + ([f"{len(parts) - 4} more blocks"] if len(parts) > 4 else [])
        return "; ".join(shown) if shown else "no thread (all arrived)"


_grids_lock = threading.Lock()


def run_block(manager, grid_point, *args):
    """BlockManager.run once installed: a block of an ordinary launch, within its grid."""
    from numba.cuda.simulator import kernel as simkernel

    module = simkernel._get_kernel_context()
    if module is None or getattr(manager, "_bfs4k_cluster", None) is not None:
        return run_block_threads(manager, grid_point, *args)
    with _grids_lock:
        grid = module.__dict__.get("_bfs4k_grid")
        if grid is None:
            grid = module._bfs4k_grid = _GridLaunch(module, manager)
    if grid.side_by_side:  # this block was started beside the first one, at the first grid barrier
        return grid.join_all()
    return grid.run_first(manager, grid_point, args)


def grid_sync(group):
    """GridGroup.sync once installed: the barrier of every thread of the grid."""
    thread = threading.current_thread()
    grid = getattr(getattr(thread, "_manager", None), "_bfs4k_grid", None)
    if grid is None:
        if getattr(getattr(thread, "_manager", None), "_bfs4k_cluster", None) is not None:
            raise GridSyncError("cuda.cg.this_grid().sync() in a cluster launch is not simulated: "
                                "kernels.cudasim.run_cluster runs one cluster at a time")
        raise GridSyncError("cuda.cg.this_grid().sync() called outside a simulated kernel launch")
    with thread._bfs4k_warp.blocked(thread):  # settled, for activemask()
        grid.sync(thread)


def block_shared(module):
    """FakeCUDAModule.shared once installed: the block's own shared memory where it has one (a block
    started side by side at a grid barrier), else the launch's."""
    manager = getattr(threading.current_thread(), "_manager", None)
    own = getattr(manager, "_bfs4k_shared", None)
    return own if own is not None else module._shared
