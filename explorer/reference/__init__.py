"""CPU reference BFS and the Graph500 validator.

  bfs.py       cpu_bfs (distances and parents), bfs_distances (the distances alone, what checks
               compare with: bottom-up over threads on a large undirected graph's wide levels),
               bfs_layers (the levels, one array each, as networkx's bfs_layers),
               traversed_edges (Graph500 TEPS counting), rows_sorted
  validate.py  validate (the Graph500 rules, stable ids in RULES), compare_distances, and
               check_result: the one check of a BFS result (CPU BFS once, rules, distances)
  sssp.py      weighted shortest paths: scipy.sparse.csgraph on the same graph (reference_sssp,
               reference_apsp) and check_sssp_result, the one check of a shortest-path result
  on_device.py DeviceCheck: check_result's rules where a run left its arrays (kernels/check.py),
               for a sweep's runs; only the verdict comes back, a failure goes to check_result

Every result the explorer shows or the tests accept goes through `check_result` (a sweep's runs
through DeviceCheck first), which takes the RunResult (its source is a vertex 0..n-1, as every
source here: ids are converted at the entry points, explorer.api). This package
imports nothing of explorer.graphs (which uses it for its statistics): it reads any CSR-shaped
object.
"""
from .bfs import CSRLike, bfs_distances, bfs_layers, cpu_bfs, traversed_edges
from .sssp import SSSP_RULES, SSSPCheckReport, check_sssp_result, reference_apsp, reference_sssp
from .validate import (RULES, CheckReport, ValidationError, ValidationReport, assert_valid_bfs,
                       check_result, compare_distances, validate)

__all__ = [
    "cpu_bfs",
    "bfs_distances",
    "bfs_layers",
    "traversed_edges",
    "validate",
    "compare_distances",
    "check_result",
    "assert_valid_bfs",
    "CheckReport",
    "ValidationReport",
    "ValidationError",
    "RULES",
    "CSRLike",
    "check_sssp_result",
    "reference_sssp",
    "reference_apsp",
    "SSSPCheckReport",
    "SSSP_RULES",
]
