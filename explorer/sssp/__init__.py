"""Shortest paths with weights: the chapter's §3 (single source: Bellman-Ford, H-BF, Δ-stepping)
and §4 (all pairs: blocked Floyd-Warshall, Johnson's way), on the same engine as the BFS.

  techniques/  the SSSP techniques: the enum and registry, one module each (base.py: the interface)
  operators.py RelaxLoop, the frontier-based run every technique configures
  run.py       run_sssp and SSSPRun (the Enactor's loop), potentials (Johnson's h)
  records.py   IterationStats (a record a step) and SSSPResult
  weights.py   Weighting: the weights as the kernels read them (int64 or float64), the errors
  paths.py     host passes over a tree: zero-weight cycles of parents, the negative cycle found
  apsp.py      run_apsp: blocked Floyd-Warshall and Johnson's way, the n x n memory check

Validation: explorer.reference.sssp (scipy.sparse.csgraph on the same graph, check_sssp_result).
"""
from .records import ITERATION_FIELDS, PHASES, IterationStats, SSSPResult
from .run import SSSPRun, potentials, run_sssp
from .techniques import SSSPTechnique, implementation, make_knobs, sssp_techniques
from .weights import (INT64_INF, NegativeCycleError, NegativeWeightError, UnweightedGraphError, Weighting,
                      weighting)

__all__ = ["INT64_INF", "ITERATION_FIELDS", "IterationStats", "NegativeCycleError", "NegativeWeightError", "PHASES",
           "SSSPResult", "SSSPRun", "SSSPTechnique", "UnweightedGraphError", "Weighting", "implementation",
           "make_knobs", "potentials", "run_sssp", "sssp_techniques", "weighting"]
