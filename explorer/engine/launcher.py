"""Kernel launches with their arguments marshalled once per run.

Numba's dispatcher types and marshals every argument on every launch: about 110 µs for BFS-4K's
kernels (two dozen arrays and scalars in their groups) on an H100, more than the GPU needs for a
small level, and a BFS launches two or three kernels a level. Within one run the arrays are the
same objects and only a few scalars change, so `Launcher` keeps each kernel's marshalled
arguments and redoes only those that changed (a group's fields one by one, kernels.args).
Compilation (or loading from the disk cache) still goes through Numba, in `prepare`, which the
engine calls outside its timed window.

A launch is then one `cuLaunchKernel` call on a kept array of parameter pointers: cuda.core's
`launch` re-packs every ctypes argument on each call (30-50 µs for these kernels on an H100).

This uses numba-cuda internals (`_prepare_args`, the code library's function handle), tested with
the 0.30 series pyproject.toml pins. The simulator always uses Numba's own launch.
"""
from __future__ import annotations

import ctypes
import time
from itertools import chain
from typing import Callable

from ..device import compile_status  # noqa: F401  (the report's status line; callers may take it from here)
from ..knobs import KnobError


class PlainLauncher:
    """Numba's own launch path (the simulator's): `launcher(kernel, blocks, threads, shared, *args)`,
    with the stream operations of a level (record, zero, read) through Numba's API."""

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        kernel[blocks, threads, 0, shared](*args)

    def cluster(self, kernel, cluster_size, blocks, threads, shared, *args) -> None:
        """`blocks` blocks in clusters of `cluster_size` (kernels.cluster): Numba's launch has no
        cluster dimension, so only the simulator's (kernels.cudasim.run_cluster) is here."""
        from kernels import cudasim as sim

        if not sim.simulator_enabled():
            raise NotImplementedError("Numba cannot launch thread-block clusters: use explorer.launcher.Launcher")
        sim.run_cluster(kernel, cluster_size, blocks, threads, shared, *args)

    def cooperative(self, kernel, blocks, threads, shared, *args) -> None:
        """A kernel with a grid barrier (cuda.cg.this_grid().sync()): Numba launches such a kernel
        cooperatively itself on a GPU, and the simulator runs its blocks side by side at the barrier
        (kernels.cudasim.grid). `blocks` must not exceed max_cooperative_grid_blocks."""
        self(kernel, blocks, threads, shared, *args)

    def zero(self, arr) -> None:
        from kernels import common

        self(common.zero_int64, 1, 128, 0, arr)

    def record(self, event) -> None:
        event.record()

    def read(self, dev, host) -> None:
        """host[:] = dev, once everything before it on the stream has run."""
        dev.copy_to_host(host)


#: Kernel variants helper processes compile for this process's runs (explorer.warmup's
#: `load_for_run`): (kernel, argument types) -> wait(), which returns once the variant is in the
#: disk cache (the seconds waited), or None at once where this process should compile it itself.
IN_HELPERS: dict = {}


def compile_overload(kernel, argtypes, on_compile: Callable[..., None] | None) -> None:
    """kernel.compile(argtypes), told through `on_compile(name)` before and `on_compile(name, outcome)`
    after, where outcome says which it was: Numba's disk cache held it ("loaded from the disk cache
    in 0.31 s") or it was compiled ("compiled in 12.4 s"). The dispatcher's public `stats` count
    the cache hits. A variant a helper process is compiling for this run (explorer.warmup's
    `load_for_run`) is waited for, then loaded ("compiled in a helper process (waited 2.10 s for it), loaded ...")."""
    name = getattr(kernel, "__name__", None) or kernel.py_func.__name__
    if on_compile is not None:
        on_compile(name)
    wait = IN_HELPERS.pop((kernel, tuple(argtypes)), None)
    waited = wait() if wait is not None else None
    hits = sum(kernel.stats.cache_hits.values())
    t0 = time.perf_counter()
    kernel.compile(argtypes)
    seconds = time.perf_counter() - t0
    if on_compile is not None:
        how = "loaded from the disk cache" if sum(kernel.stats.cache_hits.values()) > hits else "compiled"
        helper = "" if waited is None else f"compiled in a helper process (waited {waited:.2f} s for it), "
        on_compile(name, f"{helper}{how} in {seconds:.2f} s")


