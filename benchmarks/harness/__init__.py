"""The benchmarks' one harness: named graphs (graphs.py), running, timing and checking
(runs.py), the peers' programs (peers.py), the environment and the one writer of results
(record.py). Every benchmark runs a search through `start_bfs`/`start_many` (weighted:
`start_sssp`/`start_apsp`) and checks it through `check` (`check_sssp`; `check_distances` for raw
arrays), so those are the only lines that know explorer's entry points.
"""
from .graphs import GRAPHS, GraphSpec, UnknownGraph, centre, check_names, load, source_of, spec
from .peers import BLEST, BLEST_DEVICE, GUNROCK, PEERS, Peer, PeerGraph, run_peer, write_csr
from .record import FIELDS, RESULTS, describe, environment, gpu_kind, markdown_table, write_results
from .runs import (THRESHOLD_METHOD, Check, Measurement, Timed, check, check_distances, check_sssp,
                   check_tree_levels, measure, measure_roots, multisearch_methods, reference, reference_sssp,
                   runs_overlap, scipy_bfs, spread, start_apsp, start_bfs, start_many, start_sssp, steps_of, time_call,
                   time_launches)

__all__ = [
    "GRAPHS", "GraphSpec", "UnknownGraph", "centre", "check_names", "load", "source_of", "spec",
    "BLEST", "BLEST_DEVICE", "GUNROCK", "PEERS", "Peer", "PeerGraph", "run_peer", "write_csr",
    "FIELDS", "RESULTS", "describe", "environment", "gpu_kind", "markdown_table", "write_results",
    "THRESHOLD_METHOD", "multisearch_methods", "Check", "Measurement", "Timed", "check", "check_distances",
    "check_tree_levels", "measure", "measure_roots", "reference", "runs_overlap", "scipy_bfs", "spread", "start_bfs",
    "start_many", "steps_of", "time_call", "time_launches", "check_sssp", "reference_sssp", "start_sssp", "start_apsp",
]
