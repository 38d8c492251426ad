"""Command line: `bfs4k` or `python -m explorer`.

    bfs4k run bfs4k_fig2 --source 0 --simulator
    bfs4k run gen:grid2d:rows=20,cols=30 --technique bfs4k --knob K1=8 --simulator --json out.json --csv out.csv
    bfs4k demo --headless
    bfs4k warmup                      # compile everything once, before class
    bfs4k graphs | techniques | knobs
    bfs4k sssp GRAPH | apsp GRAPH     # weighted shortest paths (explorer/ui/cli_sssp.py)
    bfs4k many GRAPH --application betweenness --gpus all   # many searches, over GPUs (cli_many.py)

`run` needs neither Bokeh nor ipywidgets (the GPU machine has neither); only `demo` imports
them, lazily. Bad input ends with exit status 2 and one line `PROG: error: ...` on stderr (PROG as typed:
`bfs4k` or `python3 -m explorer`).
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from ..auto import AUTO, is_auto
from ..backend import simulator_knobs_note
from ..techniques import (Technique, TechniqueNotImplemented, implementation, implemented_techniques, knobs_of,
                          make_knobs, missing_techniques)
from .cli_input import (PROG, UsageError, _arc_limit, _vertex_text, _wrap, add_source_flags, check_output_flags,
                        check_output_path, check_source, load_graph_spec, parse_knob_values, select_backend,
                        write_result_files, _no_gpu_message)

EXIT_OK, EXIT_INVALID_RESULT, EXIT_USAGE = 0, 1, 2
DEMO_GRAPH = "bfs4k_fig2"  # the 10-vertex teaching graph: the demo finishes in seconds on the simulator
DEMO_REPORT = "bfs4k-report.html"
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "01_quickstart.ipynb"
LAB_HOST = "127.0.0.1"  # the demo's JupyterLab answers this machine only (reach it by an SSH tunnel)
LAB_PORT = 8888  # JupyterLab's usual port, when it is free


def simulator_knobs(technique, user_values: dict) -> dict:
    """The technique's block-size knobs the user did not set, at their simulator-friendly values."""
    return {k: v for k, v in implementation(technique).simulator_knobs.items() if k not in user_values}


