"""The argument groups of the BFS-4K kernels (kernels.args: declared once, read by the kernels,
their launches in explorer's BFS-4K level operator and the compile-ahead signatures).

A multi-block level and its child grid take (graph: Graph, tree: Tree, stamps: Stamps,
queues: Level, heavy: kernels.expand.Heavy, plan: MultiPlan, readback: Readback); bfs4k_stats reads the next
frontier of the same groups. The single block and its cluster form take (graph, tree, stamps,
queues: QueuePair, out: SingleOut, knobs: SingleKnobs); bfs4k_commit (tree, queues, out).
"""
from typing import NamedTuple

from ..args import BOOL, I64, M32, M64, V32, V64


class MultiPlan(NamedTuple):
    """A multi-block level's decisions (§5.1-§5.6) and static sizes."""

    warp_size: I64  # the dynamic virtual warp size (§5.2)
    edge_discover: BOOL  # edge-discover instead of virtual warps (§5.4)
    binary_scan: BOOL  # the ballot/popc prefix sum of the flush (§5.1)
    k7: I64  # coalesced writes from this local-queue length on (§5.6; 0: never)
    hash_mask: I64  # hash64 table entries - 1 (§6)
    fused_stats: BOOL  # the last block counts the next frontier's degree histogram


class Readback(NamedTuple):
    """What the host reads back after a multi-block level: the level's counters (layout's slots)
    and the next frontier's degree histogram; `other` is the other read-back buffer, which block 0
    clears for the next level."""

    counters: V64
    hist: V64
    other: V64


class SingleOut(NamedTuple):
    """What a single-block launch leaves: the final frontier's degree histogram, a log row a level
    (layout's L_* fields), the state (S_* fields), and with visited='shared' the visit log
    (vertex, parent, level rows), which bfs4k_commit writes into the tree; at most max_levels
    levels a launch."""

    hist: V64
    log: M64
    state: V64
    visits: V32
    max_levels: I64


class SingleKnobs(NamedTuple):
    """The single block's knobs and shared-memory layout (§5.5)."""

    f_threshold: I64  # F_Threshold: the launch ends once |F| reaches it
    f_capacity: I64  # entries of F_d (and F_d_new) in shared memory
    k1: I64  # the smallest virtual warp (§5.2)
    heavy_limit: I64  # K2 as a count of vertices (§5.3)
    k3: I64  # edges a child-grid thread walks (§5.3)
    k4: I64  # edge-discover's divisor (§5.4)
    hash_mask: I64
    k7: I64
    region0_words: I64  # int32 words of the hash or culling tables before F_d
    bitmap_words: I64  # int32 words of the visited bitmap (visited='shared')


class ProvLog(NamedTuple):
    """The provenance variant's claim log (kernels.bfs4k.provenance): rows of PROV_FIELDS int32,
    counter[0] the rows claimed so far (may pass the buffer's end), one vertex in mask + 1 logged."""

    rows: M32
    counter: V64
    mask: I64
