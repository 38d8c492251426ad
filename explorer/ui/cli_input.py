"""The command line's input: knob and generator text, sources, graph specs and output paths checked
before anything runs; a bad one raises UsageError (one line, exit status 2). Shared by every command
(cli.py, cli_sssp.py)."""
from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

from ..stats import write_text_atomic
from ..techniques import KnobError, knobs_of


def _invoked_as() -> str:
    """The program's name as the user typed it: `bfs4k`, or `python3 -m explorer` (argparse's own
    choice would be `__main__.py`)."""
    if os.path.basename(sys.argv[0] if sys.argv else "") == "__main__.py":
        return f"{os.path.basename(sys.executable) or 'python3'} -m explorer"
    return "bfs4k"


PROG = _invoked_as()


class UsageError(ValueError):
    """Bad command-line input; the message is printed as one line."""


# ------------------------------------------------------------------ plain parsing helpers

def _coerce(raw: str, like, what: str):
    """Turn the text `raw` into the type of `like` (a default value or a choice)."""
    text = raw.strip()
    if isinstance(like, bool):
        low = text.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"{what}={raw!r} is invalid: expected true or false")
    if isinstance(like, int):
        try:
            return int(text)
        except ValueError:
            try:
                f = float(text)  # accept 1e5 for 100000
            except ValueError:
                f = None
            if f is not None and f.is_integer():
                return int(f)
            raise UsageError(f"{what}={raw!r} is invalid: expected an integer") from None
    if isinstance(like, float):
        try:
            return float(text)
        except ValueError:
            raise UsageError(f"{what}={raw!r} is invalid: expected a number") from None
    return text


