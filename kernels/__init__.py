"""Device side of the explorer: Numba CUDA kernels and device functions only.

Nothing in this package imports `explorer`. Under Numba's CUDA simulator the warp intrinsics the
kernels use are supplied by `kernels.sim`, installed on import.
"""
from numba.core import config


def ensure_simulator_intrinsics() -> None:
    """Install shfl/ballot/activemask/syncwarp into the simulator (no-op on a real GPU)."""
    if config.ENABLE_CUDASIM:
        from . import sim

        sim.install()


ensure_simulator_intrinsics()