class _Plan:
    """One kernel's compiled overload, the marshalled form of its last arguments and the array of
    pointers to them that cuLaunchKernel takes.

    A group of arguments (a namedtuple, kernels.args) is marshalled field by field, as Numba
    does: its fields are slots of their own, so a group built anew each level with the same
    arrays re-marshals nothing. Slots are numbered over the flattened arguments."""

    __slots__ = ("kern", "cufunc", "handle", "types", "args", "values", "starts", "grouped", "chunks", "seen",
                 "params", "arrays", "dirty", "varying", "shared_ok", "cluster_ok", "cooperative")

    def __init__(self, kern, args):
        self.kern = kern
        self.cufunc = kern._codelibrary.get_cufunc()
        self.handle = self.cufunc.handle  # a CUkernel (numba-cuda loads libraries), not a CUfunction
        self.args = list(args)
        self.types, self.values, self.starts, self.grouped = [], [], [], []
        for ty, a in zip(kern.argument_types, args):
            self.starts.append(len(self.values))
            group = isinstance(a, tuple)
            self.grouped.append(group)
            self.types.extend(ty.types if group else (ty,))
            self.values.extend(a if group else (a,))
        # Per slot, the last two device arrays passed there and their marshalled forms: the
        # frontier queues alternate between two slots. Only two, so that arrays of earlier
        # graphs are not kept alive (they hold GPU memory).
        self.seen: dict = {}
        self.chunks = [self._marshal(i, a) for i, a in enumerate(self.values)]
        self.params = None
        self.arrays: dict = {}  # chunk identities -> (chunks, parameter array), one per queue order
        self.varying: list = []  # slots whose marshalled form has changed since the first launch
        self.dirty = True
        # Dynamic shared memory the kernel is allowed. Without opting in, dynamic and static together
        # may reach 48 KB: any dynamic size opts in (once a size), not to depend on the static one.
        self.shared_ok = 0
        self.cluster_ok = 8  # blocks a cluster may have without opting in (the portable size)
        self.cooperative = bool(getattr(kern, "cooperative", False))  # it has a grid barrier

    def _recent(self, i, value):
        """The marshalled form of device array `value` if it is one of the last two passed at slot i."""
        for old, out in self.seen.get(i, ()):
            if old is value:
                return out
        return None

    def _marshal(self, i, value):
        is_array = hasattr(value, "_numba_type_")
        if is_array:
            out = self._recent(i, value)
            if out is not None:
                return out
        raw, retr = [], []
        self.kern._prepare_args(self.types[i], value, 0, retr, raw)
        if retr:  # a host array was copied for this launch: never reuse that
            raise TypeError("host arrays are not reused between launches")
        out = [_ctype(x) for x in raw]
        if is_array:
            recent = self.seen.setdefault(i, [])
            recent.insert(0, (value, out))
            del recent[2:]
        return out

    def update(self, args) -> bool:
        """Re-marshal the arguments that changed; False if the compiled overload no longer fits."""
        # Runs before every launch: the common cases (the same object, a scalar of the same type,
        # a queue seen in this slot before) skip comparing Numba types, which costs a
        # microsecond or more each.
        if len(args) != len(self.args):
            return False
        last = self.args
        for i, a in enumerate(args):
            old = last[i]
            if a is old:
                continue
            k = self.starts[i]
            if self.grouped[i]:
                if type(a) is not type(old):
                    return False  # another group (or none): let Numba type it again
                for j, x in enumerate(a):
                    if x is not self.values[k + j] and not self._update(k + j, x):
                        return False
            elif not self._update(k, a):
                return False
            last[i] = a
        return True

    def _update(self, i, a) -> bool:
        """Slot i now holds `a` (not the object it held)."""
        old = self.values[i]
        ta = type(a)
        if (ta is int or ta is bool) and ta is type(old):  # its ctypes slot takes the value in place
            if a != old:
                self.chunks[i][0].value = a
                self.values[i] = a
            return True
        out = self._recent(i, a)  # marshalled here before, so of this slot's type
        if out is None:
            if _fast_type(a) != self.types[i]:
                return False  # a type change (or an unusual argument): let Numba type it again
            if ta is int or ta is bool:
                self.chunks[i][0].value = a
                self.values[i] = a
                return True
            out = self._marshal(i, a)
        if out is not self.chunks[i]:
            self.chunks[i] = out
            if i not in self.varying:
                self._vary(i)
            self.dirty = True
        self.values[i] = a
        return True

    def _vary(self, i) -> None:
        """Slot i's marshalled form changes from now on: the kept parameter arrays are keyed by
        the identities of the varying slots' chunks, which each entry holds."""
        self.varying.append(i)
        self.arrays = {tuple([id(kept[j]) for j in self.varying]): (kept, params)
                       for kept, params in self.arrays.values()}

    def params_address(self) -> int:
        """Address of the void*[] of argument pointers (rebuilt only after a change)."""
        if self.dirty:
            # Only the varying slots' chunks tell the kept arrays apart (see _vary).
            chunks = self.chunks
            key = tuple([id(chunks[i]) for i in self.varying])
            hit = self.arrays.get(key)
            if hit is None:
                if len(self.arrays) >= 4:
                    self.arrays.clear()
                ptrs = [ctypes.addressof(c) for c in chain.from_iterable(self.chunks)]
                # The entry holds the chunks themselves, so no id in its key can be reused.
                hit = self.arrays[key] = (tuple(self.chunks), (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs))
            self.params = hit[1]
            self.dirty = False
        return ctypes.addressof(self.params)


