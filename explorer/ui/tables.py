"""The level table's columns and how its cells read: one place for the text tables and the HTML
report (report.py) and the Explorer's table and hovers (plots.py). Standard library only."""
from __future__ import annotations

#: Level-record columns shown in every table, with short titles; a run's technique-declared extras
#: (stats.Extra) go between the counts and the text columns (`table_fields`).
TABLE_FIELDS = ("level", "frontier_in", "discovered", "frontier_out", "edges_examined", "dup_generated",
                "dup_detected", "dup_undetected", "dup_conflicts", "technique", "kernel", "time_ms")
_CORE_TABLE = tuple(f for f in TABLE_FIELDS if f != "dup_conflicts")  # dup_conflicts: BFS-4K's extra
TABLE_TITLES = {"frontier_in": "frontier_in", "frontier_out": "frontier_out", "edges_examined": "edges",
                "dup_generated": "dup_gen", "dup_detected": "dup_det", "dup_undetected": "dup_left",
                "dup_conflicts": "conflicts", "time_ms": "time_ms"}
TEXT_COLUMNS = ("technique", "kernel")
#: Table columns that hold counts (the rest: level, the text columns and time_ms).
COUNT_FIELDS = tuple(f for f in TABLE_FIELDS if f not in ("level", *TEXT_COLUMNS, "time_ms"))

#: How tables and the Explorer show a count that was not measured (instrumentation off); CSV
#: files leave its cell empty (RunResult.to_csv).
NOT_MEASURED = "–"


def run_label(index: int, technique: str, graph: str) -> str:
    """How runs are named in legends and tables: '#1 topdown-queue (graph)'."""
    return f"#{index} {technique} ({graph})"


def default_label(index: int, result) -> str:
    """run_label of a RunResult."""
    return run_label(index, result.technique, result.graph)


def format_count(value, missing: str = NOT_MEASURED) -> str:
    """A count as the tables, the Explorer's table and its hovers show it: `missing` when it was not
    measured (None; -1 in records made before counts not measured became None)."""
    return missing if value is None or value < 0 else f"{value:,}"


def table_fields(extras=()) -> tuple[str, ...]:
    """The columns of a level table of a technique with these extras (stats.Extra, or their names):
    the core counts, the extras, then direction, technique, kernel and time."""
    names = tuple(getattr(e, "name", e) for e in extras)
    head = _CORE_TABLE[:_CORE_TABLE.index("technique")]
    return head + names + ("direction", "technique", "kernel", "time_ms")


def cell(name: str, value) -> str:
    """The text of column `name`'s cell."""
    if name in TEXT_COLUMNS or name == "direction" or isinstance(value, str):
        return str(getattr(value, "value", value))  # an enum (kernel, direction) as its value
    if name == "time_ms":
        return f"{value:.3f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return format_count(value)
