"""BFS-4K §7's rules of thumb for choosing its knobs (the technique's §7 preset)."""
from __future__ import annotations

from ..operators.bfs4k.knobs import BFS4KKnobs
from ..operators.bfs4k.policy import section7_k1


def recommend_knobs(graph_or_stats, base: "BFS4KKnobs | None" = None) -> "tuple[BFS4KKnobs, dict]":
    """BFS-4K §7's rules of thumb: knobs for a graph, with the reason for each.

    Takes a CSRGraph or its graphs.graph_stats() dict ("avg_degree", "std_degree", "max_degree";
    the paper's Table 1 calls the maximum degree "mode").
    """
    stats = graph_or_stats
    if not isinstance(stats, dict):
        from ...graphs import graph_stats

        stats = graph_stats(graph_or_stats)
    avg, std, top = float(stats["avg_degree"]), float(stats["std_degree"]), int(stats["max_degree"])
    why = {}
    k1, why["K1"] = section7_k1(avg, std)
    if top > 2048:
        k2 = round(0.15 * min(1.0, 8 / k1), 4)
        why["K2"] = f"maximum degree {top} > 2048: heavy vertices pay; at most 0.15 %, smaller for larger K1 (§7)"
    else:
        k2, why["K2"] = 0.0, f"maximum degree {top} <= 2048: child grids would not pay (§7)"
    why["K3"] = "16 neighbours per child thread, the paper's device-tuned value (§7)"
    if avg >= 32 and std >= 32:
        k4, why["K4"] = 0, "high average and deviation: large virtual warps beat edge-discover (§7)"
    elif std >= 24 and avg < 16:
        k4, why["K4"] = 2, "low average, high deviation, as com-youtube (§7)"
    else:
        k4, why["K4"] = 1, "medium deviation, as kkt_power and web-Google (§7)"
    if avg >= 32:
        k5, why["K5"] = 0, "high average degree: enough parallelism for the multi-block kernel (§7)"
    else:
        k5, why["K5"] = 1, "the paper's usual trade-off between parallelism and synchronisation (§7)"
    why["K6"] = "128 threads per block, the paper's device-tuned value (§7)"
    why["K7"] = "10, the paper's device-tuned write-mode threshold (§7)"
    knobs = (base or BFS4KKnobs()).replace(K1=k1, K2=k2, K3=16, K4=k4, K5=k5, K6=128, K7=10)
    return knobs, why
