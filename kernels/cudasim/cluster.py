"""Thread-block clusters under the simulator: a cluster's blocks side by side, each with its own
shared memory, a cluster barrier and distributed shared memory between them.

The intrinsics a kernel calls (``cluster_rank`` ... ``cluster_store``) are defined here by their
Python bodies, which are what the simulator runs; ``kernels.cluster`` re-exports them and, on a
GPU, gives each an inline-PTX implementation (a Numba overload) and documents them. They need a
cluster launch, :func:`run_cluster` (``explorer.launcher``'s ``cluster`` under the simulator):

* The simulator's own launch runs blocks one at a time, sharing one set of shared arrays;
  ``run_cluster`` runs the blocks of one cluster side by side (clusters one after another), each
  with its own shared-memory arena, so that one variable has the same address in every block.
* ``barrier.cluster`` waits for every non-exited thread of the cluster's blocks.
* A shared-memory address is 32 bits: ``(rank + 1) << 24 | offset`` once mapped to a block,
  the offset alone for the calling block's own memory.
* Static shared arrays may total 64 KB a block under ``run_cluster``; launches are 1-D.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from .blockmanager import fake_arg
from .installer import is_installed

_RANK_SHIFT = 24  # a mapped address: (rank + 1) << 24 | offset in the block's shared memory
_STATIC_SHARED = 64 * 1024  # bytes of static shared arrays a block may have under run_cluster


class _ClusterShared:
    """Shared memory of a cluster launch's blocks: one arena per block, the dynamic part first and
    the static arrays after it at offsets fixed per source line for the whole launch, so that one
    variable has the same address in every block, as on the GPU (the simulator's own shared memory
    is one set of arrays for all blocks, which only works when they run one after another)."""

    def __init__(self, dynshared_size, nblocks):
        self._dyn = int(dynshared_size)
        self._next = (self._dyn + 15) & ~15
        self._layout = {}
        self._lock = threading.Lock()
        self.arenas = [np.zeros(self._next + _STATIC_SHARED, np.byte) for _ in range(nblocks)]

    def array(self, shape, dtype, alignment=None):
        from numba.cuda import types
        from numba.cuda.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        dtype = np.dtype(dtype)
        arena = self.arenas[threading.current_thread().blockIdx.x]
        if shape == 0:
            return np.frombuffer(arena.data, dtype=dtype, count=self._dyn // dtype.itemsize)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        count = int(np.prod(shape))
        frame = sys._getframe(1)  # the kernel's line, as the simulator's own shared arrays are keyed
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with self._lock:
            offset = self._layout.get(caller)
            if offset is None:
                offset = self._layout[caller] = self._next
                self._next = (offset + count * dtype.itemsize + 15) & ~15
                if self._next > len(arena):
                    raise MemoryError(f"static shared arrays of more than {_STATIC_SHARED} bytes a block "
                                      "under kernels.cudasim.run_cluster")
        return np.frombuffer(arena.data, dtype=dtype, count=count, offset=offset).reshape(shape)


class _ClusterBarrier:
    """barrier.cluster: waits for every non-exited thread of the cluster's blocks."""

    def __init__(self, parties):
        self.cond = threading.Condition()
        self.parties = parties
        self.waiting = 0
        self.generation = 0
        self.broken = False

    def wait(self):
        with self.cond:
            gen = self.generation
            self.waiting += 1
            if self.waiting >= self.parties:
                self._release()
            while gen == self.generation and not self.broken:
                self.cond.wait()
            if self.broken:
                raise RuntimeError("cluster barrier broken: another block of the cluster failed")

    def leave(self):
        with self.cond:
            self.parties -= 1
            if self.waiting and self.waiting >= self.parties:
                self._release()

    def abort(self):
        with self.cond:
            self.broken = True
            self.cond.notify_all()

    def _release(self):
        self.waiting = 0
        self.generation += 1
        self.cond.notify_all()