def _split_assignment(item: str, what: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise UsageError(f"{what} {item!r} is malformed: expected NAME=VALUE")
    return name.strip(), value


def parse_knob_values(technique, items: list[str] | None, Knobs=None) -> dict:
    """['K1=4', 'dedup=none'] -> {'K1': 4, 'dedup': 'none'}, each value typed and range-checked
    against the technique's declared knobs (`Knobs`: its KnobSet class, for a technique other than
    a BFS one)."""
    Knobs = Knobs or knobs_of(technique)
    values = {}
    for item in items or []:
        name, raw = _split_assignment(item, "--knob")
        spec = Knobs.spec(name)  # KnobError listing the technique's knobs for an unknown name
        like = spec.choices[0] if spec.choices else spec.kind()
        try:
            values[name] = _coerce(raw, like, f"knob {name}")
        except UsageError:
            raise KnobError(f"knob {name}={raw.strip()!r} is invalid: expected {spec.describe_range()}") from None
    Knobs.from_dict(values)  # range errors now, before anything is loaded
    return values


def parse_generator(spec: str) -> tuple[str, dict]:
    """'gen:KIND:p=v,q=w' -> (KIND, {p: v, q: w}) with values typed like the defaults."""
    from ..graphs import GENERATORS, GraphError

    _, _, rest = spec.partition(":")
    kind, _, params_text = rest.partition(":")
    kind = kind.strip()
    if kind not in GENERATORS:
        raise GraphError(f"unknown generator {kind!r} in {spec!r}; generators: {', '.join(GENERATORS)} "
                         f"(syntax gen:KIND:param=value,...)")
    defaults = GENERATORS[kind].params
    params = {}
    for item in filter(None, (p.strip() for p in params_text.split(","))):
        name, raw = _split_assignment(item, f"generator parameter in {spec!r}:")
        if name not in defaults:
            raise GraphError(f"generator {kind!r} has no parameter {name!r}; parameters: "
                             + ", ".join(f"{k}={v}" for k, v in defaults.items()))
        params[name] = _coerce(raw, defaults[name], f"generator {kind!r} parameter {name}")
    return kind, params


def check_source(text: str) -> None:
    """Refuse a --source that is neither a vertex id (decimal digits, as the file writes them) nor
    'max-degree' or 'random', before the graph loads."""
    key = text.strip().lower()
    if key not in ("max-degree", "random") and not re.fullmatch(r"-?[0-9]+", key):
        raise UsageError(f"--source {text!r} is invalid: give a vertex id (an integer such as 0 or 105), "
                         "'max-degree' or 'random'")


def load_graph_spec(spec: str, undirected: bool = False, max_arcs: int | None = None):
    """A sample graph name, a graph file path, or gen:KIND:param=value,... -> CSRGraph. A generator
    whose graph would exceed `max_arcs` is refused before it builds anything."""
    from .. import graphs

    opts = {"directed": False} if undirected else {}
    if spec.startswith("gen:"):
        if undirected:
            raise UsageError("--undirected applies to graph files and samples, not to generators")
        kind, params = parse_generator(spec)
        return graphs.generate(kind, max_arcs=max_arcs, **params)
    samples = {k.lower(): k for k in graphs.SAMPLE_GRAPHS}
    samples.update({v.file.lower(): k for k, v in graphs.SAMPLE_GRAPHS.items()})
    if spec.lower() in samples and not Path(spec).exists():
        return graphs.sample_graph(samples[spec.lower()], **opts)
    path = Path(spec).expanduser()
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as err:  # a folder on the way that cannot be searched
        raise graphs.GraphError(f"{spec}: cannot read: {err.strerror or err}") from None
    if not path.exists() and (path.parent != Path(".") or path.suffix):
        raise graphs.GraphError(f"{spec}: no such file")
    if not path.exists():
        raise graphs.GraphError(
            f"graph {spec!r} is neither a sample graph nor an existing file; samples: "
            f"{', '.join(graphs.SAMPLE_GRAPHS)}; or use gen:KIND:param=value,... (see `{PROG} graphs`)")
    return graphs.load_graph(path, **opts)


def check_output_path(path: str, option: str, make_parents: bool = False) -> Path:
    """Refuse an output path that cannot be written, before minutes of BFS: its directory must
    exist (or, with make_parents, the nearest existing ancestor, since the writer creates the rest)
    and be writable, and the path must not be a directory. A link is judged by its target, which
    is what gets written; a device or a FIFO (/dev/null, /dev/stdout) is written in place, so it
    must be writable itself."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a directory; give a file name")
    if target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):
            raise UsageError(f"{option} {path}: is not writable")
        return target
    parent = Path(os.path.realpath(target)).parent if target.is_symlink() else target.parent
    if make_parents:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise UsageError(f"{option} {path}: the directory {parent} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: the directory {parent} is not writable")
    return target


def check_output_flags(args, arrays_words: str) -> None:
    """--arrays only with --json (it adds `arrays_words` there), and --json and --csv paths that can
    be written, before anything loads."""
    if args.arrays and not args.json:
        raise UsageError(f"--arrays adds {arrays_words} to the JSON file: give --json PATH too")
    for option, path in (("--json", args.json), ("--csv", args.csv)):
        if path:
            check_output_path(path, option)


def write_result_files(args, result) -> None:
    """A run's --json (with --arrays) and --csv files, each said when written."""
    sys.stdout.flush()  # before a file that may be this terminal (--json /dev/stdout)
    if args.json:
        write_text_atomic(args.json, result.to_json(include_arrays=args.arrays))
        print(f"wrote {args.json}")
    if args.csv:
        write_text_atomic(args.csv, result.to_csv())
        print(f"wrote {args.csv}")


def add_source_flags(p) -> None:
    """--source and --seed of a command that runs from one vertex (checked by check_source)."""
    p.add_argument("--source", default="max-degree", help="start vertex: an id, 'max-degree' (default) or 'random'")
    p.add_argument("--seed", type=int, default=0, help="seed of --source random (default 0)")


def _arc_limit(simulator: bool) -> int | None:
    from .. import backend

    return backend.SIMULATOR_MAX_ARCS if simulator or backend.simulator_requested() else None


def _vertex_text(graph, vertex: int) -> str:
    """A vertex as the user's file names it, with the remapped vertex beside it when they differ."""
    own = graph.to_original(vertex)
    return str(own) if own == vertex else f"{own} (vertex {vertex} after remapping the file's ids)"


def _wrap(text: str, indent: str = "    ") -> str:
    return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent)


# ------------------------------------------------------------------ backend

def select_backend(simulator: bool, out=print):
    """The simulator only when asked; without a GPU NoGPUError carries the way out."""
    from .. import backend

    info = backend.select("simulator" if simulator else "auto")
    out(f"backend: {info.describe()}")
    return info


def _no_gpu_message(err) -> str:
    return f"{err} From the command line: add --simulator."
