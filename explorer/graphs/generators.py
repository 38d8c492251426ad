"""Seeded generators of the papers' graph families, and what each will build before it builds.

Each generator is registered in GENERATORS with its parameters' defaults and a size function:
the size function checks the parameters and says how many vertices and (at most) how many arcs
the graph will have, so `generator_size` answers without building, and `generate` refuses a
graph over `max_arcs=` or over the memory this machine has before allocating anything.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
from typing import Callable, NamedTuple

import numba
import numpy as np
from numba import prange

from . import cache as _cache
from ._splitmix import GOLDEN, mix64
from .build import BUILD_STEPS, _bar, _NoBar, bar_for, build
from .csr import CSRGraph, GraphError
from .memory import check_memory
from .weights import WEIGHT_PARAMS, check_weight_params, with_weights

__all__ = ["GENERATORS", "GeneratorSpec", "generate", "generator_size", "kronecker",
           "uniform_random", "grid2d", "grid3d", "luo_scale_free", "watts_strogatz"]


class GeneratorSpec(NamedTuple):
    """GENERATORS entry: function(**params), {param: default}, one-line description."""

    function: Callable[..., CSRGraph]
    params: dict
    description: str


#: kind -> GeneratorSpec(function, {param: default}, description); a notebook builds widgets
#: from the defaults' types. Every function also takes cache=, progress= and max_arcs= (not
#: listed), and the weight parameters (listed: weights.WEIGHT_PARAMS): weights='uniform' or
#: 'integer' draws seeded weights in weight_low..weight_high for shortest paths.
GENERATORS: dict[str, GeneratorSpec] = {}


class _Plan(NamedTuple):
    signature: inspect.Signature
    size: Callable[..., tuple[int, int]]  # checks the parameters; (vertices, at most arcs)
    bytes_per_arc: int  # peak memory of generating and building, per arc (vertices: 16 bytes)


_PLANS: dict[str, _Plan] = {}


def _params(kind: str, args: tuple, kwargs: dict) -> dict:
    """The generator's parameters with defaults filled in, as plain Python values."""
    plan = _PLANS[kind]
    try:
        bound = plan.signature.bind(*args, **kwargs)
    except TypeError as e:
        raise GraphError(f"generator {kind!r}: {e}; parameters: {GENERATORS[kind].params}") \
            from None
    bound.apply_defaults()
    return {k: (v.item() if isinstance(v, np.generic) else v)
            for k, v in bound.arguments.items() if k != "progress"}


def _describe(p: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.items())


def _generator(kind: str, description: str, size: Callable[..., tuple[int, int]],
               bytes_per_arc: int):
    def deco(fn):
        sig = inspect.signature(fn)
        _PLANS[kind] = _Plan(sig, size, bytes_per_arc)

        @functools.wraps(fn)
        def wrapper(*args, cache: bool | None = None, progress: bool | None = None,
                    max_arcs: int | None = None, **kwargs):
            wp = {k: kwargs.pop(k, d) for k, d in WEIGHT_PARAMS.items()}
            check_weight_params(wp["weights"], wp["weight_low"], wp["weight_high"], wp["weight_seed"],
                                f"generator {kind!r}: weights")
            p = _params(kind, args, kwargs)
            n, arcs = size(**p)
            if max_arcs is not None and arcs > max_arcs:
                raise GraphError(f"generator {kind!r} ({_describe(p)}) makes up to {arcs:,} "
                                 f"arcs, over the limit of {max_arcs:,}; nothing was built")

            def make() -> CSRGraph:
                check_memory(16 * (n + 1) + bytes_per_arc * arcs,
                             f"generator {kind!r} ({_describe(p)}: {n:,} vertices, up to "
                             f"{arcs:,} arcs)")
                g = fn(**p, progress=progress)
                g.notes = {"generator": kind, "params": p, **g.notes}
                return g

            g = _cache.cached(f"gen-{kind}", {"kind": kind, "params": p}, make, cache)
            if wp["weights"] == "none":
                return g
            # Drawn after the cache: the structure is cached, its weights are a function of it.
            w = with_weights(g, wp["weights"], wp["weight_low"], wp["weight_high"], wp["weight_seed"])
            w.notes["params"] = {**p, **wp}
            return w

        wrapper.__doc__ = (fn.__doc__ or "") + (
            "\n\n    weights: 'none', 'uniform' (reals in [weight_low, weight_high)) or 'integer' (whole"
            "\n    numbers in weight_low..weight_high), drawn with weight_seed; both arcs of an edge alike."
            "\n    cache: None reads the on-disk cache and stores graphs of over 2**20 arcs,"
            "\n    True always stores, False bypasses it. progress: None shows a tqdm bar "
            "only after\n    one second, True always, False never. max_arcs: refuse (GraphError)"
            " before\n    building when generator_size's arc bound exceeds it.")
        GENERATORS[kind] = GeneratorSpec(wrapper, {**_params(kind, (), {}), **WEIGHT_PARAMS}, description)
        return wrapper

    return deco


