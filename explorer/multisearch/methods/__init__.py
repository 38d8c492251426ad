"""The multi-search methods: one documented enum member each, and the registry.

`Method` is the one list of ways to run k searches at once, each member documented with its
paper and when it wins (the `#:` comment above it is its `doc`). `_REGISTRY` maps a member to the
class that implements it (`base.MultiSearchMethod`), one line each, imported only when used.
Adding a method is its own module plus one member and one registry line here (ARCHITECTURE.md).
"""
from __future__ import annotations

import enum
import os
import sys
import warnings

from ...registry import instantiate, member_docs


class Method(str, enum.Enum):
    """The ways to run k searches at once. Values are the names used in records, files and UI."""

    #: Warp-thread hybrid (McLaughlin, Riedy & Bader §III-B): a block per search, two queues;
    #: out-degree < T to the thread queue (a thread gathers the neighbours), the others to the
    #: warp queue (a warp each, taken through a shared counter). Wins on most graphs (10 of the
    #: paper's 12), by the most on mixed degrees (as-Skitter, hollywood, rgg).
    WARP_THREAD = "warp-thread"

    #: Warp-based (§III-A; the warp-thread hybrid with T = 0): every frontier vertex to a warp. Wins
    #: when most frontier vertices have tens of neighbours or more (kron_g500, hollywood).
    WARP = "warp-based"

    #: Work-efficient (§IV, McLaughlin & Bader SC14; the warp-thread hybrid with T = infinity): a
    #: thread per frontier vertex. Wins on even, moderate degrees (ldoor: 99.8% of vertices below 64).
    WORK_EFFICIENT = "work-efficient"

    #: Edge-parallel (§IV, Jia et al.): every level, a thread per arc of the graph, whether its
    #: source is in the frontier or not. Wins only where the frontier holds most vertices every
    #: level; the paper's slowest on every graph, by 10-100x on large-diameter ones.
    EDGE_PARALLEL = "edge-parallel"

    #: Bit-parallel MS-BFS (Then et al., VLDB 2014): 32 or 64 searches share a word per vertex;
    #: each level is word operations over the graph, top-down or bottom-up (Beamer et al.'s rule).
    #: Hop distances only (no callbacks): distance matrix, hop counts, closeness, eccentricity,
    #: reachability. Wins on small-world graphs with many sources (one pass serves a whole word).
    BIT_PARALLEL = "bit-parallel"

    @property
    def doc(self) -> str:
        return _DOCS.get(self, "")

    @classmethod
    def parse(cls, value) -> "Method":
        """A member from itself, its value or a former name (which warns: scripts keep working)."""
        if isinstance(value, Method):
            return value
        key = str(value).strip().lower()
        if key in RENAMED:
            new = cls(RENAMED[key])
            warnings.warn(f"multi-search method {key!r} is now called {new.value!r} (the paper's name; "
                          f"'hybrid' also names a BFS technique): use method={new.value!r}", FutureWarning,
                          stacklevel=_caller_level())
            return new
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown multi-search method {value!r}; methods: {names}") from None


#: Former method names a script may still use -> the member's value.
RENAMED = {"hybrid": "warp-thread"}

#: Member -> "module:Class" of its implementation, relative to this package. One line a method.
_REGISTRY = {
    Method.WARP_THREAD: "warp_thread:WarpThread",
    Method.WARP: "warp_based:WarpBased",
    Method.WORK_EFFICIENT: "work_efficient:WorkEfficient",
    Method.EDGE_PARALLEL: "edge_parallel:EdgeParallel",
    Method.BIT_PARALLEL: "bit_parallel:BitParallel",
}


def implementation(method: "Method | str"):
    """The method's implementation (an instance of base.MultiSearchMethod)."""
    m = Method.parse(method)
    return instantiate(__name__, _REGISTRY[m])


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _caller_level() -> int:
    """warnings.warn's stacklevel of the first frame outside explorer.multisearch: the line of the
    user's script that named the method (run_many, plan_batches or Method.parse reach here)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_DOCS = member_docs(Method)

__all__ = ["Method", "RENAMED", "implementation"]
