"""The simulator extension: what numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) lacks,
so that the kernels written for the GPU run unchanged, and are tested, without one.

numba-cuda's simulator runs every CUDA thread of a block as a Python thread, one block at a time,
and swaps the global name ``cuda`` inside kernels for a ``FakeCUDAModule``. This package adds:

* ``warp``: the warp intrinsics (``shfl_*_sync``, ``ballot_sync``, ``activemask``, ``syncwarp``,
  ``all/any/eq_sync``, ``match_*_sync``, ...) with real lock-step semantics, and correct bit ops;
* ``cluster``: thread-block clusters (``run_cluster``; the Python bodies of ``kernels.cluster``'s
  intrinsics): a cluster's blocks side by side, a cluster barrier, distributed shared memory;
* ``grid``: grid-wide synchronisation, ``cuda.cg.this_grid().sync()`` across every block of an
  ordinary launch (its blocks go side by side at the first grid barrier), and
  ``max_cooperative_grid_blocks`` for the simulator's cap;
* ``blockmanager``: the code copied from numba-cuda's simulator, the release it follows
  (``FOLLOWS``) and ``upstream_mismatch()``;
* ``installer``: ``install()``, which patches all of it in.

Nothing is patched on import: ``explorer.backend`` calls :func:`install` when it selects the
simulator (``backend.select("simulator")``, or ``"auto"`` with ``NUMBA_ENABLE_CUDASIM=1``, as
tests/conftest.py does); code that uses the simulator without ``explorer`` calls it itself.
Kernel modules import this package only for :func:`simulator_enabled` and the intrinsics' Python
bodies, never to install it. On a real GPU :func:`install` does nothing and returns False.

Settings (``kernels.cudasim.config``, or temporarily ``with cudasim.settings(...)``)
------------------------------------------------------------------------------------
``timeout``         seconds a thread waits in a warp, cluster or grid barrier before raising
                    (default 60, environment variable ``BFS4K_SIM_WARP_TIMEOUT``).
``exited_lanes``    ``"raise"`` (default): a warp mask naming an exited or absent lane raises --
                    stricter than the CUDA guide, which only requires all *non-exited* lanes of
                    the mask to take part, but it catches the classic ``if tid >= n: return``
                    followed by a full-mask reduction that then reads garbage. ``"ignore"``:
                    documented hardware behaviour, exited and absent lanes are dropped from the
                    mask (they count as 0 in ballot/any/all); reading from them is still caught
                    by ``undefined_read``.
``undefined_read``  ``"raise"`` (default) or ``"poison"``: a shuffle from a non-participating lane
                    returns 0xDEADBEEF-like garbage (NaN for floats) instead of raising, for code
                    that reads and then discards such values, as is legal on hardware.
``grid_threads``    threads a cooperative grid may have in all, its blocks running side by side
                    (default 1024, environment variable ``BFS4K_SIM_GRID_THREADS``):
                    ``max_cooperative_grid_blocks(threads)`` is ``grid_threads // threads``.

Limits (what still differs from hardware; each module lists its own)
--------------------------------------------------------------------
* Memory model: all memory is sequentially consistent Python/NumPy memory (fences are no-ops,
  every write is visible at once); races that would need ``syncwarp``/``threadfence`` on hardware
  can pass here. Conversely a read-after-write across lanes is only guaranteed on the GPU with
  ``syncwarp``/``syncthreads`` between them -- write tests that way.
* Blocks of an ordinary launch run one after another, so inter-block communication through global
  memory that waits on another block deadlocks. The exceptions: a cluster launch,
  :func:`run_cluster`, runs a cluster's blocks side by side, and a launch whose threads reach
  ``cuda.cg.this_grid().sync()`` runs all its blocks side by side from then on (``grid``), up to
  ``config.grid_threads`` threads.
* One kernel at a time; threads are Python threads, so keep blocks small in tests: the
  simulator's own ``syncthreads`` polls every thread of the block, about 0.1 s per call at 1024
  threads on a 2-core machine (a warp barrier costs a few ms). Simulated single-block kernels
  should use 64-128 threads.
"""

from .blockmanager import FOLLOWS, upstream_mismatch
from .cluster import run_cluster
from .common import (GridSyncError, GridTimeoutError, WarpSyncError, WarpTimeoutError, config, settings,
                     simulator_enabled)
from .installer import install, is_installed

__all__ = [
    "FOLLOWS",
    "GridSyncError",
    "GridTimeoutError",
    "WarpSyncError",
    "WarpTimeoutError",
    "config",
    "install",
    "is_installed",
    "run_cluster",
    "settings",
    "simulator_enabled",
    "upstream_mismatch",
]
