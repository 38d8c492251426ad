"""Knobs: a tunable's meaning, range, default and paper section in one declaration.

Each technique declares its own `KnobSet` (a frozen dataclass whose fields are `knob(spec)`), so
the CLI, the Explorer and the docs show only the chosen technique's knobs. Knobs that several
techniques share (the block size of a simple kernel) are declared here once and reused.
Cross-knob rules live in one place per technique: its KnobSet's `check()`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar


class KnobError(ValueError):
    """A knob value is outside its declared range; the message names the knob and the range."""


@dataclass(frozen=True)
class KnobSpec:
    """One tunable: its name, the paper's meaning, the valid values and the paper's default."""

    name: str
    meaning: str
    default: Any
    low: float | None = None  # inclusive numeric range ...
    high: float | None = None
    choices: tuple | None = None  # ... or an explicit set of values
    kind: type = int
    section: str = ""  # where the paper defines it
    #: Values renamed since, still accepted where a user may have them in a script: ((old, new),
    #: ...); the knob then holds the new one, and the record says so.
    renamed: tuple = ()

    def describe_range(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return f"{self.kind.__name__} in [{self.low}, {self.high}]"

    def check(self, value: Any) -> Any:
        if self.choices is not None:
            for old, new in self.renamed:
                if value == old:
                    value = new
            if value not in self.choices:
                raise KnobError(f"knob {self.name}={value!r} is invalid: {self.describe_range()}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise KnobError(f"knob {self.name}={value!r} is invalid: expected {self.describe_range()}")
        if self.kind is int and int(value) != value:
            raise KnobError(f"knob {self.name}={value!r} is invalid: expected an integer in [{self.low}, {self.high}]")
        if not (self.low <= value <= self.high):
            raise KnobError(f"knob {self.name}={value!r} is out of range: {self.describe_range()}")
        return self.kind(value)

    def extremes(self) -> tuple:
        """The range's ends (the first and last choice): the conformance suite runs them."""
        if self.choices is not None:
            return (self.choices[0], self.choices[-1])
        return (self.kind(self.low), self.kind(self.high))


def knob(spec: KnobSpec):
    """A KnobSet field declared by `spec`."""
    return field(default=spec.default, metadata={"spec": spec})


POW2_BLOCKS = (32, 64, 128, 256, 512, 1024)

#: Shared by the simple (non-BFS-4K) kernels: one thread per frontier vertex, or per vertex or edge.
BLOCK_THREADS = KnobSpec("block_threads", "threads per block of the technique's kernel", 256, choices=POW2_BLOCKS)


@dataclass(frozen=True)
class KnobSet:
    """A technique's knobs, validated at construction: each field is declared with `knob(spec)`."""

    #: The technique these knobs belong to, for messages ("knob K8 is not a knob of topdown-queue").
    owner: ClassVar[str] = ""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, f.metadata["spec"].check(getattr(self, f.name)))
        self.check()

    def check(self) -> None:
        """Cross-knob rules (one place per technique); raise KnobError naming the knobs."""

    @classmethod
    def specs(cls) -> list[KnobSpec]:
        return [f.metadata["spec"] for f in dataclasses.fields(cls)]

    @classmethod
    def spec(cls, name: str) -> KnobSpec:
        for s in cls.specs():
            if s.name == name:
                return s
        names = ", ".join(s.name for s in cls.specs()) or "none"
        whose = f" of {cls.owner}" if cls.owner else ""
        raise KnobError(f"unknown knob {name!r}{whose}; its knobs: {names}")

    @classmethod
    def from_dict(cls, values: dict | None) -> "KnobSet":
        values = dict(values or {})
        for name in values:
            cls.spec(name)  # unknown names fail here, with the list of knobs
        return cls(**values)

    @classmethod
    def defaults(cls) -> dict:
        return {s.name: s.default for s in cls.specs()}

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "KnobSet":
        return self.from_dict({**self.as_dict(), **changes})


@dataclass(frozen=True)
class NoKnobs(KnobSet):
    """For a technique with nothing to tune."""