def _ctype(x):
    """A marshalled argument as a ctypes object whose address can go into the parameter array.
    Numba leaves array fields (pointers, sizes, shape, strides: 64-bit in the kernel's parameter
    layout) as Python ints and booleans as Python bools (C bool)."""
    if isinstance(x, ctypes._SimpleCData):
        return x
    if type(x) is bool:
        return ctypes.c_bool(x)
    if isinstance(x, int):
        return ctypes.c_int64(x)
    raise TypeError(f"cannot pass {type(x).__name__} to cuLaunchKernel")


def _fast_type(value):
    """Numba's type of a kernel argument, for the cases a BFS passes: Python scalars and device
    arrays (the frontier queues swap places every level). None for anything else."""
    from numba.cuda import types

    if type(value) is bool:
        return types.boolean
    if type(value) is int:
        return types.int64
    if type(value) is float:
        return types.float64
    return getattr(value, "_numba_type_", None)


def cluster_refused(what: str, error: str) -> KnobError:
    """The error of a cluster launch this GPU refuses (too many blocks, or too much shared memory,
    for the clusters it can place): the knob that asked for it, a KnobError, so that `auto` moves on
    to another candidate."""
    return KnobError(f"this GPU cannot launch {what} ({error}): choose a smaller knob cluster (or none)")


def allow_large_clusters(driver, plan, what: str) -> None:
    """Opt the plan's kernel in to clusters of more than 8 blocks (not portable: a GPU may allow
    none); refused: cluster_refused(what, ...)."""
    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    err, = driver.cuKernelSetAttribute(attr, 1, plan.handle, plan.cufunc.device.id)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise cluster_refused(what, err.name)


def launch_config(driver, blocks: int, threads: int, shared: int, *, cooperative: bool = False, cluster: int = 0):
    """A cuLaunchKernelEx configuration of `blocks` blocks of `threads` threads and `shared` bytes of
    dynamic shared memory: cooperative (every block resident at once, for a grid barrier), or in
    clusters of `cluster` blocks."""
    cfg = driver.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = blocks, 1, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = threads, 1, 1
    cfg.sharedMemBytes = shared
    attr = driver.CUlaunchAttribute()
    if cluster:
        attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster, 1, 1
    elif cooperative:
        attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        attr.value.cooperative = 1
    else:
        raise ValueError("launch_config: a cooperative launch or a cluster size")
    cfg.attrs = [attr]
    cfg.numAttrs = 1
    return cfg