class _Stdout:
    """sys.stdout while a command runs. Once its reader has gone (`bfs4k graphs | head -1`), output
    goes to devnull and the command goes on: not an error, and a run still writes the files it was
    asked for. (Python ignores SIGPIPE, so every later write would raise BrokenPipeError.)"""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        # The descriptor to devnull, so what is still buffered, and the interpreter's final
        # flush, go there instead of failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _closed_streams_to_devnull() -> None:
    """A standard output or error the caller closed (`bfs4k techniques >&-`; Python then has None
    for it) reads as /dev/null: what would go there is discarded, as for a reader that has gone,
    and no file opened later can take its descriptor and receive what is meant for the terminal."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)  # open: a file opened since took the descriptor; leave it alone
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        setattr(sys, name, open(os.devnull, "w"))


# ------------------------------------------------------------------ commands

def cmd_run(args) -> int:
    from .. import api
    from ..warmup import load_for_run

    check_output_flags(args, "distances and parents")
    check_source(args.source)
    say = lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True)  # noqa: E731
    if is_auto(args.technique):
        return _run(args, say, *_auto_choice(args, say))
    try:
        tech = Technique.parse(args.technique)
    except TechniqueNotImplemented:
        raise
    except ValueError as err:
        raise UsageError(f"{err}; or {AUTO} (the default: chosen for the graph)") from None
    knob_values = parse_knob_values(tech, args.knob)
    on_cpu = implementation(tech).runtimes == frozenset({"cpu"})
    # The simulator's size limit before a generator builds (and caches) a graph it would refuse.
    # On a GPU the run's kernels compile in helper processes meanwhile, when not yet in the disk cache.
    graph = load_for_run(
        lambda: load_graph_spec(args.graph, args.undirected, None if on_cpu else _arc_limit(args.simulator)),
        tech, knob_values, args.instrument, say, gpu=False if args.simulator else None)
    source = api.resolve_source(graph, args.source, args.seed)  # before the backend: input errors first
    if on_cpu:  # a CPU technique needs no GPU and no simulator
        from .. import backend

        info = backend.cpu_info()
        print(f"backend: the CPU ({info.device_name}): {tech.value} runs there")
    else:
        info = select_backend(args.simulator)
    if info.is_simulator and simulator_knobs(tech, knob_values):
        print(simulator_knobs_note(simulator_knobs(tech, knob_values)) + "; --knob overrides")
        knob_values = {**simulator_knobs(tech, knob_values), **knob_values}
    return _run(args, say, graph, source, tech, make_knobs(tech, knob_values))


def _auto_choice(args, say):
    """(graph, source, "auto", None) for cmd_run's technique "auto": the graph loaded, then the
    backend selected (with no GPU and no --simulator, auto chooses among the CPU techniques)."""
    from .. import api, backend
    from ..warmup import compile_notices

    if args.knob:
        raise UsageError("--technique auto chooses its own knobs: name a technique to set --knob")
    with compile_notices(say):
        graph = load_graph_spec(args.graph, args.undirected, _arc_limit(args.simulator))
    source = api.resolve_source(graph, args.source, args.seed)
    if args.simulator or backend.simulator_requested() or backend.gpu_present()[0]:
        select_backend(args.simulator)
    return graph, source, "auto", None


def _run(args, say, graph, source, tech, knobs) -> int:
    from .. import api
    from . import report
    from ..reference import check_result
    from ..warmup import compile_notices

    run = api.run_bfs(graph, api.Vertex(source), tech, knobs, instrument=args.instrument, on_status=say)
    if run.choice is not None:
        print(run.choice.reason())
    kind = "directed" if graph.directed else "undirected"
    print(f"graph: {graph.name}: {graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs ({kind}); "
          f"source {_vertex_text(graph, source)}; technique {run.technique.value}; "
          f"instrumentation {'on' if args.instrument else 'off'}")
    printer = report.LevelTablePrinter(write=lambda s: print(s, flush=True), extras=run.impl.extras)
    printer.header()
    for level in run:  # rows appear as levels complete
        printer.row(level)
    result = run.result

    status = EXIT_OK
    if args.validate:
        with compile_notices(say):  # the reference compiles once per environment, too
            rep = check_result(graph, result)
        result.validation = "ok" if rep.ok else rep.rule
        if not rep.ok:
            print(f"{PROG}: validation FAILED: [{rep.rule}] {rep.message}", file=sys.stderr)
            status = EXIT_INVALID_RESULT
    print()
    print(report.format_summary(result))
    write_result_files(args, result)
    return status


def cmd_calibrate(args) -> int:
    from ..auto import calibrate as cal
    from ..auto.candidates import CANDIDATES, by_name
    from ..auto.model import Calibration, user_path

    info = select_backend(args.simulator)
    if info.is_simulator and not args.out:
        raise UsageError("calibrate --simulator needs --out: auto never reads a simulator's times")
    out = Path(args.out) if args.out else user_path(info.device_name)
    if args.out:
        check_output_path(args.out, "--out", make_parents=True)
    candidates = tuple(by_name(n) for n in args.candidate) if args.candidate else CANDIDATES
    ladder = cal.SMOKE_LADDER if args.smoke else cal.LADDER
    resume = None
    if args.resume:
        if not out.is_file():
            raise UsageError(f"--resume: there is no calibration at {out} to go on with")
        resume = Calibration.load(out)
    print(f"calibrating auto on {info.describe()}: {len(candidates)} candidates on {len(ladder)} graphs, "
          f"{args.repeats} runs each" + (f"; the first {len(resume.graphs)} kept from {out}" if resume else ""))
    # Saved after every graph: an interrupted calibration keeps the graphs it measured (--resume goes on).
    result = cal.calibrate(ladder, candidates, repeats=args.repeats, after_graph=lambda c: c.save(out), resume=resume)
    for i, g in enumerate(result.graphs):
        ts = {name: t[i] for name, t in result.times.items() if t[i] is not None}
        best = min(ts, key=ts.get) if ts else None
        print(f"  {g['name']:>14}: " + (f"{best} {ts[best]:.4g} ms" if best else "nothing could run"))
    result.save(out)
    print(f"written to {out}" + ("" if args.out else ": auto reads it on this GPU from now on"))
    return EXIT_OK


def _missing(*modules: str) -> list[str]:
    import importlib.util

    return [m for m in modules if importlib.util.find_spec(m) is None]


def cmd_demo(args) -> int:
    if not args.headless:
        return _open_notebook()
    # Both before minutes of BFS. The path first: it is what was typed, so its error is the same on
    # every machine (the check creates nothing).
    check_output_path(args.out, "--out", make_parents=True)
    if _missing("bokeh"):
        raise UsageError("demo --headless writes its report with Bokeh, which is not installed: "
                         f"pip install 'bfs4k-explorer[notebook]' (`{PROG} run ... --json/--csv` needs no Bokeh)")
    from .. import api, backend
    from . import report
    from ..graphs import graph_stats
    from ..reference import bfs_distances, check_result
    from ..warmup import compile_notices

    simulator = args.simulator
    if not simulator and not backend.simulator_requested():
        ok, why = backend.gpu_present()
        if not ok:
            # The demo is what CI and new users run: fall back, and say so plainly.
            print(f"No CUDA GPU detected ({why}): running the demo on Numba's CUDA simulator "
                  "(CPU) instead. Its timings are not GPU timings.")
            simulator = True
    info = select_backend(simulator)
    with compile_notices(lambda m: print(f"  ... {m}", flush=True)):
        graph = load_graph_spec(args.graph, max_arcs=_arc_limit(simulator))
    techs = [Technique.parse(t) for t in args.technique] if args.technique else implemented_techniques()
    # One run per technique from the graph's vertex 0, then one from the max-degree vertex, so the
    # report shows runs overlaid.
    plan = [(t, api.Vertex(0)) for t in techs] + [(techs[0], "max-degree")]
    results = []
    expected_cache = {}
    for i, (tech, src) in enumerate(plan, 1):
        knobs = simulator_knobs(tech, {}) if info.is_simulator else {}
        if knobs and (tech, src) == plan[0]:
            print(simulator_knobs_note(knobs))
        run = api.run_bfs(graph, src, tech, knobs, on_status=lambda m: print(f"  ... {m}", flush=True))
        where = f"vertex {_vertex_text(graph, src.vertex)}" if isinstance(src, api.Vertex) else f"the {src} vertex"
        print(f"\nrun {i}: {tech.value} from {where} on {graph.name}")
        res = run.complete()
        if res.source not in expected_cache:
            expected_cache[res.source] = bfs_distances(graph, res.source)
        rep = check_result(graph, res, expected=expected_cache[res.source])
        res.validation = "ok" if rep.ok else rep.rule
        print(report.format_level_table(res))
        print(f"levels {res.num_levels}, reached {res.reached:,}, validation {res.validation}")
        results.append((report.default_label(i, res), res))
    path = report.write_report(results, args.out, graph_stats={graph.name: graph_stats(graph)},
                               title=f"BFS-4K Explorer demo: {graph.name}")
    print(f"\nreport written to {Path(path).resolve()}")
    return EXIT_OK if all(r.validation == "ok" for _, r in results) else EXIT_INVALID_RESULT


def _open_notebook() -> int:
    if not NOTEBOOK.exists():
        raise UsageError(f"the quickstart notebook is not at {NOTEBOOK} (install from a source checkout); "
                         f"`{PROG} demo --headless` works without it")
    if _missing("jupyterlab", "jupyter_bokeh", "ipywidgets") or shutil.which("jupyter") is None:
        raise UsageError("JupyterLab is not installed: pip install 'bfs4k-explorer[notebook]' "
                         f"(or run `{PROG} demo --headless` for an HTML report)")
    port = free_port(LAB_HOST, LAB_PORT)
    token = secrets.token_hex(24)  # given through the environment, so `ps` does not show it
    print(f"opening {NOTEBOOK} in JupyterLab (Ctrl-C to stop); it listens on {LAB_HOST} only, at\n"
          f"  {lab_url(NOTEBOOK, port, token)}", flush=True)
    return subprocess.call(jupyter_lab_argv(NOTEBOOK, port, as_root=_is_root()),
                           env={**os.environ, "JUPYTER_TOKEN": token})


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def jupyter_lab_argv(notebook: Path, port: int, as_root: bool) -> list[str]:
    """The JupyterLab command line of `demo`: on localhost, on exactly `port` (so the URL printed
    is right), and allowed to run as root, which containers and cloud notebooks often are (Jupyter
    refuses root without --allow-root)."""
    argv = ["jupyter", "lab", f"--ServerApp.ip={LAB_HOST}", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0"]
    if as_root:
        argv.append("--allow-root")
    return [*argv, str(notebook)]


def lab_url(notebook: Path, port: int, token: str) -> str:
    """Where `jupyter_lab_argv`'s server shows the notebook (its folder is the server's root)."""
    return f"http://{LAB_HOST}:{port}/lab/tree/{Path(notebook).name}?token={token}"


def free_port(host: str, preferred: int) -> int:
    """`preferred` if nothing listens there, else a port the system says is free."""
    for port in (preferred, 0):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise UsageError(f"no free TCP port on {host} for JupyterLab")


def cmd_warmup(args) -> int:
    import time

    from tqdm import tqdm

    from .. import backend, warmup

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs} is invalid: give 1 or more processes")
    simulator = args.simulator or backend.simulator_requested()
    gpu, why = (False, "") if simulator else backend.gpu_present()
    mode = "gpu" if gpu else "simulator" if simulator else "cpu"
    planned = warmup.plan(mode)
    units = warmup.todo(planned, mode)
    where = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside the sources"
    if not units:
        print(f"warmup: everything is ready: all {len(planned)} units are in Numba's disk cache ({where}); "
              "nothing to compile", flush=True)
        return EXIT_OK
    jobs = args.jobs or warmup.default_jobs(len(units))
    what = ("the graph loaders, the CPU techniques and every kernel variant the presets use" if gpu else
            "the graph loaders and the CPU techniques")
    print(f"warmup: compiling {what}, once for this environment, in {jobs} processes; Numba keeps them in "
          f"its disk cache ({where})", flush=True)
    cached = f"; {len(planned) - len(units)} of {len(planned)} already in the disk cache" if len(units) < len(planned) else ""
    print(f"warmup: {len(units)} units to compile{cached}; {warmup.expected(units, jobs).describe()}", flush=True)
    if mode == "simulator":
        print("simulator: the CUDA kernels run as Python there and need no compiling", flush=True)
    elif mode == "cpu":
        print(f"no CUDA GPU ({why}): the CUDA kernels compile on a GPU (the simulator needs none)", flush=True)
    bar = tqdm(total=len(units), desc="warmup", unit="unit", file=sys.stderr, dynamic_ncols=True)

    def progress(done, k, n):
        bar.set_postfix_str(done.unit.label, refresh=False)
        bar.update(1)
        if done.error:
            bar.write(f"{PROG} warmup: {done.unit.label} failed: {done.error}", file=sys.stderr)

    start = time.perf_counter()
    try:
        results = warmup.warm(units, mode, jobs, progress)
    finally:
        bar.close()
    failed = [d for d in results if d.error]
    print(f"warmup: {len(results) - len(failed)} of {len(results)} units ready in {time.perf_counter() - start:.1f} s"
          f"{f', {len(failed)} failed (above)' if failed else ''}; later runs in this environment load them "
          "from the disk cache", flush=True)
    return EXIT_OK if not failed else EXIT_INVALID_RESULT


def cmd_graphs(args) -> int:
    from .. import graphs

    print("Sample graphs (give the name to `run`):")
    width = max(len(k) for k in graphs.SAMPLE_GRAPHS)
    for name, info in graphs.SAMPLE_GRAPHS.items():
        kind = "directed" if info.directed else "undirected"
        print(f"  {name.ljust(width)}  {info.family}; {kind}; {info.file}")
    print("\nGenerators (give gen:KIND:param=value,... to `run`; unlisted parameters keep their defaults):")
    for kind, spec in graphs.GENERATORS.items():
        params = ",".join(f"{k}={v}" for k, v in spec.params.items())
        print(f"  gen:{kind}:{params}")
        print(_wrap(spec.description, "      "))
    print("\nGraph files: SNAP edge lists (.txt, .el, .edges), Matrix Market (.mtx), METIS (.graph, .metis), "
          "optionally .gz.")
    return EXIT_OK


def cmd_techniques(args) -> int:
    from .. import auto

    print(f"  {AUTO}")
    print(_wrap(auto.DOC, "      "))
    print("Implemented:")
    for t in implemented_techniques():
        print(f"  {t.value}")
        print(_wrap(t.doc, "      "))
    missing = missing_techniques()
    if missing:
        print("\nDeclared, not implemented yet (`run` refuses them):")
        for t in missing:
            print(f"  {t.value}")
            print(_wrap(t.doc, "      "))
    return EXIT_OK


def cmd_knobs(args) -> int:
    techs = [Technique.parse(args.technique)] if args.technique else implemented_techniques()
    for t in techs:
        specs = knobs_of(t).specs()
        print(f"Knobs of {t.value} (set with --technique {t.value} --knob NAME=VALUE):" if specs else
              f"{t.value} has no knobs.")
        for s in specs:
            where = f"; {s.section}" if s.section else ""
            print(f"  {s.name}  default {s.default!r}; {s.describe_range()}{where}")
            print(_wrap(s.meaning, "      "))
        print()
    return EXIT_OK


# ------------------------------------------------------------------ argument parser

def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=fmt,
        description="BFS-4K Explorer: run GPU breadth-first search level by level and look at each level.",
        epilog=textwrap.dedent(f"""\
            examples:
              {PROG} run bfs4k_fig2 --source 0 --simulator
              {PROG} run gen:grid2d:rows=20,cols=30 --knob block_threads=128 --simulator --json out.json
              {PROG} demo --headless            # HTML report of a small demo
              {PROG} warmup                     # compile loaders and kernels once, before class
              {PROG} graphs | techniques | knobs
              {PROG} sssp gen:grid2d:rows=20,cols=30,weights=integer --simulator   # shortest paths
              {PROG} many bfs4k_fig2 --application betweenness --simulator --gpus 2   # many searches, 2 workers
            Run `{PROG} COMMAND --help` for a command's options."""))
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    techs = ", ".join(t.value for t in implemented_techniques())
    r = sub.add_parser(
        "run", formatter_class=fmt, help="run one BFS and print the per-level table",
        description="Run one BFS, print a row per level as it completes, then the summary and validation.",
        epilog=textwrap.dedent(f"""\
            GRAPH is a sample graph name (`{PROG} graphs`), a graph file (.txt/.el/.edges SNAP edge
            list, .mtx Matrix Market, .graph METIS, optionally .gz) or gen:KIND:param=value,...
            examples:
              {PROG} run bfs4k_fig2 --source 0 --simulator
              {PROG} run my_edges.txt --undirected --source random --seed 3 --simulator
              {PROG} run gen:kronecker:scale=10,edge_factor=8 --technique bfs4k --knob K1=8 --simulator --csv levels.csv
            Leave --simulator out to run on a GPU."""))
    r.add_argument("graph", metavar="GRAPH", help="sample name, graph file or gen:KIND:param=value,...")
    add_source_flags(r)
    r.add_argument("--technique", default=AUTO,
                   help=f"BFS technique (default %(default)s: chosen for the graph and the device by a cost "
                        f"model calibrated on a GPU, the reason printed; `{PROG} calibrate` measures yours); "
                        f"implemented: {techs}; see `{PROG} techniques`")
    r.add_argument("--knob", action="append", metavar="NAME=VALUE",
                   help=f"set a knob of the technique, repeatable (e.g. --knob K1=8); see `{PROG} knobs`")
    r.add_argument("--no-instrument", dest="instrument", action="store_false",
                   help="skip the per-level counters (edges, duplicates): time only")
    r.add_argument("--simulator", action="store_true",
                   help="run on Numba's CUDA simulator (CPU; graphs up to 200,000 arcs) instead of a GPU: "
                        "every GPU thread is a Python thread, so a run takes seconds on a graph of a few "
                        "thousand arcs and a minute or more for bfs4k near the limit; block-size knobs you "
                        "do not set become 32 there (1,024-thread blocks would take minutes on any graph)")
    r.add_argument("--undirected", action="store_true",
                   help="read the graph file as undirected (each line is an edge both ways)")
    r.add_argument("--no-validate", dest="validate", action="store_false",
                   help="skip checking the result against the CPU reference BFS")
    r.add_argument("--json", metavar="PATH", help="write summary and levels as JSON")
    r.add_argument("--arrays", action="store_true", help="with --json: include distances and parents")
    r.add_argument("--csv", metavar="PATH", help="write the per-level table as CSV")
    r.set_defaults(func=cmd_run)

    d = sub.add_parser(
        "demo", formatter_class=fmt, help="open the quickstart notebook, or --headless: write an HTML report",
        description=f"Without --headless: open notebooks/01_quickstart.ipynb in JupyterLab.\n"
                    f"With --headless: run the quickstart demo on the small sample graph {DEMO_GRAPH} and write\n"
                    "a self-contained HTML report. Without a GPU the headless demo uses the CUDA simulator\n"
                    "and says so.")
    d.add_argument("--headless", action="store_true", help="no Jupyter: run and write an HTML report")
    d.add_argument("--out", default=DEMO_REPORT, metavar="PATH", help="report path (default ./%(default)s)")
    d.add_argument("--graph", default=DEMO_GRAPH, metavar="GRAPH",
                   help="sample name, file or gen:KIND:... (default %(default)s)")
    d.add_argument("--technique", action="append", metavar="NAME",
                   help="technique to run, repeatable (default: every implemented one)")
    d.add_argument("--simulator", action="store_true",
                   help="use the CUDA simulator even if a GPU is present")
    d.set_defaults(func=cmd_demo)

    w = sub.add_parser(
        "warmup", formatter_class=fmt, help="compile the graph loaders and every kernel the presets use, once",
        description="Compile, once for this environment, what a first run would compile: the graph loaders\n"
                    "(each file format, the generators), the CPU reference and, for every technique, the kernel\n"
                    "variants its defaults, its simulator knobs, the settings auto may choose and the Explorer's\n"
                    "presets (BFS-4K's section 7 advice) use, with and without instrumentation. Numba keeps them in its disk cache, so a\n"
                    "later first run starts at once: run it before class. Under the simulator the kernels\n"
                    "need no compiling (they run as Python); the loaders and CPU techniques still do.")
    w.add_argument("--simulator", action="store_true",
                   help="compile for the simulator (loaders and CPU techniques only) even if a GPU is present")
    w.add_argument("--jobs", type=int, metavar="N",
                   help="processes compiling side by side (default: one per CPU core)")
    w.set_defaults(func=cmd_warmup)

    c = sub.add_parser(
        "calibrate", formatter_class=fmt, help="time auto's candidates on this GPU (a few minutes)",
        description="Time every configuration `--technique auto` chooses among on a ladder of generated\n"
                    "graphs on this GPU, and store the times in the cache directory under the GPU's name,\n"
                    "where auto reads them from then on (until then it uses the calibration shipped for\n"
                    "this GPU, or the H100's). Every result is checked against the CPU reference.")
    c.add_argument("--repeats", type=int, default=5, metavar="N", help="timed runs a configuration (default 5)")
    c.add_argument("--candidate", action="append", metavar="NAME", help="only this configuration, repeatable")
    c.add_argument("--smoke", action="store_true", help="three graphs of tens of vertices (to try the command)")
    c.add_argument("--simulator", action="store_true", help="on the CUDA simulator (needs --out; auto never reads it)")
    c.add_argument("--out", metavar="PATH", help="write here instead of the cache directory")
    c.add_argument("--resume", action="store_true",
                   help="go on with the interrupted calibration at the output path (saved after every graph): "
                        "the graphs it holds are kept, the rest measured (the same GPU, candidates and ladder)")
    c.set_defaults(func=cmd_calibrate)

    sub.add_parser("graphs", help="list sample graphs and generators",
                   description="List the sample graphs, the generators with their parameters, and file formats."
                   ).set_defaults(func=cmd_graphs)
    sub.add_parser("techniques", help="list implemented and missing techniques",
                   description="List the BFS techniques with their documentation."
                   ).set_defaults(func=cmd_techniques)
    k = sub.add_parser("knobs", help="list each technique's knobs with meaning, range, default and paper section",
                       description="List each technique's knobs: default, valid range, paper section and meaning.")
    k.add_argument("--technique", metavar="NAME", help="only this technique's knobs")
    k.set_defaults(func=cmd_knobs)
    from .cli_sssp import add_parsers  # sssp and apsp: weighted shortest paths

    add_parsers(sub, fmt)
    from .cli_many import add_parser as add_many  # many searches at once, over Dask workers with --gpus

    add_many(sub, fmt)
    return p


def main(argv: list[str] | None = None) -> int:
    from ..backend import BackendError, NoGPUError

    _closed_streams_to_devnull()
    args = build_parser().parse_args(argv)
    stdout, sys.stdout = sys.stdout, _Stdout(sys.stdout)
    try:
        status = args.func(args)
        sys.stdout.flush()  # what is buffered, while a reader that has gone is still handled
        return status
    except NoGPUError as err:
        print(f"{PROG}: error: {_no_gpu_message(err)}", file=sys.stderr)
    except (ValueError, NotImplementedError, BackendError, OSError) as err:
        # KnobError, GraphError, TechniqueNotImplemented and bad sources all land here: one line.
        print(f"{PROG}: error: {err}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
