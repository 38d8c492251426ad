"""The launcher's argument reuse (explorer.launcher), with a stand-in for a compiled kernel: on a
GPU every BFS test also runs through it; here its bookkeeping is checked without one."""
from types import SimpleNamespace

import numpy as np
import pytest
from numba import cuda
from numba.cuda import types

from explorer.engine import launcher


class FakeArray:
    """Stands in for a device array: only its Numba type matters to the launcher."""

    def __init__(self, dtype=types.int32, ndim=1):
        self._numba_type_ = types.Array(dtype, ndim, "C")


class FakeKernel:
    """Records which arguments were marshalled."""

    def __init__(self, argument_types):
        self.argument_types = argument_types
        self.marshalled = []

        class _Lib:
            @staticmethod
            def get_cufunc():
                return type("F", (), {"handle": "handle"})()

        self._codelibrary = _Lib()

    def _prepare_args(self, ty, val, stream, retr, out):
        self.marshalled.append(val)
        out.append(7)  # what Numba leaves for an array field: a Python int


def test_fast_type_matches_numba_for_what_a_bfs_passes():
    assert launcher._fast_type(3) == types.int64
    assert launcher._fast_type(True) == types.boolean
    assert launcher._fast_type(2.5) == types.float64
    assert launcher._fast_type(FakeArray()) == types.Array(types.int32, 1, "C")
    assert launcher._fast_type(np.int32(3)) is None  # unusual: Numba types it again


def test_plan_remarshals_only_what_changed():
    qa, qb = FakeArray(), FakeArray()
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2 + (types.int64, types.boolean))
    plan = launcher._Plan(kern, (qa, qb, 5, True))
    assert kern.marshalled == [qa, qb, 5, True]
    kern.marshalled.clear()
    assert plan.update((qa, qb, 5, True)) and kern.marshalled == []  # nothing changed
    # the queues swap (marshalled once per position) and the level moves (its slot takes the value)
    assert plan.update((qb, qa, 6, True)) and kern.marshalled == [qb, qa]
    assert plan.args == [qb, qa, 6, True] and plan.chunks[2][0].value == 6
    kern.marshalled.clear()
    assert plan.update((qa, qb, 6, True)) and kern.marshalled == []  # both orders seen; an equal int
    assert plan.update((qb, qa, 6, True)) and kern.marshalled == []
    assert plan.args == [qb, qa, 6, True]
    qc = FakeArray()
    assert plan.update((qc, qb, 8, False)) and kern.marshalled == [qc]  # a new array is
    assert plan.chunks[2][0].value == 8 and not plan.chunks[3][0].value
    # Only the last two arrays of a position stay marshalled (and alive): qb, seen there before
    # qa and qc, has to be marshalled again.
    assert [a for a, _ in plan.seen[0]] == [qc, qb]
    kern.marshalled.clear()
    assert plan.update((qa, qb, 8, False)) and kern.marshalled == [qa]


def test_params_array_kept_per_order_of_the_queues():
    qa, qb = FakeArray(), FakeArray()
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2)
    plan = launcher._Plan(kern, (qa, qb))
    first = plan.params_address()
    plan.update((qb, qa))
    second = plan.params_address()
    assert second != first
    plan.update((qa, qb))
    assert plan.params_address() == first  # the swap back reuses the first array, not a new one


def test_params_array_points_at_the_marshalled_arguments():
    import ctypes

    class CtypesKernel(FakeKernel):
        def _prepare_args(self, ty, val, stream, retr, out):
            out.append(ctypes.c_int64(val))

    kern = CtypesKernel((types.int64, types.int64))
    plan = launcher._Plan(kern, (3, 4))
    addr = plan.params_address()
    ptrs = (ctypes.c_void_p * 2).from_address(addr)
    assert [ctypes.c_int64.from_address(p).value for p in ptrs] == [3, 4]
    assert isinstance(launcher._ctype(True), ctypes.c_bool)  # Numba's bools and array fields
    assert launcher._ctype(2**40).value == 2**40
    with pytest.raises(TypeError):
        launcher._ctype("x")
    assert plan.params_address() == addr  # unchanged arguments: the same array
    plan.update((3, 9))
    ptrs = (ctypes.c_void_p * 2).from_address(plan.params_address())
    assert [ctypes.c_int64.from_address(p).value for p in ptrs] == [3, 9]


