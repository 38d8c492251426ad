"""What the three registries share (BFS techniques, shortest-path techniques, multi-search methods):
each is a documented enum plus a map from member to "module:Class", imported only when used."""
from __future__ import annotations

import enum
import importlib
import inspect
import re

from .knobs import KnobError, KnobSet


def member_docs(members: type[enum.Enum]) -> dict:
    """The `#:` comment above each member of `members`, so the UI shows the same text as the source."""
    docs: dict = {}
    lines: list[str] = []
    for line in inspect.getsource(members).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            lines.append(stripped[2:].strip())
            continue
        m = re.match(r"([A-Z_0-9]+)\s*=", stripped)
        if m and lines:
            docs[members[m.group(1)]] = " ".join(lines)
        lines = []
    return docs


def instantiate(package: str, entry: str):
    """An instance of the class `entry` ("module:Class") names, its module relative to `package`."""
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)()


def knobs_from(cls: type[KnobSet], values, technique: str) -> KnobSet:
    """Knobs of the KnobSet class `cls` (the knobs of `technique`) from a dict (unknown names and bad
    values raise KnobError), or `values` itself when it is a KnobSet of that class already."""
    if isinstance(values, KnobSet):
        if not isinstance(values, cls):
            raise KnobError(f"knobs of type {type(values).__name__} do not belong to technique {technique!r}")
        return values
    return cls.from_dict(values)
