"""Small utility kernels every technique's set-up uses (fills, the source). Each technique keeps
its own counter slots in its own module (kernels/topdown.py, kernels/bfs4k/layout.py)."""
from numba import cuda


@cuda.jit(cache=True)
def fill_int32(arr, value):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < arr.shape[0]:
        arr[i] = value
        i += stride


@cuda.jit(cache=True)
def zero_int64(arr):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < arr.shape[0]:
        arr[i] = 0
        i += stride


@cuda.jit(cache=True)
def set_source(dist, parent, frontier, stamp, source):
    if cuda.grid(1) == 0:
        dist[source] = 0
        parent[source] = source
        frontier[0] = source
        stamp[source] = 0