def test_params_array_always_points_at_the_current_arguments():
    """Whatever order the queues come in and whichever scalars change, the parameter array the
    launch gets points at exactly the current arguments' marshalled forms (kept arrays are found
    by the chunks of the positions that ever changed)."""
    import ctypes

    class ScalarsKernel(FakeKernel):
        def _prepare_args(self, ty, val, stream, retr, out):  # as Numba marshals these types
            out.append(7 if hasattr(val, "_numba_type_") else ctypes.c_double(val) if type(val) is float else val)

    rng = np.random.default_rng(3)
    queues = [FakeArray() for _ in range(3)]
    kern = ScalarsKernel((types.Array(types.int32, 1, "C"),) * 3 + (types.int64, types.boolean, types.float64))
    plan = launcher._Plan(kern, (queues[0], queues[1], queues[2], 0, False, 0.5))
    for step in range(200):
        order = rng.permutation(3) if step > 20 else [step % 2, 1 - step % 2, 2]
        args = (*[queues[j] for j in order], int(rng.integers(3)), bool(rng.integers(2)),
                float(rng.integers(2)) / 4)
        assert plan.update(args)
        flat = [c for chunk in plan.chunks for c in chunk]
        ptrs = (ctypes.c_void_p * len(flat)).from_address(plan.params_address())
        assert list(ptrs) == [ctypes.addressof(c) for c in flat], step
        assert [plan.chunks[i] is plan._recent(i, a) for i, a in enumerate(args[:3])] == [True] * 3
        assert [plan.chunks[i][0].value for i in (3, 4, 5)] == list(args[3:])


def test_a_group_is_marshalled_field_by_field():
    """A group (kernels.args) is a namedtuple built anew each launch: only its fields that changed
    are marshalled again, and another group class means another compiled overload."""
    from collections import namedtuple

    Queues = namedtuple("Queues", "qa qb size")
    Other = namedtuple("Other", "qa qb size")
    qa, qb, graph = FakeArray(), FakeArray(), FakeArray(types.int64)
    v32 = types.Array(types.int32, 1, "C")
    group = types.BaseTuple.from_types([v32, v32, types.int64], Queues)
    kern = FakeKernel((types.Array(types.int64, 1, "C"), group))
    plan = launcher._Plan(kern, (graph, Queues(qa, qb, 5)))
    assert kern.marshalled == [graph, qa, qb, 5] and len(plan.chunks) == 4
    kern.marshalled.clear()
    assert plan.update((graph, Queues(qa, qb, 5))) and kern.marshalled == []  # equal fields: nothing
    assert plan.update((graph, Queues(qb, qa, 6))) and kern.marshalled == [qb, qa]  # the swap, once
    assert plan.chunks[3][0].value == 6 and plan.values[1:] == [qb, qa, 6]
    kern.marshalled.clear()
    assert plan.update((graph, Queues(qa, qb, 6))) and kern.marshalled == []
    import ctypes

    flat = [c for chunk in plan.chunks for c in chunk]
    ptrs = (ctypes.c_void_p * len(flat)).from_address(plan.params_address())
    assert list(ptrs) == [ctypes.addressof(c) for c in flat]
    assert not plan.update((graph, Other(qa, qb, 6)))  # another group class
    assert not plan.update((graph, Queues(qa, FakeArray(types.int64), 6)))  # a field of another type


@pytest.mark.parametrize("args", [
    (FakeArray(types.int64), FakeArray(), 5, True),  # another dtype: another compiled overload
    (FakeArray(), FakeArray(), 5, 1),  # int where the kernel was compiled for a bool
    (FakeArray(), FakeArray(), 5),  # another arity
])
def test_plan_refuses_arguments_of_another_type(args):
    kern = FakeKernel((types.Array(types.int32, 1, "C"),) * 2 + (types.int64, types.boolean))
    plan = launcher._Plan(kern, (FakeArray(), FakeArray(), 5, True))
    assert not plan.update(args)


# ---- cooperative launches (a kernel with a grid barrier)


class FakeDispatcher:
    """Stands in for a @cuda.jit dispatcher: the launcher keys plans by it and names it in errors."""

    def __init__(self, name="k_grid"):
        self.py_func = SimpleNamespace(__name__=name)


