"""The code this extension copies from numba-cuda's simulator, and the version it follows.

Copied from numba-cuda 0.30.4, ``numba_cuda/numba/cuda/simulator/kernel.py``:

* :func:`run_block_threads` is ``BlockManager.run`` with one change (its polling loop sleeps);
* :func:`fake_arg` is the argument preparation inside ``FakeCUDAKernel.__call__``, for the
  launches this package runs itself (``run_cluster``).

``installer.py`` also wraps ``BlockThread`` (``__init__``, ``run``, ``syncthreads``, ``abort``),
``BlockManager`` (``__init__``, ``run``) and ``FakeOverload.max_cooperative_grid_blocks`` from that
file, and adds methods to ``FakeCUDAModule`` and replaces ``GridGroup.sync`` (``kernelapi.py``).
All of it depends on those two files: :func:`upstream_mismatch` says when the installed
numba-cuda is not the one followed here, and tests/test_sim.py fails with its message.
"""

from __future__ import annotations

import functools
import hashlib
import time
from importlib import metadata

import numpy as np

#: The numba-cuda release the copies and patches follow.
FOLLOWS = "0.30.4"
#: SHA-256 of the upstream files they were checked against, in that release.
UPSTREAM_FILES = {
    "numba_cuda/numba/cuda/simulator/kernel.py":
        "2202a5fb0922cb217547976ae2afcfb36917c71492f64f81fae32d149b670175",
    "numba_cuda/numba/cuda/simulator/kernelapi.py":
        "09d9a88aba1a12ff4594a9b00d2a47972319e96cdc830227d553f789d89d057a",
}

_POLL_SECONDS = 0.0002


def run_block_threads(self, grid_point, *args):
    """numba-cuda's BlockManager.run, with one change: the polling loop sleeps briefly.

    Upstream spins without releasing the GIL, so every lane woken from a warp barrier waits up
    to a whole switch interval (5 ms) for the poller; BFS kernels make thousands of warp-level
    calls, and this sleep makes them several times faster under the simulator.
    """
    from numba.cuda.simulator.kernel import BlockThread

    threads = set()
    livethreads = set()
    blockedthreads = set()
    for block_point in np.ndindex(*self._block_dim):

        def target():
            self._f(*args)

        t = BlockThread(target, self, grid_point, block_point, self._debug)
        t.start()
        threads.add(t)
        livethreads.add(t)

    while livethreads:
        time.sleep(_POLL_SECONDS)
        for t in livethreads:
            if t.syncthreads_blocked:
                blockedthreads.add(t)
            elif t.exception:
                for t_other in threads:
                    t_other.abort = True
                    t_other.syncthreads_blocked = False
                    t_other.syncthreads_event.set()
                raise t.exception[0].with_traceback(t.exception[1])
        if livethreads == blockedthreads:
            for t in blockedthreads:
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
            blockedthreads = set()
        livethreads = set([t for t in livethreads if t.is_alive()])
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


def fake_arg(kernel, arg, retr):
    """An argument as FakeCUDAKernel.__call__ passes it to the kernel's threads."""
    from numba.cuda.simulator.args import ArgHint, InOut
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

    _, arg = functools.reduce(lambda tv, ext: ext.prepare_args(*tv, stream=0, retr=retr), kernel.extensions,
                              (None, arg))
    if isinstance(arg, np.ndarray) and arg.ndim > 0:
        arg = InOut(arg).to_device(retr)
    elif isinstance(arg, ArgHint):
        arg = arg.to_device(retr)
    elif isinstance(arg, np.void):
        arg = FakeCUDAArray(arg)
    return FakeWithinKernelCUDAArray(arg) if isinstance(arg, FakeCUDAArray) else arg


def upstream_mismatch() -> str | None:
    """None when the installed numba-cuda is the release followed here; otherwise what differs
    and what to re-check, in words."""
    try:
        installed = metadata.version("numba-cuda")
    except metadata.PackageNotFoundError:
        installed = "not installed"
    changed = []
    files = {str(f): f for f in (metadata.files("numba-cuda") or [])} if installed != "not installed" else {}
    for path, digest in UPSTREAM_FILES.items():
        f = files.get(path)
        if f is None:
            changed.append(f"{path} (missing)")
        elif hashlib.sha256(f.locate().read_bytes()).hexdigest() != digest:
            changed.append(path)
    if installed == FOLLOWS and not changed:
        return None
    files_note = ("changed there: " + ", ".join(changed)) if changed else (
        "the two upstream files are byte-identical to " + FOLLOWS + "'s")
    return (
        f"kernels/cudasim follows numba-cuda {FOLLOWS}, but numba-cuda {installed} is installed "
        f"({files_note}). kernels/cudasim/blockmanager.py copies BlockManager.run and "
        "FakeCUDAKernel.__call__'s argument preparation from numba_cuda/numba/cuda/simulator/kernel.py, "
        "and kernels/cudasim/installer.py patches BlockThread, BlockManager, FakeCUDAModule, GridGroup "
        "and FakeOverload (simulator/kernel.py, simulator/kernelapi.py). Re-check: diff those two files "
        f"between numba-cuda {FOLLOWS} and {installed}, port upstream changes into the copies, make sure every "
        "patched attribute still exists with the same meaning, run tests/test_sim.py, tests/test_cluster.py "
        "and tests/test_primitives.py under the simulator, then update FOLLOWS and UPSTREAM_FILES in "
        "kernels/cudasim/blockmanager.py and the numba-cuda pin in pyproject.toml."
    )
