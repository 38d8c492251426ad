"""The configurations `auto` chooses among: a technique and a knob setting each, every one the best
measured somewhere (benchmarks/results: the graph it won on is named beside it). The cost model
(model.py) predicts each one's time on the graph at hand from their calibrated times."""
from __future__ import annotations

from typing import NamedTuple

BD, B4 = "bitmap-direction", "bfs4k"
PULL = {"alpha": 1_000_000, "beta": 1_000_000}  # bottom-up from the source on
NO_NARROW = {"one_block_vertices": 0, "narrow_edges": 0}  # every level in the cluster or the grid
B4_LONG = {"K1": 1, "K4": 0, "K5": 2, "claim": "atomic", "dedup": "none", "K7": 0, "visited": "shared"}


class Candidate(NamedTuple):
    name: str  # what the records and the explanation call it
    technique: str
    knobs: dict


CANDIDATES: tuple[Candidate, ...] = (
    Candidate("bitmap-direction", BD, {}),  # Kronecker, uniform random, small world
    Candidate("bitmap-direction, pulling throughout", BD, PULL),  # p2p-Gnutella31
    Candidate("bitmap-direction, one cluster of 16", BD, {"cluster": 16}),  # delaunay_n16
    Candidate("bitmap-direction, one cluster of 16, pulling after the first level", BD,
              {"cluster": 16, **NO_NARROW, "beta": 1_000_000}),  # Wiki-Vote
    Candidate("bitmap-direction, one cluster of 8, pulling throughout", BD,
              {"cluster": 8, **NO_NARROW, **PULL}),  # facebook_combined
    Candidate("bfs4k, one cluster of 16 x 256", B4,
              {**B4_LONG, "K1": 2, "K5": 1, "cluster": 16, "single_block_threads": 256}),  # 1000² grid
    Candidate("bfs4k, one block of 1024", B4, B4_LONG),  # 3elt
    Candidate("bfs4k, one block of 512", B4, {**B4_LONG, "single_block_threads": 512, "K5": 4}),  # roads
    Candidate("direction-optimizing", "direction-optimizing", {}),
    Candidate("luo-hierarchical", "luo-hierarchical", {}),  # 3-D grids
    Candidate("luo-hierarchical, grid layer only", "luo-hierarchical", {"block_threshold": 0}),
    Candidate("hybrid", "hybrid", {}),
    Candidate("edge-parallel", "edge-parallel", {}),  # small social graphs, before bitmap-direction
    Candidate("cpu-hybrid", "cpu-hybrid", {}),  # no GPU; tiny graphs
    Candidate("cpu-topdown", "cpu-topdown", {}),
)


#: Under the simulator every CUDA thread is a Python thread: clusters of two blocks at most.
SIMULATOR_CAPS = {"cluster": 2}


def knob_values(cand: Candidate, impl, simulator: bool) -> dict:
    """The knobs `cand` runs with: its own; under the simulator its technique's simulator knobs over
    them (block sizes that keep a run to seconds) and clusters capped (SIMULATOR_CAPS)."""
    if not simulator:
        return dict(cand.knobs)
    values = {**cand.knobs, **impl.simulator_knobs}
    for k, cap in SIMULATOR_CAPS.items():
        if values.get(k, 0) > cap:
            values[k] = cap
    return values


def by_name(name: str) -> Candidate:
    for c in CANDIDATES:
        if c.name == name:
            return c
    raise ValueError(f"unknown auto candidate {name!r}; candidates: {', '.join(c.name for c in CANDIDATES)}")