class RecordingDriver:
    """The driver's own types (cuda.bindings), with a cuLaunchKernelEx that records what it was given."""

    def __init__(self, result="CUDA_SUCCESS"):
        from cuda.bindings import driver

        self._driver = driver
        self._result = getattr(driver.CUresult, result)
        self.launches = []
        self.configs = []
        self.attributes = []

    def __getattr__(self, name):
        return getattr(self._driver, name)

    def cuLaunchKernelEx(self, cfg, handle, params, extra):
        attrs = [(a.id, a.value.cooperative) for a in cfg.attrs[:cfg.numAttrs]]
        self.launches.append((cfg.gridDimX, cfg.blockDimX, cfg.sharedMemBytes, attrs, handle, params))
        self.configs.append(cfg)
        return (self._result,)

    def cuKernelSetAttribute(self, attr, value, handle, device):
        self.attributes.append((attr, value))
        return (self._driver.CUresult.CUDA_SUCCESS,)


def _cooperative_launcher(result="CUDA_SUCCESS"):
    lau = launcher.Launcher()
    lau._driver = RecordingDriver(result)
    lau._launch = lambda *a: pytest.fail("a kernel with a grid barrier went through cuLaunchKernel")
    kern = FakeKernel((types.int64, types.boolean))
    kern.cooperative = True  # what Numba's overload says of a kernel that calls this_grid().sync()
    disp = FakeDispatcher()
    plan = lau._plans[disp] = launcher._Plan(kern, (5, True))
    plan.cufunc.device = SimpleNamespace(id=0)
    return lau, disp


def test_cooperative_launch_sets_the_cooperative_attribute():
    from cuda.bindings import driver

    lau, disp = _cooperative_launcher()
    lau.cooperative(disp, 132, 512, 16384, 6, True)
    (blocks, threads, shared, attrs, handle, params), = lau._driver.launches
    assert (blocks, threads, shared, handle) == (132, 512, 16384, "handle")
    assert attrs == [(driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, 1)]
    # Dynamic shared memory is opted in to as for any launch (none needed below 48 KB, but any size opts in).
    assert lau._driver.attributes == [(driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       16384)]
    assert params == lau._plans[disp].params_address() and lau._plans[disp].args == [6, True]


def test_cluster_launch_sets_the_cluster_dimension_and_opts_in_beyond_8_blocks():
    from cuda.bindings import driver

    lau, disp = _cooperative_launcher()
    lau.cluster(disp, 16, 32, 256, 0, 6, True)
    (cfg,) = lau._driver.configs
    (attr,) = cfg.attrs[:cfg.numAttrs]
    assert (cfg.gridDimX, cfg.blockDimX, cfg.sharedMemBytes) == (32, 256, 0)
    assert attr.id == driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert (attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z) == (16, 1, 1)
    assert lau._driver.attributes == [
        (driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)]


def test_grid_barrier_kernel_through_a_plain_launch_is_refused():
    lau, disp = _cooperative_launcher()
    with pytest.raises(RuntimeError, match=r"k_grid has a grid barrier .*launch it with go.cooperative"):
        lau(disp, 4, 32, 0, 5, True)


def test_cooperative_launch_too_large_names_the_error():
    lau, disp = _cooperative_launcher("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE")
    with pytest.raises(RuntimeError, match=r"launching k_grid cooperatively \(9999 blocks of 512 threads, 0 B "
                                           r"shared memory\) failed: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"):
        lau.cooperative(disp, 9999, 512, 0, 5, True)


def test_preparing_a_cooperative_launch_launches_nothing():
    lau, disp = _cooperative_launcher()
    lau.preparing().cooperative(disp, 4, 32, 0, 5, True)  # compiled already (a plan): nothing to do
    assert lau._driver.launches == []


@cuda.jit
def k_two_phase(out, seen):
    i = cuda.grid(1)
    out[i] = i + 1
    cuda.cg.this_grid().sync()
    seen[i] = out[(i + cuda.blockDim.x) % cuda.gridsize(1)]  # written by the next block before the barrier


def test_plain_launcher_runs_a_grid_barrier_across_blocks():
    """Numba's own launch: cooperative by itself on a GPU, blocks side by side under the simulator."""
    out = np.zeros(128, np.int64)
    seen = np.zeros(128, np.int64)
    launcher.PlainLauncher().cooperative(k_two_phase, 4, 32, 0, out, seen)
    np.testing.assert_array_equal(seen, (np.arange(128) + 32) % 128 + 1)


# ---- saying whether a kernel was compiled or loaded from the disk cache


