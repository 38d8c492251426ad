"""Blocked Floyd-Warshall (the chapter's §4, Fig. 8; Venkataraman et al.'s blocking, Katz & Kider's
shared-memory tiles, Lund et al.'s register blocking): the n x n distance matrix (float64, padded
to a multiple of the tile size T) in T x T tiles; round k runs three phases:

  1. the diagonal tile (k, k), on its own (one block);
  2. the tiles of row k and column k, each against the diagonal tile (2 (nb - 1) blocks);
  3. every other tile (i, j) against (i, k) and (k, j), which phase 2 finished (nb - 1)^2 blocks.

A block is 256 threads, a 16 x 16 square (thread t is row t // 16, column t % 16: the engine's
launcher launches 1-D grids of 1-D blocks); each computes R x R elements (R = T / 16), its R rows
and columns strided by 16 so that a warp's loads of a tile row are consecutive. The tiles a phase reads live
in shared memory (dynamic: two 64 x 64 float64 tiles are 64 KB, above the 48 KB a block gets
without opting in). Phases 1 and 2 update a tile that their own next step reads (a barrier per
t); phase 3's inputs are final for the round, so its t loop runs without barriers, from
registers and shared memory.

The kernels are built per tile size (`kernels(T)`), so their loops have constant trip counts
and the R x R accumulators stay in registers.
"""
import functools
import math

from numba import cuda, float64

from .args import I64, V32, V64

VF64 = float64[::1]

BLOCK_SIDE = 16  # threads per side of a block
BLOCK_THREADS = BLOCK_SIDE * BLOCK_SIDE
TILES = (16, 32, 64)


def shared_bytes(tile: int) -> int:
    """Dynamic shared memory of a phase-2 or phase-3 block: two T x T float64 tiles."""
    return 2 * tile * tile * 8


@functools.cache
def kernels(tile: int):
    """(phase1, phase2, phase3) for tiles of T = `tile` (16, 32 or 64). Each takes (D: float64[:, ::1],
    k: the round, nb: tiles a side) and runs in blocks of 16 x 16 threads with shared_bytes(T) of
    dynamic shared memory."""
    if tile not in TILES:
        raise ValueError(f"tile size {tile} is not one of {TILES}")
    T = tile
    R = T // BLOCK_SIDE
    S = BLOCK_SIDE

    @cuda.jit(device=True, inline="always")
    def thread_yx():
        return cuda.threadIdx.x // S, cuda.threadIdx.x % S

    @cuda.jit(device=True, inline="always")
    def load(sh, base, D, row0, col0):
        ty, tx = thread_yx()
        for r in range(R):
            for c in range(R):
                sh[base + (ty + S * r) * T + tx + S * c] = D[row0 + ty + S * r, col0 + tx + S * c]

    @cuda.jit(device=True, inline="always")
    def store(sh, base, D, row0, col0):
        ty, tx = thread_yx()
        for r in range(R):
            for c in range(R):
                D[row0 + ty + S * r, col0 + tx + S * c] = sh[base + (ty + S * r) * T + tx + S * c]

    @cuda.jit(device=True, inline="always")
    def relax_in_place(sh, own, rows, cols):
        """own[i][j] = min(own[i][j], rows[i][t] + cols[t][j]) for t = 0..T-1, a barrier a step: own
        is one of rows, cols (phases 1 and 2)."""
        ty, tx = thread_yx()
        for t in range(T):
            for r in range(R):
                i = ty + S * r
                a = sh[rows + i * T + t]
                for c in range(R):
                    j = tx + S * c
                    x = a + sh[cols + t * T + j]
                    if x < sh[own + i * T + j]:
                        sh[own + i * T + j] = x
            cuda.syncthreads()

    @cuda.jit
    def fw_phase1(D: float64[:, ::1], k: I64, nb: I64):
        sh = cuda.shared.array(0, float64)
        base = k * T
        load(sh, 0, D, base, base)
        cuda.syncthreads()
        relax_in_place(sh, 0, 0, 0)
        store(sh, 0, D, base, base)

    @cuda.jit
    def fw_phase2(D: float64[:, ::1], k: I64, nb: I64):
        # block b < nb - 1: tile (k, b) of the row of k; the next nb - 1 blocks: the column's (the
        # diagonal tile skipped)
        sh = cuda.shared.array(0, float64)
        in_row = cuda.blockIdx.x < nb - 1
        other = cuda.blockIdx.x if in_row else cuda.blockIdx.x - (nb - 1)
        if other >= k:
            other += 1
        pivot, own = 0, T * T
        load(sh, pivot, D, k * T, k * T)
        if in_row:  # tile (k, other): own[i][j] against pivot[i][t] + own[t][j]
            load(sh, own, D, k * T, other * T)
            cuda.syncthreads()
            relax_in_place(sh, own, pivot, own)
            store(sh, own, D, k * T, other * T)
        else:  # tile (other, k): own[i][t] + pivot[t][j]
            load(sh, own, D, other * T, k * T)
            cuda.syncthreads()
            relax_in_place(sh, own, own, pivot)
            store(sh, own, D, other * T, k * T)

    @cuda.jit
    def fw_phase3(D: float64[:, ::1], k: I64, nb: I64):
        # block b: tile (b // (nb - 1), b % (nb - 1)), the row and column of k skipped
        sh = cuda.shared.array(0, float64)
        i_t = cuda.blockIdx.x // (nb - 1)
        j_t = cuda.blockIdx.x % (nb - 1)
        if i_t >= k:
            i_t += 1
        if j_t >= k:
            j_t += 1
        col, row = 0, T * T  # col: tile (i, k), row: tile (k, j)
        load(sh, col, D, i_t * T, k * T)
        load(sh, row, D, k * T, j_t * T)
        cuda.syncthreads()
        ty, tx = thread_yx()
        acc = cuda.local.array((R, R), float64)
        for r in range(R):
            for c in range(R):
                acc[r, c] = D[i_t * T + ty + S * r, j_t * T + tx + S * c]
        a = cuda.local.array(R, float64)
        b = cuda.local.array(R, float64)
        for t in range(T):
            for r in range(R):
                a[r] = sh[col + (ty + S * r) * T + t]
            for c in range(R):
                b[c] = sh[row + t * T + tx + S * c]
            for r in range(R):
                for c in range(R):
                    acc[r, c] = min(acc[r, c], a[r] + b[c])
        for r in range(R):
            for c in range(R):
                D[i_t * T + ty + S * r, j_t * T + tx + S * c] = acc[r, c]

    return fw_phase1, fw_phase2, fw_phase3


@cuda.jit(cache=True)
def fw_fill(D: float64[:, ::1]):
    """D = infinity off the diagonal, 0 on it (grid-stride over the elements)."""
    n = D.shape[0]
    x = cuda.grid(1)
    while x < n * n:
        i = x // n
        j = x - i * n
        D[i, j] = 0.0 if i == j else math.inf
        x += cuda.gridsize(1)


@cuda.jit(cache=True)
def fw_arcs(offsets: V64, indices: V32, weights: VF64, D: float64[:, ::1]):
    """D[u, v] = min(D[u, v], w) for every arc: parallel arcs keep the least weight, a negative self
    loop lowers the diagonal (a thread a vertex, grid-stride)."""
    u = cuda.grid(1)
    while u < offsets.shape[0] - 1:
        for e in range(offsets[u], offsets[u + 1]):
            cuda.atomic.min(D, (u, indices[e]), float64(weights[e]))
        u += cuda.gridsize(1)