def _spec(kind: str) -> GeneratorSpec:
    if kind not in GENERATORS:
        raise GraphError(f"unknown generator {kind!r}; available: {', '.join(GENERATORS)}")
    return GENERATORS[kind]


def generate(kind: str, **params) -> CSRGraph:
    """GENERATORS[kind].function(**params); also takes cache=, progress= and max_arcs=."""
    return _spec(kind).function(**params)


def generator_size(kind: str, **params) -> tuple[int, int]:
    """(vertices, arcs) of generate(kind, **params), without building it: the vertex count is
    exact, the arc count an upper bound (exact for the grids; the random generators drop self
    loops and merge repeats, which only the build finds). Checks the parameters like generate."""
    _spec(kind)
    params = {k: v for k, v in params.items() if k not in WEIGHT_PARAMS}
    return _PLANS[kind].size(**_params(kind, (), params))


def _check_param(cond: bool, kind: str, msg: str) -> None:
    if not cond:
        raise GraphError(f"generator {kind!r}: {msg}")


_KRON_BLOCK = 4096  # edges per parallel task; its per-edge state fits in L1


@numba.njit(cache=True)
def _scramble(x, k, mask, key):
    """A keyed bijection of k-bit ids (odd multiplies and xor-shifts, all mod 2**k), in the
    spirit of Graph500's scramble(): relabels vertices pseudo-randomly without a 2**k
    permutation table, whose random reads cost more than generating the edge."""
    s = np.uint64((k + 1) // 2)
    y = (np.uint64(x) * key[0] + key[1]) & mask
    y ^= y >> s
    y = (y * key[2] + key[3]) & mask
    y ^= y >> s
    y = (y * key[0] + key[3]) & mask
    return np.int32(y)


@numba.njit(cache=True, parallel=True)
def _kronecker_edges(scale, first, count, seed, ta, tab, tabc, key, src, dst):
    """Graph500 Kronecker edges first..first+count-1 into src/dst[0:count].

    At each of the `scale` levels a 16-bit uniform q picks the quadrant: q < A -> (0,0),
    < A+B -> (0,1), < A+B+C -> (1,0), else (1,1) (thresholds scaled by 2**16): the same joint
    law as Graph500's two draws, to 1/65536. One 64-bit draw serves four levels. Bits are
    shifted in from comparisons (row bit q >= A+B, column bit the xor of the three), never
    selected: selects became branches, and a random quadrant mispredicts half of them."""
    ndraw = (scale + 3) // 4
    mask = (np.uint64(1) << np.uint64(scale)) - np.uint64(1)
    stride = np.uint64(8) * GOLDEN
    one = np.uint64(1)
    s16 = np.uint64(16)
    low16 = np.uint64(0xFFFF)
    nblocks = (count + _KRON_BLOCK - 1) // _KRON_BLOCK
    for b in prange(nblocks):
        lo = b * _KRON_BLOCK
        cnt = min(_KRON_BLOCK, count - lo)
        u = np.zeros(cnt, np.uint64)
        v = np.zeros(cnt, np.uint64)
        for lv in range(ndraw):
            base = seed + np.uint64(lv + 1) * GOLDEN + np.uint64(first + lo) * stride
            for i in range(cnt):
                r = mix64(base + np.uint64(i) * stride)
                uu = u[i]
                vv = v[i]
                for _j in range(4):
                    q = r & low16
                    r >>= s16
                    c2 = np.uint64(q >= tab)
                    uu = (uu << one) | c2
                    vv = (vv << one) | (np.uint64(q >= ta) ^ c2 ^ np.uint64(q >= tabc))
                u[i] = uu
                v[i] = vv
        for i in range(cnt):
            src[lo + i] = _scramble(u[i] & mask, scale, mask, key)
            dst[lo + i] = _scramble(v[i] & mask, scale, mask, key)


def _seed64(seed: int, stream: int) -> np.uint64:
    h = hashlib.sha256(f"{int(seed)}:{stream}".encode()).digest()
    return np.uint64(int.from_bytes(h[:8], "little"))


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed) & (2**63 - 1), stream])


