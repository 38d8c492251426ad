"""Other BFS implementations run side by side with ours on the same graph and source: BLEST
(Elbek & Kaya 2025: one persistent cooperative kernel on a bit-packed adjacency, tensor-core pull
steps) and Gunrock (essentials: advance and filter over load-balancing strategies).

Each is a prebuilt binary in a folder of the checkout that git ignores, `.blest/bfs_blest` and
`.gunrock/bfs_bin`; this module never builds them (benchmarks/README.md says where their build
scripts are). Where a binary is absent its measurement is skipped, saying so. Both read the same
binary CSR (`write_csr`: int32 n, int32 m, int32 offsets[n+1], int32 indices[m], symmetric) and
write every vertex's distance (int32 per vertex, in the CSR's numbering: our positions 0..n-1),
which is checked against the CPU reference's like any of ours.

Their times are their own clocks, not ours: BLEST's is the host's wall clock around its one
cooperative launch and its synchronize (median of its runs, the first of which is cold); Gunrock's
is gunrock::bfs::run's own timer (median of its runs after one warm-up). Neither includes reading,
reordering or building its data structure. The environment passes through to them:
BLEST_JACCARD=0 keeps a social graph in its own order instead of BLEST's Jaccard reordering, which
takes minutes on large social graphs.

BLEST_DEVICE (not in PEERS: benchmarks/bitmap_direction.py's table runs it beside them) is BLEST's
driver built with benchmarks/yardsticks/blest/device_clock.cu (`.blest/bfs_blest_device`): the
same kernels timed by CUDA events around the launch, queued with the stream held, so without the
host's launch call and synchronize, which BLEST's own clock and ours include: how much of BLEST's
time is its host's.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .runs import Measurement, check_distances

ROOT = Path(__file__).resolve().parents[2]


class Peer(NamedTuple):
    name: str
    binary: Path
    variants: tuple  # Gunrock's load-balancing strategies (the best is reported); () for one way
    how: str  # one line: what it is
    env: tuple = ()  # (name, value) pairs set for its runs
    clock: str = ""  # the prefix of the times it reports: "" its own clock, "device_" the device clock

    def command(self, csr: Path, source: int, runs: int, dist: Path, variant: str | None) -> list[str]:
        if self.variants:
            return [str(self.binary), str(csr), str(source), str(runs), variant, str(dist)]
        return [str(self.binary), str(csr), str(source), str(runs), str(dist)]


BLEST = Peer("BLEST", ROOT / ".blest" / "bfs_blest", (),
             "BLEST (Elbek & Kaya 2025): one cooperative kernel, bit-packed adjacency, tensor-core pull steps")
GUNROCK = Peer("Gunrock", ROOT / ".gunrock" / "bfs_bin", ("block", "merge", "thread"),
               "Gunrock essentials BFS, best of its block-mapped, merge-path and thread-mapped advance")
BLEST_DEVICE = Peer("BLEST, device clock", ROOT / ".blest" / "bfs_blest_device", (),
                    "BLEST's kernels on the GPU's clock alone: CUDA events around its launch, queued with the stream "
                    "held",
                    env=(("BLEST_DEVICE_CLOCK", "1"),), clock="device_")
PEERS = {p.name: p for p in (BLEST, GUNROCK)}


def _times(clock: str) -> re.Pattern:
    return re.compile(rf"(?:^|\s){clock}median_ms=([0-9.eE+-]+)\s+{clock}min_ms=([0-9.eE+-]+)"
                      rf"(?:\s+{clock}max_ms=([0-9.eE+-]+))?")


def write_csr(path: Path | str, offsets, indices) -> None:
    """The binary CSR both peers read: int32 n, int32 m, int32 offsets[n+1], int32 indices[m]."""
    offsets, indices = np.asarray(offsets), np.asarray(indices)
    if len(indices) >= 2**31:
        raise ValueError(f"{len(indices):,} arcs: the peers' CSR has 32-bit offsets (fewer than 2**31 arcs)")
    with open(path, "wb") as f:
        np.array([len(offsets) - 1, len(indices)], np.int32).tofile(f)
        offsets.astype(np.int32).tofile(f)
        indices.astype(np.int32).tofile(f)


def read_distances(path: Path, n: int) -> np.ndarray:
    """A peer's distances as ours: int32 per vertex, -1 where unreached (BLEST writes -1, Gunrock a
    large value)."""
    d = np.fromfile(path, dtype=np.int32)
    if d.size != n:
        raise ValueError(f"{path.name} holds {d.size} distances for {n} vertices")
    d[(d < 0) | (d >= n)] = -1
    return d


def skip_reason(peer: Peer, g) -> str | None:
    """Why `peer` cannot run on g, or None."""
    if not (peer.binary.is_file() and os.access(peer.binary, os.X_OK)):
        where = peer.binary.relative_to(ROOT) if peer.binary.is_relative_to(ROOT) else peer.binary
        return f"{peer.name} not built: no executable {where}"
    if g.directed:
        return f"{peer.name} reads symmetric graphs only; {g.name} is directed (symmetrize it)"
    return None


class PeerGraph:
    """A graph written once as the peers' CSR in a temporary folder, for several peer runs:
    `with PeerGraph(g) as pg: run_peer(BLEST, pg, ...)`."""

    def __init__(self, g):
        self.g = g
        self._dir = tempfile.TemporaryDirectory(prefix="bfs4k-peer-")
        self.csr = Path(self._dir.name) / "graph.csr"
        self._written = False

    def path(self) -> Path:
        if not self._written:
            write_csr(self.csr, self.g.offsets, self.g.indices)
            self._written = True
        return self.csr

    def __enter__(self) -> "PeerGraph":
        return self

    def __exit__(self, *exc) -> None:
        self._dir.cleanup()


def run_peer(peer: Peer, pg: PeerGraph, source: int, expected, *, runs: int = 11,
             timeout_s: float = 300.0) -> Measurement:
    """`peer`'s BFS of pg's graph from `source` (0..n-1): its median, min and max over `runs`
    runs (Gunrock: of its best strategy), its distances checked against `expected` (the CPU
    reference's). Skipped, saying why, where the binary is absent or the graph directed."""
    g = pg.g
    m = Measurement(peer.name, peer.name.lower(), {})
    why = skip_reason(peer, g)
    if why:
        m.skipped = why
        return m
    best = None
    tried = {}
    for variant in peer.variants or (None,):
        dist = pg.csr.with_name(f"{peer.name}-{variant or 'dist'}.out")
        cmd = peer.command(pg.path(), source, runs, dist, variant)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                               env={**os.environ, **dict(peer.env)} if peer.env else None)
        except subprocess.TimeoutExpired:
            tried[variant or peer.name] = f"more than {timeout_s:g} s"
            continue
        found = _times(peer.clock).search(p.stdout)
        if p.returncode != 0 or not found:
            tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
            tried[variant or peer.name] = f"exit {p.returncode}: {tail}"
            continue
        med, lo, hi = (float(x) if x else None for x in found.groups())
        c = check_distances(expected, read_distances(dist, g.num_vertices))
        tried[variant or peer.name] = round(med, 4) if c.ok else f"WRONG: {c.message}"
        if not c.ok:
            return m.fail(f"{variant or peer.name}: {c.message}", wrong=True)
        if best is None or med < best[0]:
            best = (med, lo, hi, variant)  # BLEST reports no maximum
    if len(tried) > 1 or best is None:
        m.extra["variants"] = tried
    if best is None:
        return m.fail("; ".join(f"{k}: {v}" for k, v in tried.items()))
    m.summary_ms = best[:3]
    if best[3]:
        m.knobs = {"load_balance": best[3]}
    m.levels = int(np.max(expected)) + 1
    from explorer.reference import traversed_edges

    m.traversed_edges = traversed_edges(g, expected)
    m.correct = True
    return m
