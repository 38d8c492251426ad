"""Layout of the per-level counters array shared by every kernel, and small utility kernels.

Each level the host reads back only this small int64 array: the next frontier's size and the
instrumentation counts. Kernels add to it with atomics; the engine names the slots.
"""
from numba import cuda

NEXT_SIZE = 0  # entries written to the next frontier (after any duplicate filter)
EDGES = 1  # adjacency entries examined
DUP_GENERATED = 2  # entries that repeat a vertex, counted before the filter (ground truth)
DUP_DETECTED = 3  # duplicates removed by the filter
DUP_CONFLICTS = 4  # hash collisions of different vertices, kept conservatively
HEAVY = 5  # frontier vertices handled by the heavy-vertex path
DISCOVERED = 6  # successful claims (vertices reached; with claim="race" duplicates included)
UNDETECTED = 7  # duplicates still in the next frontier after the filter
EXT_ROUNDS = 8  # edge-discover rounds that needed no search (EXT)
COALESCED = 9  # warp flushes written with induced coalescence
OVERFLOW = 10  # > 0: a write past the next frontier's capacity was refused (the host raises)
HEAVY_CTR = 11  # heavy-vertex list: count << 40 | total degree
NUM_COUNTERS = 12


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