class _ClusterBlock:
    """One block's view of its cluster: what the kernels.cluster intrinsics do under the simulator."""

    def __init__(self, shared, first, size, rank, barrier):
        self._shared = shared
        self._first = first
        self.size = size
        self.rank = rank
        self._barrier = barrier

    def thread_exited(self):
        self._barrier.leave()  # barrier.cluster waits for the non-exited threads only

    def sync(self):
        thread = threading.current_thread()
        with thread._bfs4k_warp.blocked(thread):
            self._barrier.wait()

    def address(self, array, i):
        arena = self._shared.arenas[self._first + self.rank]
        if not isinstance(array, np.ndarray):  # global arrays are the simulator's device arrays
            raise ValueError("smem_addr: the array is not in this block's shared memory")
        if array.ndim != 1 or array.dtype not in (np.int32, np.int64):
            raise TypeError("smem_addr takes a one-dimensional int32 or int64 shared array")
        offset = array.ctypes.data + int(i) * array.strides[0] - arena.ctypes.data
        if not 0 <= offset <= len(arena) - array.itemsize:
            raise ValueError("smem_addr: the array element is not in this block's shared memory")
        return offset

    def map(self, addr, rank):
        if not 0 <= rank < self.size:
            raise IndexError(f"cluster_map: rank {int(rank)} outside the cluster of {self.size} blocks")
        return (int(rank) + 1) << _RANK_SHIFT | int(addr) & ((1 << _RANK_SHIFT) - 1)

    def _word(self, addr, dtype=np.int32):
        addr = int(addr)
        rank = (addr >> _RANK_SHIFT) - 1
        offset = addr & ((1 << _RANK_SHIFT) - 1)
        size = np.dtype(dtype).itemsize
        arena = self._shared.arenas[self._first + (self.rank if rank < 0 else rank)]
        words = arena[:len(arena) // size * size].view(dtype)
        if offset % size or offset // size >= len(words):
            raise ValueError(f"shared-memory address {addr:#x} is misaligned or past the block's shared memory")
        return words, offset // size

    def load(self, addr, dtype=np.int32):
        words, i = self._word(addr, dtype)
        return words[i]

    def fetch_or(self, addr, bits):
        from numba.cuda.simulator.kernelapi import orlock  # the lock of cuda.atomic.or_

        words, i = self._word(addr)
        with orlock:
            old = words[i]
            words[i] = old | np.int32(bits)
        return old

    def fetch_add(self, addr, x, dtype=np.int32):
        from numba.cuda.simulator.kernelapi import addlock  # the lock of cuda.atomic.add

        words, i = self._word(addr, dtype)
        with addlock:
            old = words[i]
            words[i] = old + dtype(x)
        return old

    def store(self, addr, x):
        words, i = self._word(addr)
        words[i] = np.int32(x)


def cluster_of_thread() -> _ClusterBlock:
    """The calling simulated thread's cluster (kernels.cluster's Python bodies use it)."""
    manager = getattr(threading.current_thread(), "_manager", None)
    block = getattr(manager, "_bfs4k_cluster", None)
    if block is None:
        raise RuntimeError("cluster intrinsics need a cluster launch: kernels.cudasim.run_cluster "
                           "(explorer.launcher's cluster launch) under the simulator")
    return block


def run_cluster(kernel, cluster_size, blocks, threads, shared_bytes, *args):
    """Simulate ``kernel`` launched as ``blocks`` blocks of ``threads`` threads in clusters of
    ``cluster_size`` blocks, ``shared_bytes`` of dynamic shared memory a block: the blocks of one
    cluster run side by side, each with its own shared memory, clusters one after another. (The
    simulator's own launch runs blocks one at a time, sharing one set of shared arrays.)"""
    from numba.cuda.errors import normalize_kernel_dimensions
    from numba.cuda.simulator import kernel as simkernel
    from numba.cuda.simulator.kernelapi import FakeCUDAModule, swapped_cuda_module

    if not np.isscalar(blocks) or not np.isscalar(threads):
        raise ValueError("cluster launches are one-dimensional here")
    if cluster_size < 1 or blocks % cluster_size:
        raise ValueError(f"{blocks} blocks do not make clusters of {cluster_size}")
    if not is_installed():
        raise RuntimeError("run_cluster needs the simulator extension: select the simulator with "
                           "explorer.backend.select('simulator') (or call kernels.cudasim.install())")
    grid_dim, block_dim = normalize_kernel_dimensions(blocks, threads)
    module = FakeCUDAModule(grid_dim, block_dim, shared_bytes)
    shared = module._shared = _ClusterShared(shared_bytes, blocks)
    with simkernel._push_kernel_context(module):
        retr = []
        fake_args = [fake_arg(kernel, a, retr) for a in args]
        with swapped_cuda_module(kernel.fn, module):
            for first in range(0, blocks, cluster_size):
                barrier = _ClusterBarrier(cluster_size * threads)
                errors = []

                def run_block(b, first=first, barrier=barrier, errors=errors):
                    manager = simkernel.BlockManager(kernel.fn, grid_dim, block_dim, kernel._debug)
                    manager._bfs4k_cluster = _ClusterBlock(shared, first, cluster_size, b - first, barrier)
                    try:
                        manager.run((b, 0, 0), *fake_args)
                    except BaseException as e:  # noqa: BLE001 - re-raised below, in the caller
                        errors.append(e)
                        barrier.abort()

                runners = [threading.Thread(target=run_block, args=(b,), daemon=True)
                           for b in range(first, first + cluster_size)]
                for t in runners:
                    t.start()
                for t in runners:
                    t.join()
                if errors:  # the first failure, not the broken barriers it caused elsewhere
                    errors.sort(key=lambda e: "cluster barrier broken" in str(e))
                    raise errors[0]
        for writeback in retr:
            writeback()


# --------------------------------------------------------------------------
# The intrinsics' Python bodies (kernels.cluster documents them and adds the GPU's)


def cluster_rank():
    return np.int32(cluster_of_thread().rank)


def cluster_sync():
    cluster_of_thread().sync()


def smem_addr(array, i):
    return np.uint32(cluster_of_thread().address(array, i))


def cluster_map(addr, rank):
    return np.uint32(cluster_of_thread().map(addr, rank))


def cluster_load(addr):
    return np.int32(cluster_of_thread().load(addr))


def cluster_or(addr, bits):
    return np.int32(cluster_of_thread().fetch_or(addr, bits))


def cluster_add(addr, x):
    return np.int32(cluster_of_thread().fetch_add(addr, x))


def cluster_load64(addr):
    return np.int64(cluster_of_thread().load(addr, np.int64))


def cluster_add64(addr, x):
    return np.int64(cluster_of_thread().fetch_add(addr, x, np.int64))


def counter_add(counter, at, x):
    if isinstance(counter, (int, np.integer)):  # a cluster address: int64 counters in shared memory
        return cluster_add64(np.uint32(counter) + np.uint32(8 * at), x)
    from numba.cuda.simulator.kernelapi import FakeCUDAAtomic

    return FakeCUDAAtomic().add(counter, at, x)


def counter_load(counter, at):
    if isinstance(counter, (int, np.integer)):
        return cluster_load64(np.uint32(counter) + np.uint32(8 * at))
    return counter[at]


def cluster_store(addr, x):
    cluster_of_thread().store(addr, x)