class CachingDispatcher(FakeDispatcher):
    """A dispatcher whose compile either hits Numba's disk cache or compiles, counted in its public
    `stats` as Numba's are."""

    def __init__(self, cached: bool):
        super().__init__("k_expand")
        self.cached = cached
        self.stats = SimpleNamespace(cache_hits={}, cache_misses={})
        self.overloads = {}

    def compile(self, sig):
        counter = self.stats.cache_hits if self.cached else self.stats.cache_misses
        counter[sig] = counter.get(sig, 0) + 1
        self.overloads[sig] = "overload"


@pytest.mark.parametrize("cached, outcome", [(True, "loaded from the disk cache"), (False, "compiled")])
def test_compile_says_whether_the_disk_cache_held_the_kernel(cached, outcome):
    said = []
    disp = CachingDispatcher(cached)
    launcher.compile_overload(disp, (types.int64,), lambda name, done=None: said.append((name, done)))
    assert disp.overloads == {(types.int64,): "overload"}
    (before, none), (name, done) = said
    assert (before, none, name) == ("k_expand", None, "k_expand")
    assert done.startswith(f"{outcome} in ") and done.endswith(" s")


# ---- the argument groups (kernels.args): one declaration for the kernel, its launch, its signature


def test_a_groups_declared_type_is_what_numba_types_its_instances():
    import numba

    from kernels import args

    g = args.Graph(np.zeros(3, np.int64), np.zeros(2, np.int32))
    q = args.QueuePair(np.zeros(4, np.int32), np.zeros(4, np.int32), True, 1, 4, 0)
    assert numba.typeof(g) == args.group_type(args.Graph)
    assert numba.typeof(q) == args.group_type(args.QueuePair)
    assert numba.typeof(args.Rows(np.zeros(6, np.int64), 1)) == args.group_type(args.Rows)  # all one type


def test_signature_reads_a_kernels_annotations():
    from kernels import args

    def kernel(graph: args.Graph, counters: args.V64, level: args.I64):
        pass

    assert args.signature(kernel) == (args.group_type(args.Graph), args.V64, args.I64)

    def bare(graph, level: args.I64):
        pass

    with pytest.raises(TypeError, match="parameter 'graph' of bare is annotated with"):
        args.signature(bare)


def test_a_gpu_that_refuses_clusters_of_more_than_8_blocks_names_the_knob():
    """The opt-in the launcher and bitmap-direction's set-up share: the driver's refusal becomes a
    KnobError naming knob cluster (so that auto moves on to another candidate)."""
    from explorer.knobs import KnobError

    calls = []
    driver = SimpleNamespace(
        CUfunction_attribute=SimpleNamespace(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED="big-cluster"),
        CUresult=SimpleNamespace(CUDA_SUCCESS="ok"),
        cuKernelSetAttribute=lambda attr, value, handle, device: calls.append((attr, value, handle, device)) or (
            SimpleNamespace(name="CUDA_ERROR_NOT_SUPPORTED"),))
    plan = SimpleNamespace(handle="kernel", cufunc=SimpleNamespace(device=SimpleNamespace(id=3)))
    with pytest.raises(KnobError, match=r"cannot launch the search in clusters of 16 blocks "
                                        r"\(CUDA_ERROR_NOT_SUPPORTED\): choose a smaller knob cluster"):
        launcher.allow_large_clusters(driver, plan, "the search in clusters of 16 blocks")
    assert calls == [("big-cluster", 1, "kernel", 3)]


def test_preparing_compiles_a_kernel_whose_arguments_changed_type(monkeypatch):
    """A shortest-path kernel takes int64 distances for whole-number weights and float64 for reals:
    the untimed pass compiles the second variant too, though the kernel has a plan (from the first),
    rather than leaving it to the timed launch."""
    compiled = []

    def compile_overload(kernel, argtypes, on_compile):
        compiled.append(argtypes)
        kernel.overloads[argtypes] = FakeKernel(argtypes)

    monkeypatch.setattr(launcher, "compile_overload", compile_overload)
    disp = FakeDispatcher("k_relax")
    disp.overloads = {}
    disp.typeof_pyval = lambda a: getattr(a, "_numba_type_", types.int64)
    prep = launcher.Launcher().preparing()
    ints, reals = FakeArray(types.int64), FakeArray(types.float64)
    prep(disp, 1, 32, 0, ints, 5)
    prep(disp, 1, 32, 0, ints, 6)  # the same types: nothing to compile
    prep(disp, 1, 32, 0, reals, 5)
    assert compiled == [(ints._numba_type_, types.int64), (reals._numba_type_, types.int64)]
