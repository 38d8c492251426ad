"""The SSSP kernels' argument groups (kernels.args's scheme). Distances are int64 for integer
weights and float64 for real ones: the annotations give the float64 form (what signature() reads);
Numba compiles the int64 form from the arrays a launch passes."""
from typing import NamedTuple

from numba.core import types

from ..args import I64, V32, V64

F64 = types.float64
VF64 = types.float64[::1]
V8 = types.int8[::1]


class WGraph(NamedTuple):
    """A weighted CSR graph: the arcs of u are indices[offsets[u]:offsets[u + 1]], arc k weighs
    weights[k] (the distances' type)."""

    offsets: V64
    indices: V32
    weights: VF64


class Paths(NamedTuple):
    """The shortest-path tree as it grows: dist[v] (infinity or INT64_MAX: unreached) and
    parent[v] (-1), or, in packed mode, both in one 64-bit word a vertex: packed[v] =
    distance << 32 | parent (32-bit distances), updated by one 64-bit atomic min."""

    dist: VF64
    parent: V32
    packed: V64


class Marks(NamedTuple):
    """Per-vertex marks: stamp[v] is the iteration in which v was last queued (duplicate removal
    and the duplicates' count); far[v] = 1 while v waits beyond Δ-stepping's threshold; vclass[v]
    H-BF's edge classes of the arcs into v (IN_DEGREE_1, SINK bits of kernels.sssp.relax)."""

    stamp: V32
    far: V32
    vclass: V8


class Sweep(NamedTuple):
    """One relax step: the `size` entries of `frontier` relax their arcs; improved vertices are
    queued in `out` (at most `capacity`); `iteration` stamps them."""

    frontier: V32
    size: I64
    out: V32
    capacity: I64
    iteration: I64


class Bounds(NamedTuple):
    """Δ-stepping's buckets: a distance d lies in bucket min(d / delta, 2**62) rounded down; an
    improved vertex beyond `bucket` is marked far instead of queued (FAR). A distance below
    `floor` proves a negative cycle (a simple path cannot be that short: (n - 1) times the most
    negative weight); `floor` has the distances' type."""

    bucket: I64
    delta: F64
    floor: F64


class SingleLimits(NamedTuple):
    """When a single-block launch stops (kernels.sssp.single): a frontier of more than `max_size`
    entries, one holding a vertex of degree >= `heavy_degree` (> 0), or `max_iters` iterations (its
    log's rows); `k1`, the least virtual warp."""

    max_size: I64
    max_iters: I64
    k1: I64
    heavy_degree: I64


class Policy(NamedTuple):
    """The step's static choices: W lanes share a frontier vertex (a virtual warp); `flags`
    (kernels.sssp.relax's PACKED, CLASSIFY, DEDUP, FAR, INSTRUMENT bits)."""

    W: I64
    flags: I64
