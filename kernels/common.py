"""What the kernel families share besides their operators: the set-up kernels every technique
uses (fills, the source), results of a renumbered graph mapped back to its own ids, the sum of an
array's rows, the compile options of kernels that run in blocks of 1024 threads, the two-row
counters a level clears for the next, and the co-resident blocks of a cooperative launch.
Each technique keeps its own counter slots in its own module (kernels/topdown.py,
kernels/bfs4k/layout.py)."""
from numba import cuda
from numba.core import config

from .args import I64, V32, V64

#: Compile options of a kernel that may run in blocks of 1024 threads: 1024 threads x 64 registers
#: fill an SM's register file (without the cap no such block would fit); the simulator has none.
BLOCK_1024 = {} if config.ENABLE_CUDASIM else {"max_registers": 64}


@cuda.jit(device=True)
def clear_next_row(counters, row, width):
    """Thread 0 clears the other row of `width` counters for the next level: nobody reads or
    writes it during this launch (the host read it back before the launch)."""
    if cuda.grid(1) == 0:
        other = (1 - row) * width
        for k in range(width):
            counters[other + k] = 0


def coresident_blocks(kernel, args, threads, shared):
    """Blocks of `kernel` the GPU holds at once with these block and shared memory sizes, which a
    cooperative launch may not exceed: Numba's max_cooperative_grid_blocks of the overload compiled
    for `args` (the simulator's cap, kernels.cudasim.config.grid_threads, under it). The caller has
    compiled the kernel for `args`: a kernel with one build takes it without typing the arguments
    again (about 1 ms a run for the named tuples of a grid search's arrays)."""
    typeof = getattr(kernel, "typeof_pyval", None)  # the simulator keeps no overloads
    if typeof is None:
        return int(kernel.overloads[None].max_cooperative_grid_blocks(threads, shared))
    key = next(iter(kernel.overloads)) if len(kernel.overloads) == 1 else tuple(typeof(a) for a in args)
    overload = kernel.overloads[key]
    at = (overload, threads, shared, cuda.get_current_device().id)
    fits = _FITS.get(at)
    if fits is None:  # an occupancy query each run costs tens of µs: the answer is the build's, a device's
        fits = _FITS[at] = int(overload.max_cooperative_grid_blocks(threads, shared))
    return fits


_FITS: dict = {}  # (overload, threads, shared bytes, device) -> coresident_blocks


@cuda.jit(cache=True)
def fill_int32(arr: V32, value: I64):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < arr.shape[0]:
        arr[i] = value
        i += stride


@cuda.jit(cache=True)
def zero_int64(arr: V64):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < arr.shape[0]:
        arr[i] = 0
        i += stride


@cuda.jit(cache=True)
def set_source(dist: V32, parent: V32, frontier: V32, stamp: V32, source: I64):
    if cuda.grid(1) == 0:
        dist[source] = 0
        parent[source] = source
        frontier[0] = source
        stamp[source] = 0


@cuda.jit(cache=True)
def to_graph_ids(dist: V32, parent: V32, rank: V32, perm: V32, out_dist: V32, out_parent: V32):
    """Distances and parents of a search in a renumbered graph (explorer.graphs.prepare: vertex v is
    rank[v] there, new number u is perm[u]) -> by the graph's own vertices, parents too: where the
    search left them, so a check on the device and the copy back need no pass on the host."""
    v = cuda.grid(1)
    stride = cuda.gridsize(1)
    while v < rank.shape[0]:
        u = rank[v]
        out_dist[v] = dist[u]
        p = parent[u]
        out_parent[v] = perm[p] if p >= 0 else -1
        v += stride


@cuda.jit(cache=True)
def sum_rows(rows, out):
    """out[j] = rows[0, j] + rows[1, j] + ..., added in row order as numpy's sum over axis 0 adds
    them: an array of a row per block summed where it is, so a run copies back one row, not one a
    block (1,056 rows of 262,144 doubles are 2.2 GB)."""
    j = cuda.grid(1)
    stride = cuda.gridsize(1)
    while j < out.shape[0]:
        acc = rows[0, j]
        for r in range(1, rows.shape[0]):
            acc += rows[r, j]
        out[j] = acc
        j += stride
