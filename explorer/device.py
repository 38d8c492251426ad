"""What the device can do and what is said while its kernels compile: below both the engine
(explorer.engine) and the techniques (explorer.techniques), which both use them.

`DeviceLimits` holds the constraints the papers' formulas use (#ResThreads, shared memory,
clusters): a technique's `check` refuses what the device cannot do before anything runs, and its
policy sizes launches from them. `blocks_for` is the grid that gives each item a thread.
`compile_status` is the line the launcher's `compile_overload` reports before and after a kernel
is prepared.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceLimits:
    """The device constraints the papers' formulas use (#ResThreads, shared memory, clusters)."""

    name: str
    sm_count: int
    max_threads_per_sm: int
    max_threads_per_block: int = 1024
    shared_per_block: int = 48 * 1024  # without the opt-in for larger dynamic shared memory
    shared_per_sm: int = 48 * 1024
    shared_per_block_optin: int = 0  # with the opt-in (0: none beyond shared_per_block)
    clusters: bool = False  # thread-block clusters (compute capability 9.0 and later)

    @property
    def res_threads(self) -> int:
        """#ResThreads of a grid over the whole GPU: its maximum resident threads."""
        return self.sm_count * self.max_threads_per_sm

    @property
    def shared_room(self) -> int:
        """The most shared memory one block may have (the launcher opts in beyond 48 KB)."""
        return max(self.shared_per_block_optin, self.shared_per_block)

    @classmethod
    def from_current_device(cls) -> "DeviceLimits":
        from numba import cuda

        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return cls(name=name, sm_count=dev.MULTIPROCESSOR_COUNT,
                   max_threads_per_sm=dev.MAX_THREADS_PER_MULTIPROCESSOR,
                   max_threads_per_block=dev.MAX_THREADS_PER_BLOCK,
                   shared_per_block=dev.MAX_SHARED_MEMORY_PER_BLOCK,
                   shared_per_sm=dev.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                   shared_per_block_optin=dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                   clusters=dev.compute_capability >= (9, 0))

    @classmethod
    def simulator(cls) -> "DeviceLimits":
        """A small pretend GPU for the simulator: enough resident threads for the policy to vary, and
        the shared memory a block of an H100 or H200 may opt in to."""
        return cls(name="simulator", sm_count=2, max_threads_per_sm=1024, shared_per_block_optin=227 * 1024,
                   clusters=True)


def blocks_for(items: int, block: int) -> int:
    """Blocks of `block` threads that give each of `items` a thread: at least one, so that a
    launch over nothing still runs (its threads find nothing to do)."""
    return max(1, -(-int(items) // block))


def compile_status(name: str, outcome: str | None, first_use: str = "first use in this process") -> str:
    """The status line for `compile_overload`'s report: before (outcome None) and after."""
    if outcome is None:
        return f"preparing the {name} kernel ({first_use}: compiling it, or loading it from the disk cache)"
    return f"the {name} kernel: {outcome}"