def _kronecker_size(scale, edge_factor, a, b, c, seed):
    kind = "kronecker"
    _check_param(1 <= scale <= 30, kind, f"scale must be in 1..30, got {scale}")
    _check_param(edge_factor >= 1, kind, f"edge_factor must be >= 1, got {edge_factor}")
    _check_param(min(a, b, c) >= 0 and a + b + c <= 1, kind,
                 f"need a, b, c >= 0 and a+b+c <= 1, got {a}, {b}, {c}")
    return 1 << scale, 2 * edge_factor << scale


# src and dst (int32 per generated edge, two arcs each) plus the builder's 12 bytes an arc.
@_generator("kronecker", "Graph500 Kronecker (R-MAT A=0.57 B=0.19 C=0.19): 2^scale vertices, "
                         "edge_factor * 2^scale edges, scale-free, tiny diameter",
            _kronecker_size, 16)
def kronecker(scale: int = 16, edge_factor: int = 16, a: float = 0.57, b: float = 0.19,
              c: float = 0.19, seed: int = 1, progress: bool | None = None) -> CSRGraph:
    """Graph500 Kronecker graph: N = 2^scale vertices, M = edge_factor * N generated edges, each
    end picked bit by bit with quadrant probabilities A, B, C, D = 1-A-B-C; vertex labels are
    then relabelled by a seeded pseudo-random bijection (so high-degree vertices are not
    clustered at low ids). Undirected, self loops dropped and multi-edges merged (notes count
    both), so |E| < M. Same seed, same graph, whatever the number of threads."""
    n = 1 << scale
    m = edge_factor * n
    t = lambda x: np.uint64(min(int(round(x * 2.0**16)), 2**16))  # noqa: E731
    ta, tab, tabc = t(a), t(a + b), t(a + b + c)
    key = _rng(seed, 0).integers(0, 2**62, size=4, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    src = np.empty(m, np.int32)
    dst = np.empty(m, np.int32)
    # Generate in slices so the bar moves; each slice is still one parallel kernel.
    slices = max(1, min(16, m // (1 << 21)))
    big = progress or (progress is None and m >= 1 << 22)
    bar = _bar(slices + BUILD_STEPS, f"Kronecker scale {scale}", progress) if big else _NoBar()
    try:
        bar.set_postfix_str("edges", refresh=False)
        seed64 = _seed64(seed, 1)
        for i in range(slices):
            lo = m * i // slices
            hi = m * (i + 1) // slices
            _kronecker_edges(scale, lo, hi - lo, seed64, ta, tab, tabc, key, src[lo:hi],
                             dst[lo:hi])
            bar.update(1)
        g = build(src, dst, n, directed=False, symmetrize=False, drop_self_loops=True,
                  merge_multi_edges=True, name=f"kron_s{scale}_ef{edge_factor}", bar=bar)
    finally:
        bar.close()
    g.notes["relabel"] = "keyed pseudo-random bijection of the ids (as Graph500's scramble)"
    return g


def _uniform_random_size(n, m, directed, seed):
    kind = "uniform_random"
    _check_param(n >= 1, kind, f"n must be >= 1, got {n}")
    _check_param(m >= 0, kind, f"m must be >= 0, got {m}")
    return n, m if directed else 2 * m


@_generator("uniform_random", "uniform random (GTGraph 'random'): n vertices, m edges with "
                              "uniformly random ends; low diameter, binomial degrees",
            _uniform_random_size, 20)
def uniform_random(n: int = 100_000, m: int = 800_000, directed: bool = False, seed: int = 1,
                   progress: bool | None = None) -> CSRGraph:
    """GTGraph-style random graph: m edges whose two ends are drawn uniformly from n vertices
    (Erdős–Rényi G(n, m) with replacement); self loops dropped and repeats merged (counted in
    notes), so slightly fewer than m edges remain."""
    rng = _rng(seed, 2)
    src = rng.integers(0, n, size=m, dtype=np.int32)
    dst = rng.integers(0, n, size=m, dtype=np.int32)
    with bar_for(m, f"random n={n}", progress) as bar:
        return build(src, dst, n, directed=directed, symmetrize=False, drop_self_loops=True,
                     merge_multi_edges=True, name=f"random_n{n}_m{m}", bar=bar)


def _grid2d_size(rows, cols):
    _check_param(rows >= 1 and cols >= 1, "grid2d", f"rows, cols must be >= 1, got {rows}, {cols}")
    return rows * cols, 2 * (rows * (cols - 1) + (rows - 1) * cols)


@_generator("grid2d", "2-D grid rows x cols (4-neighbour): road-like, degree <= 4, "
                      "BFS depth rows+cols-2 from a corner", _grid2d_size, 20)
def grid2d(rows: int = 300, cols: int = 300, progress: bool | None = None) -> CSRGraph:
    """rows x cols 4-neighbour grid, vertex (i, j) = i*cols + j; undirected. A stand-in for
    road networks: low degree, long BFS depth (many small frontiers)."""
    idx = np.arange(rows * cols, dtype=np.int32).reshape(rows, cols)
    src = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    dst = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    with bar_for(src.size, "2-D grid", progress) as bar:
        return build(src, dst, rows * cols, directed=False, symmetrize=False,
                     drop_self_loops=True, merge_multi_edges=True,
                     name=f"grid2d_{rows}x{cols}", bar=bar)


def _grid3d_size(nx, ny, nz, periodic):
    _check_param(min(nx, ny, nz) >= 1, "grid3d", f"sides must be >= 1, got {nx}, {ny}, {nz}")
    n = nx * ny * nz
    if periodic:  # one arc each way along each axis (fewer where a side is 1 or 2)
        return n, 6 * n
    return n, 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1))


@_generator("grid3d", "3-D grid nx x ny x nz (6-neighbour): Luo et al.'s degree-6 'regular' "
                      "graphs; periodic wraps it into a torus (every vertex degree 6)",
            _grid3d_size, 24)
def grid3d(nx: int = 50, ny: int = 50, nz: int = 50, periodic: bool = False,
           progress: bool | None = None) -> CSRGraph:
    """nx x ny x nz 6-neighbour grid, vertex (x, y, z) = (x*ny + y)*nz + z; undirected. Luo et
    al. use these as degree-6 "regular" graphs: interior vertices have degree 6, boundary ones
    fewer (periodic=True wraps the boundary, so with sides >= 3 every degree is 6)."""
    idx = np.arange(nx * ny * nz, dtype=np.int32).reshape(nx, ny, nz)
    src, dst = [], []
    for axis in range(3):
        if periodic and idx.shape[axis] > 1:
            src.append(idx.ravel())
            dst.append(np.roll(idx, -1, axis=axis).ravel())
        else:
            sl_a = [slice(None)] * 3
            sl_b = [slice(None)] * 3
            sl_a[axis] = slice(None, -1)
            sl_b[axis] = slice(1, None)
            src.append(idx[tuple(sl_a)].ravel())
            dst.append(idx[tuple(sl_b)].ravel())
    s = np.concatenate(src)
    d = np.concatenate(dst)
    with bar_for(s.size, "3-D grid", progress) as bar:
        return build(s, d, nx * ny * nz, directed=False, symmetrize=False, drop_self_loops=True,
                     merge_multi_edges=True, name=f"grid3d_{nx}x{ny}x{nz}", bar=bar)


@numba.njit(cache=True)
def _luo_hubs(stubs, n_hubs, hub_degree, n):
    """Give hub h (vertex h) hub_degree distinct neighbours from the shuffled stub list; a stub
    whose vertex hub h already has is set aside for the random pairing. Returns
    (hub_src, hub_dst, leftover stubs)."""
    mark = np.full(n, -1, np.int64)
    hs = np.empty(n_hubs * hub_degree, np.int32)
    hd = np.empty(n_hubs * hub_degree, np.int32)
    left = np.empty(stubs.shape[0], np.int32)
    nl = 0
    k = 0
    i = 0
    for h in range(n_hubs):
        got = 0
        while got < hub_degree and i < stubs.shape[0]:
            v = stubs[i]
            i += 1
            if mark[v] == h:
                left[nl] = v
                nl += 1
            else:
                mark[v] = h
                hs[k] = h
                hd[k] = v
                k += 1
                got += 1
    for j in range(i, stubs.shape[0]):
        left[nl] = stubs[j]
        nl += 1
    return hs[:k], hd[:k], left[:nl]


def _luo_size(n, hub_fraction, hub_degree, avg_degree, max_degree, seed):
    kind = "luo_scale_free"
    _check_param(n >= 1, kind, f"n must be >= 1, got {n}")
    _check_param(0 <= hub_fraction < 1, kind, f"hub_fraction must be in [0, 1), got {hub_fraction}")
    lo_deg = 2 * avg_degree - max_degree
    _check_param(1 <= lo_deg <= max_degree, kind,
                 f"need 1 <= 2*avg_degree - max_degree <= max_degree, got avg {avg_degree}, "
                 f"max {max_degree}")
    n_hubs = int(round(hub_fraction * n))
    _check_param(n_hubs == 0 or n - n_hubs >= hub_degree, kind,
                 f"{n_hubs} hubs of degree {hub_degree} need at least {hub_degree} other vertices "
                 f"(n={n})")
    # Every edge uses up at least one stub of a non-hub vertex, which has at most max_degree.
    return n, 2 * (n - n_hubs) * max_degree


@_generator("luo_scale_free", "Luo et al.'s scale-free recipe: 0.1% of vertices with degree "
                              "1000, the rest average degree 6, max 7", _luo_size, 28)
def luo_scale_free(n: int = 100_000, hub_fraction: float = 0.001, hub_degree: int = 1000,
                   avg_degree: int = 6, max_degree: int = 7, seed: int = 1,
                   progress: bool | None = None) -> CSRGraph:
    """Luo, Wong & Hwu (DAC 2010) scale-free test graphs: round(hub_fraction*n) hubs of degree
    hub_degree; every other vertex gets a target degree uniform in
    [2*avg_degree - max_degree, max_degree] (mean avg_degree), its hub edges included. Hubs pick
    distinct non-hub neighbours from a shuffled stub list, the remaining stubs are paired at
    random (configuration model); the few self loops and repeats this makes are dropped (counted
    in notes), so non-hub degrees never exceed max_degree and the average is a hair under
    avg_degree. Undirected; vertex labels randomly permuted."""
    lo_deg = 2 * avg_degree - max_degree
    rng = _rng(seed, 3)
    n_hubs = int(round(hub_fraction * n))
    n_rest = n - n_hubs
    target = rng.integers(lo_deg, max_degree + 1, size=n_rest)
    stubs = np.repeat(np.arange(n_hubs, n, dtype=np.int32), target)
    rng.shuffle(stubs)
    hs, hd, left = _luo_hubs(stubs, n_hubs, hub_degree, n)
    rng.shuffle(left)
    half = left.size // 2
    perm = rng.permutation(n).astype(np.int32)
    src = perm[np.concatenate([hs, left[:half]])]
    dst = perm[np.concatenate([hd, left[half:2 * half]])]
    with bar_for(src.size, "Luo scale-free", progress) as bar:
        g = build(src, dst, n, directed=False, symmetrize=False, drop_self_loops=True,
                  merge_multi_edges=True, name=f"luo_sf_n{n}", bar=bar)
    g.notes["hubs"] = n_hubs
    return g


def _watts_strogatz_size(n, k, p, seed):
    kind = "watts_strogatz"
    _check_param(n >= 3, kind, f"n must be >= 3, got {n}")
    _check_param(2 <= k < n, kind, f"k must be in 2..n-1, got {k}")
    _check_param(0.0 <= p <= 1.0, kind, f"p must be in [0, 1], got {p}")
    return n, 2 * n * (k // 2)


@_generator("watts_strogatz", "Watts-Strogatz small world: ring of n vertices, each joined to "
                              "its k nearest, each edge rewired with probability p",
            _watts_strogatz_size, 28)
def watts_strogatz(n: int = 100_000, k: int = 10, p: float = 0.3, seed: int = 1,
                   progress: bool | None = None) -> CSRGraph:
    """Watts–Strogatz small world (BFS-4K's Gen-SmallWorld k:10 p:0.3): ring lattice where each
    vertex is joined to its k//2 successors (so its k nearest for even k), then each edge's
    far end is moved to a uniformly random other vertex with probability p. A rewired edge
    that repeats an existing one is merged (counted in notes), so |E| can be a little under
    n*(k//2). Undirected."""
    rng = _rng(seed, 4)
    half = k // 2
    u = np.tile(np.arange(n, dtype=np.int64), half)
    v = (u + np.repeat(np.arange(1, half + 1), n)) % n
    rewire = rng.random(u.size) < p
    # Draw from the n-1 other vertices directly, so no rewired edge is a self loop.
    w = rng.integers(0, n - 1, size=int(rewire.sum()))
    w += w >= u[rewire]
    v[rewire] = w
    with bar_for(u.size, "small world", progress) as bar:
        return build(u.astype(np.int32), v.astype(np.int32), n, directed=False, symmetrize=False,
                     drop_self_loops=True, merge_multi_edges=True,
                     name=f"smallworld_n{n}_k{k}_p{p}", bar=bar)