class Launcher:
    """`launcher(kernel, blocks, threads, shared_bytes, *args)` launches on the default stream.

    Call `prepare` with the same arguments first (outside any timing): it compiles what is not
    compiled yet, reporting through `on_compile` (see `compile_overload`), and marshals the
    arguments. One launcher serves every run of the process (`Launcher.shared()`): the engine
    reuses a graph's device buffers between runs, so a second run re-marshals only its scalars.
    """

    _shared: "Launcher | None" = None

    def __init__(self):
        from cuda.bindings import driver

        self._plans: dict = {}
        self._driver = driver
        self._launch = driver.cuLaunchKernel
        self._ok = driver.CUresult.CUDA_SUCCESS

    @classmethod
    def shared(cls) -> "Launcher":
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def prepare(self, kernel, blocks, threads, shared, *args,
                on_compile: Callable[..., None] | None = None) -> None:
        plan = self._plans.get(kernel)
        if plan is not None and plan.update(args):
            return
        argtypes = tuple(kernel.typeof_pyval(a) for a in args)
        if argtypes not in kernel.overloads:
            compile_overload(kernel, argtypes, on_compile)
        self._plans[kernel] = _Plan(kernel.overloads[argtypes], args)

    def _plan(self, kernel, blocks, threads, shared, args) -> _Plan:
        """The kernel's plan with these arguments marshalled and `shared` bytes allowed."""
        plan = self._plans.get(kernel)
        if plan is None or not plan.update(args):
            self.prepare(kernel, blocks, threads, shared, *args)
            plan = self._plans[kernel]
        if shared > plan.shared_ok:
            self._set_attribute(plan, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", shared,
                                f"allowing {kernel.py_func.__name__} {shared:,} bytes of shared memory")
            plan.shared_ok = shared
        return plan

    def _set_attribute(self, plan, name: str, value: int, what: str) -> None:
        attr = getattr(self._driver.CUfunction_attribute, name)
        self._check(self._driver.cuKernelSetAttribute(attr, value, plan.handle, plan.cufunc.device.id), what)

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        plan = self._plan(kernel, blocks, threads, shared, args)
        if plan.cooperative:  # cuLaunchKernel cannot: the grid barrier would fail or hang
            raise RuntimeError(f"{kernel.py_func.__name__} has a grid barrier (cuda.cg.this_grid().sync()): "
                               "launch it with go.cooperative(...)")
        err, = self._launch(plan.handle, blocks, 1, 1, threads, 1, 1, shared, 0, plan.params_address(), 0)
        if err != self._ok:
            raise RuntimeError(f"launching {kernel.py_func.__name__} ({blocks} blocks of {threads} threads, "
                               f"{shared} B shared memory) failed: {err.name}")

    def cluster(self, kernel, cluster_size, blocks, threads, shared, *args) -> None:
        """`blocks` blocks in clusters of `cluster_size` (thread-block clusters, compute capability
        9.0 and later; kernels.cluster): one cuLaunchKernelEx with a cluster dimension."""
        drv = self._driver
        plan = self._plan(kernel, blocks, threads, shared, args)
        name = kernel.py_func.__name__
        what = f"{name} in clusters of {cluster_size} blocks of {threads} threads, {shared:,} B of shared memory each"
        if cluster_size > plan.cluster_ok:
            allow_large_clusters(drv, plan, what)
            plan.cluster_ok = cluster_size
        cfg = launch_config(drv, blocks, threads, shared, cluster=cluster_size)
        err, = drv.cuLaunchKernelEx(cfg, plan.handle, plan.params_address(), 0)
        if err != self._ok:
            raise (cluster_refused(what, err.name) if "CLUSTER" in err.name else
                   RuntimeError(f"launching {what} failed: {err.name}"))

    def cooperative(self, kernel, blocks, threads, shared, *args) -> None:
        """A kernel with a grid barrier (cuda.cg.this_grid().sync()): one cuLaunchKernelEx with the
        cooperative attribute, so that every block is resident at once. `blocks` must not exceed the
        overload's max_cooperative_grid_blocks(threads, shared): the driver refuses larger grids."""
        drv = self._driver
        plan = self._plan(kernel, blocks, threads, shared, args)
        cfg = launch_config(drv, blocks, threads, shared, cooperative=True)
        err, = drv.cuLaunchKernelEx(cfg, plan.handle, plan.params_address(), 0)
        if err != self._ok:
            raise RuntimeError(f"launching {kernel.py_func.__name__} cooperatively ({blocks} blocks of {threads} "
                               f"threads, {shared} B shared memory) failed: {err.name}")

    def preparing(self, on_compile: Callable[..., None] | None = None) -> "_Preparing":
        """A launcher-shaped object that only prepares: for the untimed first pass."""
        return _Preparing(self, on_compile)

    # A level's stream operations, straight to the driver on the default stream: Numba's wrappers
    # cost 10-20 µs each on an H100 and a multi-block level makes five of them.
    def zero(self, arr) -> None:
        """arr[:] = 0 with one memset (no kernel launch)."""
        self._check(self._driver.cuMemsetD8Async(arr.device_ctypes_pointer.value, 0, arr.nbytes, 0), "memset")

    def record(self, event) -> None:
        self._check(self._driver.cuEventRecord(event.handle, 0), "recording an event")

    def read(self, dev, host) -> None:
        """host[:] = dev (pinned, same size), once everything before it on the stream has run."""
        self._check(self._driver.cuMemcpyDtoHAsync(host.ctypes.data, dev.device_ctypes_pointer.value,
                                                   host.nbytes, 0), "copying from the GPU")
        self._check(self._driver.cuStreamSynchronize(0), "waiting for the GPU")

    def _check(self, result, what: str) -> None:
        if result[0] != self._ok:
            raise RuntimeError(f"{what} failed: {result[0].name}")


class _Preparing:
    def __init__(self, launcher: Launcher, on_compile):
        self._launcher = launcher
        self._on_compile = on_compile

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        # Every time, not only for a kernel without a plan: a kernel's arguments may change type
        # between runs (a shortest-path run's int64 distances, then another's float64), and the
        # variant must be compiled here, not in the timed launch. A plan that still fits costs a
        # re-marshal of what changed, which the timed launch then skips.
        self._launcher.prepare(kernel, blocks, threads, shared, *args, on_compile=self._on_compile)

    def cluster(self, kernel, cluster_size, blocks, threads, shared, *args) -> None:
        self(kernel, blocks, threads, shared, *args)

    def cooperative(self, kernel, blocks, threads, shared, *args) -> None:
        self(kernel, blocks, threads, shared, *args)

    def zero(self, arr) -> None:
        pass
