"""Kernel arguments in named groups, and the argument types a kernel is compiled for.

A kernel takes a few groups (the graph, the BFS tree, the frontier queues, the counters and log,
the knobs), each a `typing.NamedTuple` whose fields are annotated with their Numba types. Numba
types a namedtuple argument by its class and unpacks its fields at compile time, so a group costs
the kernel nothing over its fields; on the GPU its fields are marshalled one by one, as separate
arguments were (explorer.engine.launcher flattens them).

One declaration serves three places:

- the kernel: its parameters are annotated with their groups, `def k(graph: Graph, tree: Tree)`;
- the launch: the host builds the groups by name, `go(k, blocks, threads, 0, Graph(offsets,
  indices), Tree(dist, parent))`;
- compiling ahead of a run (explorer.warmup) and without a GPU (benchmarks/tools/kernel_resources.py):
  `signature(k)` reads the annotations as the argument types a launch gives the kernel.

The groups several kernel families share are declared here; a family's own groups beside its
kernels. Scalars a launch passes as Python ints are int64, flags as Python bools booleans.
"""
from inspect import signature as _py_signature
from typing import NamedTuple

from numba.core import types

I64 = types.int64
BOOL = types.boolean
V32 = types.int32[::1]
V64 = types.int64[::1]
U32 = types.uint32[::1]
M32 = types.int32[:, ::1]  # a 2-D C-contiguous log: rows of int32 fields
M64 = types.int64[:, ::1]


def group_type(cls):
    """The Numba type of a group (what `numba.typeof` gives one of its instances)."""
    return types.BaseTuple.from_types([cls.__annotations__[f] for f in cls._fields], cls)


def signature(kernel) -> tuple:
    """The argument types of `kernel` (a dispatcher, or a plain function) as its parameters are
    annotated: a group by its class, anything else by its Numba type."""
    func = getattr(kernel, "py_func", kernel)
    out = []
    for p in _py_signature(func).parameters.values():
        a = p.annotation
        if isinstance(a, type) and issubclass(a, tuple):
            out.append(group_type(a))
        elif isinstance(a, types.Type):
            out.append(a)
        else:
            raise TypeError(f"parameter {p.name!r} of {func.__name__} is annotated with {a!r}: "
                            "annotate it with its group or its Numba type")
    return tuple(out)


class Graph(NamedTuple):
    """A CSR graph: the edges of vertex u are indices[offsets[u]:offsets[u + 1]] (a bottom-up
    step gets its in-edges as a Graph too)."""

    offsets: V64
    indices: V32


class Tree(NamedTuple):
    """The BFS tree the search builds: each vertex's level and parent (int32, -1: unreached)."""

    dist: V32
    parent: V32


class Stamps(NamedTuple):
    """The duplicates' ground truth (instrumented runs): the level of each vertex's last claim,
    and of its last copy past the duplicate filter (int32, -1 filled)."""

    claimed: V32
    kept: V32


class Level(NamedTuple):
    """One level's frontier queues: `size` entries of `frontier` are expanded into `out`, at most
    `capacity` entries (a position beyond is reported, never written); `level` is the frontier's."""

    frontier: V32
    size: I64
    out: V32
    capacity: I64
    level: I64


class Heavy(NamedTuple):
    """§5.3's heavy vertices: a frontier vertex of degree >= heavy_degree (0: none) is listed in
    vertices[] (its first edge in the level's flat edge space in offsets[]) for the child grid,
    which walks K3 edges a thread; counter[0] packs the list's count << 40 | its degree sum."""

    heavy_degree: I64
    k3: I64
    vertices: V32
    offsets: V64
    counter: V64


class QueuePair(NamedTuple):
    """The two frontier queues of a kernel that runs several levels and swaps them itself: the
    frontier is qa[:size] when `in_a`, else qb[:size]; `level` is its level."""

    qa: V32
    qb: V32
    in_a: BOOL
    size: I64
    capacity: I64
    level: I64


class Rows(NamedTuple):
    """Two rows of a kernel's counters (int64): level L adds into row L % 2 (`row`), and the level's
    first kernel clears the other row for the next level, so no memset is launched between levels
    (kernels.common.clear_next_row)."""

    counters: V64
    row: I64
