"""The command line: a run prints the level table and writes JSON/CSV; every bad input is one line."""
import csv
import importlib.util
import json
import re
import shutil
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import backend, graphs
from explorer.ui import cli
from explorer.stats import LEVEL_FIELDS
from explorer.techniques import missing_techniques

# conftest.py chose the backend for this process; --simulator is only valid when it is the simulator.
SIM = ["--simulator"] if backend.current().is_simulator else []
GPU = backend.gpu_present()[0]


def run_cli(capsys, *args):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def clean_env(**extra):
    """The environment of a fresh user shell: no simulator requested."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(extra)
    return env


PYTHON_M = f"{os.path.basename(sys.executable)} -m explorer"  # the program's name in its messages


def bfs4k(*args, cwd, umask=None, timeout=300):
    """`python3 -m explorer ARGS` in a fresh process, as a user runs it (under `umask` if given)."""
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                          env=clean_env(), timeout=timeout, cwd=cwd,
                          preexec_fn=None if umask is None else (lambda: os.umask(umask)))


def test_run_prints_the_level_table_and_writes_json_and_csv(tmp_path, capsys):
    j, c = tmp_path / "run.json", tmp_path / "levels.csv"
    code, out, err = run_cli(capsys, "run", "bfs4k_fig2", "--source", "0", "--technique", "topdown-queue", *SIM,
                             "--json", str(j), "--csv", str(c))
    assert code == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["level", "frontier_in"])
    rows = [dict(zip(lines[header].split(), line.split())) for line in lines[header + 1:header + 5]]
    # teaching graph from vertex 0: F0={0}, F1={1,2,3}, F2={4,5,6,8}, F3={7,9}
    assert [[r["level"], r["frontier_in"], r["discovered"]] for r in rows] == \
        [["0", "1", "3"], ["1", "3", "4"], ["2", "4", "2"], ["3", "2", "0"]]
    assert re.search(r"^validation\s+ok$", out, re.M)

    doc = json.loads(j.read_text())
    assert doc["summary"]["levels"] == 4 and doc["summary"]["validation"] == "ok"
    assert [lv["frontier_in"] for lv in doc["levels"]] == [1, 3, 4, 2]
    with c.open() as f:
        reader = csv.DictReader(f)
        table = list(reader)
    assert tuple(reader.fieldnames) == LEVEL_FIELDS and len(table) == 4


def test_run_without_instrumentation_and_with_a_generator(capsys):
    code, out, err = run_cli(capsys, "run", "gen:grid2d:rows=3,cols=4", "--source", "0", "--no-instrument",
                             "--technique", "topdown-queue", "--knob", "block_threads=32", *SIM)
    assert code == 0, err
    assert "grid2d_3x4" in out and re.search(r"^duplicates\s+not measured$", out, re.M)


@pytest.mark.skipif(not SIM, reason="simulator only")
def test_simulator_uses_small_blocks_unless_told_otherwise(capsys):
    code, out, err = run_cli(capsys, "run", "bfs4k_fig2", "--technique", "bfs4k", "--knob", "K6=64", *SIM)
    assert code == 0, err
    assert "simulator: using 32-thread blocks (single_block_threads=32)" in out
    assert re.search(r"^knobs\s+K6=64, single_block_threads=32$", out, re.M)


def _bad_edge_file(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("0 1\n1 2\n2 x3\n")
    return str(p)


BAD_INPUTS = [
    (["bfs4k_fig2", "--technique", "nope"], "unknown technique 'nope'"),
    (["bfs4k_fig2", "--technique", missing_techniques()[0].value if missing_techniques() else "nope"],
     "not implemented yet" if missing_techniques() else "unknown technique"),
    (["bfs4k_fig2", "--technique", "bfs4k", "--knob", "K3=5000"], "knob K3=5000 is out of range: int in [1, 1024]"),
    (["bfs4k_fig2", "--technique", "bfs4k", "--knob", "K1=3"], "one of 1, 2, 4, 8, 16, 32"),
    (["bfs4k_fig2", "--technique", "topdown-queue", "--knob", "K9=1"], "unknown knob 'K9'"),
    (["bfs4k_fig2", "--knob", "block_threads=32"], "--technique auto chooses its own knobs"),
    (["bfs4k_fig2", "--technique", "bfs4k", "--knob", "K3=many"], "knob K3='many' is invalid"),
    (["bfs4k_fig2", "--technique", "bfs4k", "--knob", "K3"], "expected NAME=VALUE"),
    (["bfs4k_fig2", "--technique", "bfs4k", "--knob", "hash_entries=3"], "power of two"),
    (["{tmp}/missing.txt"], "missing.txt: no such file"),
    (["{bad}"], "line 3: malformed edge line '2 x3'"),
    (["no_such_sample"], "neither a sample graph nor an existing file"),
    (["bfs4k_fig2", "--source", "10"], "source vertex 10 is out of range"),
    (["bfs4k_fig2", "--source", "-1"], "out of range"),
    (["bfs4k_fig2", "--source", "somewhere"], "source 'somewhere' is invalid"),
    (["gen:nope"], "unknown generator 'nope'"),
    (["gen:grid2d:depth=3"], "has no parameter 'depth'"),
    (["gen:grid2d:rows=three"], "rows='three' is invalid: expected an integer"),
    (["gen:grid2d:rows=0"], "rows, cols must be >= 1"),
    (["bfs4k_fig2", "--source", "²"], "--source '²' is invalid: give a vertex id (an integer"),
    (["bfs4k_fig2", "--source", "٣"], "--source '٣' is invalid"),
    (["bfs4k_fig2", "--arrays"], "--arrays adds distances and parents to the JSON file: give --json PATH too"),
    (["{tmp}/locked/g.txt"], "locked/g.txt: cannot read: Permission denied"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, capsys, monkeypatch, args, message):
    args = [a.format(tmp=tmp_path, bad=_bad_edge_file(tmp_path)) for a in args]
    locked = str(tmp_path / "locked") + os.sep
    real_stat = os.stat

    def stat_refusing_locked(path, *a, **k):  # a folder that cannot be searched, even by root
        if os.fspath(path).startswith(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat_refusing_locked)
    code, out, err = run_cli(capsys, "run", *args, *SIM)
    assert code == 2
    # A fresh environment first says that it compiles the loaders (once); then the one error line.
    err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("  ... compiling"))
    assert err.count("\n") == 1 and err.startswith("bfs4k: error: "), err
    assert message in err
    assert "Traceback" not in err + out


@pytest.mark.skipif(GPU, reason="a GPU is present")
@pytest.mark.skipif(not SIM, reason="no GPU only")
def test_without_gpu_a_gpu_technique_needs_simulator_flag_and_auto_takes_the_cpu():
    p = subprocess.run([sys.executable, "-m", "explorer", "run", "bfs4k_fig2", "--technique", "bfs4k"],
                       capture_output=True, text=True, env=clean_env(), timeout=120)
    assert p.returncode == 2
    assert "No CUDA GPU is available" in p.stderr and "--simulator" in p.stderr
    assert p.stderr.count("\n") == 1
    p = subprocess.run([sys.executable, "-m", "explorer", "run", "bfs4k_fig2"], capture_output=True, text=True,
                       env=clean_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^auto: cpu-\S+ .*no GPU and no simulator: the CPU techniques$", p.stdout, re.M)
    assert re.search(r"^validation\s+ok$", p.stdout, re.M)


def test_run_needs_neither_bokeh_nor_ipywidgets(tmp_path):
    # The GPU machine has neither: the run path must not import them.
    code = ("import sys; from explorer.ui import cli; rc = cli.main(['run', 'bfs4k_fig2', '--simulator']); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('bokeh', 'ipywidgets', 'jupyter_bokeh')]; "
            "print('IMPORTED', bad); sys.exit(rc)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(),
                       timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "IMPORTED []" in p.stdout


def test_demo_headless_writes_a_report_and_says_which_backend(tmp_path):
    pytest.importorskip("bokeh", reason="the report is drawn with Bokeh")
    out = tmp_path / "demo.html"
    p = bfs4k("demo", "--headless", "--out", str(out), cwd=tmp_path, umask=0o027)
    assert p.returncode == 0, p.stderr
    if not GPU:
        assert "No CUDA GPU detected" in p.stdout and "simulator" in p.stdout
    assert f"report written to {out}" in p.stdout
    html = out.read_text(encoding="utf-8")
    assert "Frontier size per level" in html and "bfs4k_fig2" in html
    # The report's mode is what the umask gives (not 0600).
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


# ------------------------------------------------------------------ CLI fit and finish

def test_files_the_user_asks_for_get_the_mode_the_umask_gives(tmp_path):
    # JSON and CSV get the mode the umask gives, not mkstemp's 0600.
    p = bfs4k("run", "bfs4k_fig2", "--source", "0", "--simulator", "--json", "r.json", "--csv", "r.csv",
              cwd=tmp_path, umask=0o022)
    assert p.returncode == 0, p.stderr
    assert {n: stat.S_IMODE((tmp_path / n).stat().st_mode) for n in ("r.json", "r.csv")} == \
        {"r.json": 0o644, "r.csv": 0o644}
    assert sorted(q.name for q in tmp_path.iterdir()) == ["r.csv", "r.json"]  # no temporary left


def test_the_demo_report_is_ignored_by_git():
    # `demo --headless` writes ./bfs4k-report.html, the notebook quickstart-report.html.
    ignored = (Path(__file__).resolve().parent.parent / ".gitignore").read_text().splitlines()
    assert cli.DEMO_REPORT in ignored and "quickstart-report.html" in ignored


def test_counts_not_measured_are_a_dash_on_screen_and_an_empty_csv_cell(tmp_path):
    # With --no-instrument the counts not measured are empty cells, never -1.
    p = bfs4k("run", "bfs4k_fig2", "--source", "0", "--technique", "topdown-queue", "--simulator",
              "--no-instrument", "--csv", "r.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["level", "frontier_in"])
    cells = dict(zip(lines[header].split(), lines[header + 1].split()))
    assert cells["dup_generated"] == cells["edges_examined"] == "–"
    with (tmp_path / "r.csv").open() as f:
        first = next(csv.DictReader(f))
    assert first["dup_generated"] == first["edges_examined"] == "" and first["frontier_in"] == "1"


OUTPUT_PATHS = [
    (["run", "bfs4k_fig2", "--json", "/nonexistent/x.json"],
     "--json /nonexistent/x.json: the directory /nonexistent does not exist"),
    (["run", "bfs4k_fig2", "--csv", "{tmp}/afile/x.csv"], "--csv {tmp}/afile/x.csv: the directory {tmp}/afile "
                                                         "is not a directory"),
    (["run", "bfs4k_fig2", "--json", "{tmp}"], "--json {tmp}: is a directory; give a file name"),
    (["demo", "--headless", "--out", "{tmp}/afile/sub/report.html"],
     "--out {tmp}/afile/sub/report.html: the directory {tmp}/afile is not a directory"),
]


@pytest.mark.parametrize("args,message", OUTPUT_PATHS, ids=[" ".join(a) for a, _ in OUTPUT_PATHS])
def test_output_paths_are_checked_before_the_bfs_runs(tmp_path, args, message):
    # `--json /nonexistent/x.json` fails before the BFS runs, not after it.
    (tmp_path / "afile").write_text("")
    p = bfs4k(*[a.format(tmp=tmp_path) for a in args], "--simulator", cwd=tmp_path, timeout=120)
    assert (p.returncode, p.stderr, p.stdout) == (2, f"{PYTHON_M}: error: {message.format(tmp=tmp_path)}\n", "")


def test_errors_name_the_program_as_it_was_typed(tmp_path):
    # `python3 -m explorer` is not `bfs4k` (argparse alone would say `__main__.py`)
    p = bfs4k("run", "no-such-graph", cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and p.stderr.startswith(f"{PYTHON_M}: error: graph 'no-such-graph'"), p.stderr
    script = shutil.which("bfs4k", path=os.path.dirname(sys.executable)) or shutil.which("bfs4k")
    if script is None:
        pytest.skip("the bfs4k script is not installed (pip install -e . puts it beside python3)")
    p = subprocess.run([script, "run", "no-such-graph"], capture_output=True, text=True, env=clean_env(),
                       timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.startswith("bfs4k: error: graph 'no-such-graph'"), p.stderr


def test_the_shortest_path_commands_help_names_the_program_as_it_was_typed(tmp_path):
    for command in ("sssp", "apsp"):
        p = bfs4k(command, "--help", cwd=tmp_path, timeout=120)
        assert p.returncode == 0 and f"\n  {PYTHON_M} {command} " in p.stdout and " bfs4k " not in p.stdout, p.stdout


def test_an_output_directory_that_is_not_writable_is_refused(tmp_path, monkeypatch, capsys):
    # (In-process: root may write anywhere, so a read-only folder cannot show this under root.)
    monkeypatch.setattr(cli.os, "access", lambda path, mode: Path(path) != tmp_path)
    code, out, err = run_cli(capsys, "run", "bfs4k_fig2", "--csv", str(tmp_path / "x.csv"), *SIM)
    assert (code, out) == (2, "") and err == f"bfs4k: error: --csv {tmp_path}/x.csv: the directory {tmp_path} " \
                                            "is not writable\n"


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("args", [["graphs"], ["run", "bfs4k_fig2", "--source", "0", "--simulator", "--csv", "r.csv"]],
                         ids=["graphs", "run"])
def test_a_reader_that_leaves_early_is_not_an_error(tmp_path, args, unbuffered):
    # `bfs4k graphs | head -1` must not print "Broken pipe" and exit 2. Here the reader has gone
    # before anything is written, so every write meets the closed pipe.
    p = subprocess.Popen([sys.executable, "-m", "explorer", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=clean_env(PYTHONUNBUFFERED=unbuffered), cwd=tmp_path)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert "error" not in err.lower() and "Broken pipe" not in err and "Traceback" not in err, err
    if args[0] == "run":
        assert (tmp_path / "r.csv").exists()  # the run went on and wrote the file it was asked for


def test_demo_runs_jupyterlab_on_localhost_and_allows_root():
    # As root, Jupyter refuses to start ("Running as root is not recommended") unless told.
    argv = cli.jupyter_lab_argv(cli.NOTEBOOK, 8899, as_root=True)
    assert argv[:2] == ["jupyter", "lab"] and argv[-1] == str(cli.NOTEBOOK)
    assert {"--allow-root", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=8899",
            "--ServerApp.port_retries=0"} <= set(argv)
    assert "--allow-root" not in cli.jupyter_lab_argv(cli.NOTEBOOK, 8899, as_root=False)


def test_demo_prints_the_url_jupyterlab_listens_on(capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "_missing", lambda *modules: [])
    monkeypatch.setattr(cli.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(cli, "_is_root", lambda: True)
    monkeypatch.setattr(cli.subprocess, "call", lambda argv, env: calls.append((argv, env)) or 0)
    code, out, err = run_cli(capsys, "demo")
    assert code == 0, err
    (argv, env), = calls
    assert "--allow-root" in argv
    port = next(a for a in argv if a.startswith("--ServerApp.port=")).partition("=")[2]
    token = env["JUPYTER_TOKEN"]
    assert len(token) >= 32 and token not in " ".join(argv)  # not shown to other users by `ps`
    assert f"http://127.0.0.1:{port}/lab/tree/01_quickstart.ipynb?token={token}" in out


def test_demo_takes_another_port_when_jupyterlabs_usual_one_is_busy():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        port = cli.free_port("127.0.0.1", taken)
    assert port != taken and port > 0


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.usefixtures("in_tmp")
def test_demo_default_report_path(capsys):
    pytest.importorskip("bokeh", reason="the report is drawn with Bokeh")
    code, out, err = run_cli(capsys, "demo", "--headless", "--technique", "topdown-queue", *SIM)
    assert code == 0, err
    written = out.strip().splitlines()[-1].removeprefix("report written to ")
    assert written == os.path.join(os.getcwd(), "bfs4k-report.html")  # ./bfs4k-report.html
    assert os.path.exists(written)


def test_listings(capsys):
    code, out, _ = run_cli(capsys, "graphs")
    assert code == 0 and "bfs4k_fig2" in out and "gen:grid2d:rows=300,cols=300" in out
    code, out, _ = run_cli(capsys, "techniques")
    assert code == 0 and "topdown-queue" in out and "Busato" in out
    for t in missing_techniques():
        assert t.value in out
    code, out, _ = run_cli(capsys, "knobs")
    assert code == 0 and "K1  default 4; one of 1, 2, 4, 8, 16, 32; BFS-4K §5.2" in out


@pytest.mark.parametrize("args", [[], ["run"], ["demo"], ["graphs"], ["techniques"], ["knobs"], ["many"]])
def test_help_at_every_level(capsys, args):
    with pytest.raises(SystemExit) as e:
        cli.main([*args, "--help"])
    assert e.value.code == 0
    assert "usage: bfs4k" in capsys.readouterr().out


def test_headless_demo_without_bokeh_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_missing", lambda *mods: ["bokeh"])  # as on the GPU machine
    monkeypatch.chdir(tmp_path)  # the default --out, checked first, is in a writable directory
    code, out, err = run_cli(capsys, "demo", "--headless")
    assert code == 2 and "Bokeh, which is not installed: pip install 'bfs4k-explorer[notebook]'" in err


def test_headless_demo_checks_its_output_path_before_bokeh(tmp_path, capsys, monkeypatch):
    # The GPU machine has no Bokeh: a bad --out was reported as Bokeh missing, unlike everywhere else.
    monkeypatch.setattr(cli, "_missing", lambda *mods: ["bokeh"])
    (tmp_path / "afile").write_text("")
    code, out, err = run_cli(capsys, "demo", "--headless", "--out", f"{tmp_path}/afile/report.html")
    assert (code, out, err) == (2, "", f"bfs4k: error: --out {tmp_path}/afile/report.html: the directory "
                                       f"{tmp_path}/afile is not a directory\n")


def test_demo_without_headless_explains_what_it_needs(capsys, monkeypatch):
    monkeypatch.setattr(cli.shutil, "which", lambda name: None)  # no jupyter on PATH
    code, out, err = run_cli(capsys, "demo")
    assert code == 2 and ("JupyterLab is not installed" in err or "notebook is not at" in err)


def test_readme_says_how_files_load_where_the_cache_is_and_what_threads_may_do(tmp_path, monkeypatch):
    # The README speaks of directedness, the cache and threads, and what it says is what the code
    # does.
    from explorer import graphs

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    for phrase in ("**directed**", "`--undirected`", "directed=False", "`symmetrize=True`",
                   "**`general` directed**", "`graphs.cache_dir()`", "`$BFS4K_CACHE_DIR`", "`~/.cache/bfs4k`",
                   "rm -rf ~/.cache/bfs4k", "### Threads", "take turns, one step"):
        assert phrase in readme, phrase
    snap = tmp_path / "e.txt"
    snap.write_text("0 1\n1 2\n")
    assert graphs.load_graph(snap, cache=False).directed
    assert not graphs.load_graph(snap, directed=False, cache=False).directed
    assert not graphs.load_graph(snap, symmetrize=True, cache=False).directed
    for kind, directed in (("general", True), ("symmetric", False)):
        mtx = tmp_path / f"{kind}.mtx"
        mtx.write_text(f"%%MatrixMarket matrix coordinate pattern {kind}\n3 3 2\n2 1\n3 2\n")
        assert graphs.load_graph(mtx, cache=False).directed is directed
    monkeypatch.setenv("BFS4K_CACHE_DIR", str(tmp_path / "c"))
    assert graphs.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("BFS4K_CACHE_DIR")
    assert graphs.cache_dir() == Path.home() / ".cache" / "bfs4k"


def test_sources_and_results_speak_the_files_own_ids(tmp_path):
    # A SNAP file with ids 1..4 is remapped to 0..3: `--source 1` starts at the file's id 1 (vertex
    # 0), not at vertex 1; a file with ids 101..112 takes `--source 101`.
    path = tmp_path / "ones.txt"
    path.write_text("1 2\n2 3\n3 4\n")
    out = tmp_path / "r.json"
    p = bfs4k("run", str(path), "--source", "1", "--simulator", "--json", str(out), "--arrays", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "source 1 (vertex 0 after remapping the file's ids)" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["summary"]["source"] == 1 and doc["summary"]["source_vertex"] == 0
    assert doc["ids"] == [1, 2, 3, 4] and doc["distances"] == [0, 1, 2, 3]
    hundreds = tmp_path / "hundreds.txt"
    hundreds.write_text("".join(f"{v} {v + 1}\n" for v in range(101, 112)))
    p = bfs4k("run", str(hundreds), "--source", "105", "--simulator", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "source 105 (vertex 4 after" in p.stdout and "levels 8" not in p.stderr
    p = bfs4k("run", str(hundreds), "--source", "7", "--simulator", cwd=tmp_path)
    assert p.returncode == 2 and "vertex id 7 is not in" in p.stderr and "101 to 112" in p.stderr


def test_simulator_refuses_a_generated_graph_before_building_it(tmp_path):
    # gen:kronecker:scale=22 --simulator is refused before it builds (and caches) 128 M arcs.
    cache = tmp_path / "cache"
    env = clean_env(BFS4K_CACHE_DIR=str(cache))
    p = subprocess.run([sys.executable, "-m", "explorer", "run", "gen:kronecker:scale=22", "--simulator"],
                       capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and "over the limit of 200,000" in p.stderr and "nothing was built" in p.stderr
    assert not cache.exists() or not any(cache.rglob("*.npz"))


def test_a_cpu_technique_runs_without_gpu_or_simulator(tmp_path):
    # A CPU technique selected no backend of its own: without a GPU the CLI refused it.
    p = bfs4k("run", "bfs4k_fig2", "--technique", "cpu-topdown", "--source", "0", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "backend: the CPU" in p.stdout and re.search(r"validation\s+ok", p.stdout)


def test_readme_lists_every_registered_technique():
    from explorer.techniques import implemented_techniques

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| technique | from |"):]
    missing = [t.value for t in implemented_techniques() if f"`{t.value}`" not in table]
    assert not missing, f"README's technique table lacks {missing}"


# ------------------------------------------------------------------ where --json and --csv write

def test_output_through_a_link_writes_its_target_and_keeps_the_link(tmp_path, capsys):
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    real.chmod(0o600)
    link.symlink_to(real)
    dangling = tmp_path / "levels.csv"
    dangling.symlink_to(tmp_path / "made.csv")  # its target does not exist yet
    code, out, err = run_cli(capsys, "run", "bfs4k_fig2", "--source", "0", *SIM, "--json", str(link),
                             "--csv", str(dangling))
    assert code == 0, err
    assert link.is_symlink() and dangling.is_symlink()
    assert json.loads(real.read_text())["summary"]["levels"] == 4
    assert stat.S_IMODE(real.stat().st_mode) == 0o600  # a file written again keeps its mode
    assert (tmp_path / "made.csv").read_text().startswith("level,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["levels.csv", "link.json", "made.csv", "real.json"]


def test_output_to_a_fifo_or_a_device_is_written_in_place_never_replaced(tmp_path, capsys):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    code, out, err = run_cli(capsys, "run", "bfs4k_fig2", "--source", "0", *SIM, "--json", str(fifo))
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert got and json.loads(got[0])["summary"]["levels"] == 4
    try:  # a node of the device /dev/full is: every write fails
        os.mknod(tmp_path / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        return  # not root: the FIFO has shown it
    code, out, err = run_cli(capsys, "run", "bfs4k_fig2", "--source", "0", "--technique", "topdown-queue", *SIM,
                             "--csv", str(tmp_path / "full"))  # a technique with no preparation to report
    # The error is the last line (a GPU with a cold cache says first what it compiles).
    assert code == 2 and err.splitlines()[-1].endswith(f": error: cannot write {tmp_path}/full: No space left on device")
    assert err.count("error") == 1
    assert stat.S_ISCHR((tmp_path / "full").lstat().st_mode)


def test_output_to_standard_output_follows_the_table(tmp_path):
    # /dev/stdout is a link to /proc/self/fd/1; one like it in tmp_path is as good, and harmless
    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")
    p = bfs4k("run", "bfs4k_fig2", "--source", "0", "--simulator", "--csv", "stdout", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    table, _, csv_text = p.stdout.partition("level,frontier_in")
    assert "validation" in table and len(csv_text.splitlines()) == 6  # the header, 4 levels, "wrote"
    assert csv_text.splitlines()[-1] == "wrote stdout"
    assert (tmp_path / "stdout").is_symlink()


def test_a_closed_standard_output_is_no_error(tmp_path):
    # `bfs4k techniques >&-`: Python has no sys.stdout then; what would be printed is discarded
    for args in (["techniques"], ["run", "bfs4k_fig2", "--source", "0", "--simulator", "--csv", "r.csv"]):
        p = subprocess.run([sys.executable, "-m", "explorer", *args], stderr=subprocess.PIPE, text=True,
                           env=clean_env(), cwd=tmp_path, timeout=300, preexec_fn=lambda: os.close(1))
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert (tmp_path / "r.csv").read_text().startswith("level,")


def test_one_vocabulary_and_one_order_for_the_record(tmp_path):
    # The terminal said edges, dup_gen, dup_det, dup_left in another order than the CSV and JSON.
    from explorer.ui import report

    p = bfs4k("run", "bfs4k_fig2", "--source", "0", "--simulator", "--technique", "bfs4k", "--json", "r.json",
              "--csv", "r.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    terminal = next(line for line in lines if line.split()[:2] == ["level", "frontier_in"]).split()
    with (tmp_path / "r.csv").open() as f:
        csv_header = next(csv.reader(f))
    doc = json.loads((tmp_path / "r.json").read_text())
    assert terminal == csv_header == list(doc["levels"][0]) == [*LEVEL_FIELDS, *doc["extras"]]
    assert "dup_conflicts" in terminal and not {"edges", "dup_gen", "dup_det", "dup_left", "conflicts"} & set(terminal)
    # the HTML report's table and the text table of notebooks, too
    from explorer.api import run_bfs

    result = run_bfs(graphs.sample_graph("bfs4k_fig2"), 0, "bfs4k", cli.simulator_knobs("bfs4k", {}) if SIM else {}
                     ).complete()
    html_head = re.findall(r"<th>([^<]*)</th>", report.level_table_html(result))
    assert html_head == report.format_level_table(result).splitlines()[0].split() == \
        result.to_csv().splitlines()[0].split(",") == list(result.level_fields)


def test_each_time_is_labelled_by_where_it_was_measured(tmp_path):
    # The summary said "GPU time (ms)" for a CPU technique, and the JSON had "gteps": 0.0 under
    # the simulator where the terminal said n/a.
    p = bfs4k("run", "bfs4k_fig2", "--technique", "cpu-topdown", "--source", "0", "--json", "c.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^CPU time \(ms\)\s+[\d.]+$", p.stdout, re.M) and "GPU time" not in p.stdout
    # a CPU run's rate on a 10-vertex graph is tiny, not 0: significant digits, not 4 decimals
    gteps = json.loads((tmp_path / "c.json").read_text())["summary"]["gteps"]
    assert isinstance(gteps, float) and gteps > 0
    shown = re.search(r"^GTEPS\s+(\S+)$", p.stdout, re.M).group(1)
    assert float(shown) > 0 and float(shown) == pytest.approx(gteps, rel=1e-3)
    p = bfs4k("run", "bfs4k_fig2", "--source", "0", "--simulator", "--json", "s.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^simulator time \(ms\)\s+[\d.]+$", p.stdout, re.M) and "GPU time" not in p.stdout
    assert re.search(r"^GTEPS\s+n/a \(simulator\)$", p.stdout, re.M)
    assert json.loads((tmp_path / "s.json").read_text())["summary"]["gteps"] is None


def _readme_examples() -> tuple[list[str], list[str]]:
    """The README's `python3 -m explorer` command lines (but demo, which opens JupyterLab or runs
    every technique, and warmup) and its Python blocks."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", readme, re.S)
    commands = [line.partition("#")[0].strip() for lang, text in blocks if lang == "bash"
                for line in text.splitlines() if line.startswith("python3 -m explorer ")]
    commands = [c for c in commands if c.split()[3] not in ("demo", "warmup")]
    return commands, [text for lang, text in blocks if lang == "python"]


def test_the_readmes_examples_run_as_written_without_a_gpu(tmp_path):
    # The headline example had no --simulator and exited 2 on a machine without a GPU. Here they
    # run in a fresh shell as a user copies them (on a GPU machine, they run there as they are).
    commands, programs = _readme_examples()
    assert len(commands) >= 5 and programs
    for command in commands:
        p = subprocess.run(command.split(), capture_output=True, text=True, env=clean_env(), cwd=tmp_path,
                           timeout=600)
        assert p.returncode == 0, (command, p.stderr)
    for program in programs:
        if "explorer.scale_out" in program and importlib.util.find_spec("distributed") is None:
            continue  # the [dask] extra's example, where it is not installed (tests/test_scale_out.py skips too)
        p = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=clean_env(),
                           cwd=tmp_path, timeout=600)
        assert p.returncode == 0, (program, p.stderr)
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["validation"] == "ok"
