"""The level table's columns and how its cells read: one place for the text tables and the HTML
report (report.py) and the Explorer's table and hovers (plots.py).

Every table names its columns as the record does (stats.LevelStats, and CSV and JSON with it) and
in the record's order: the core fields, then the technique's extras. Nothing is renamed for the
screen, so what a user reads in a table is what they grep for in a file."""
from __future__ import annotations

from ..stats import LEVEL_FIELDS

#: Columns of the Explorer's table, which holds runs of every technique: the record's core fields,
#: then the one extra counted as a duplicate count (BFS-4K's dup_conflicts).
TABLE_FIELDS = (*LEVEL_FIELDS, "dup_conflicts")
TEXT_COLUMNS = ("technique", "kernel", "direction")
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
    the record's core fields, then the extras, as RunResult.level_fields (CSV and JSON)."""
    return LEVEL_FIELDS + tuple(getattr(e, "name", e) for e in extras)


def cell(name: str, value) -> str:
    """The text of column `name`'s cell."""
    if name in TEXT_COLUMNS or isinstance(value, str):
        return str(getattr(value, "value", value))  # an enum (kernel, direction) as its value
    if name == "time_ms":
        return f"{value:.3f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return format_count(value)
