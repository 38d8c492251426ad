"""pytest plugin for networkx's own tests with the backend selected: which tests dispatched calls
to bfs4k, which fell back to networkx and why, and how each ended.

    NETWORKX_TEST_BACKEND=bfs4k NETWORKX_FALLBACK_TO_NX=True \\
        python3 -m pytest -p explorer.nx_backend.testing --bfs4k-summary=nx-tests.json \\
        --pyargs networkx.algorithms.traversal ...

It reads networkx's own dispatch log (logger "networkx.utils.backends", DEBUG: "Using backend",
"can't run ... because", "Falling back", "does not implement"), kept from propagating so that the
records do not pile up in pytest's log capture. The summary (JSON, and Markdown beside it) has the
totals, per function the calls dispatched and fallen back (with the reasons), per test its outcome
and calls, the engine's run counts and the candidates technique "auto" chose.

`--bfs4k-max-cases=N` keeps at most N cases of each parametrized test, evenly spread over its
parameter grid, and `--bfs4k-max-cases=TEST=N` N of the test function TEST (networkx's
test_use_bounds_on_off_consistency has 500, each a dozen all-pairs searches that take the
simulator seconds); `--bfs4k-leave-out=TEST` leaves out the test TEST (a function name, or
Class::function) whole (networkx's TestBarycenter::test_trees makes 50 all-pairs searches in one
test). The summary names what was left out. `run_suites` runs the suites in
a process group of their own, which it kills whole when they overrun or the caller stops.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

import pytest

BACKEND = "bfs4k"


class _Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.test = "<collection>"
        self.dispatched = defaultdict(Counter)  # test -> function -> calls run by bfs4k
        self.fell_back = defaultdict(Counter)  # test -> function -> calls run by networkx
        self.reasons = defaultdict(Counter)  # function -> reason -> calls
        self._why: dict = {}  # function -> the reason of its latest refusal

    def emit(self, record):
        msg, args = record.msg, record.args
        if not isinstance(args, tuple) or not args:
            return
        if msg.startswith("Using backend '%s' for call to") and args[0] == BACKEND:
            self.dispatched[self.test][args[1]] += 1
        elif msg.startswith("Backend '%s' can't run") and args[0] == BACKEND:
            why = args[3] if len(args) > 3 else ""
            self._why[args[1]] = why.removeprefix(", because: ") or "can_run returned False"
        elif msg.startswith("Backend '%s' does not implement") and args[0] == BACKEND:
            self._why[args[1]] = "not implemented by bfs4k"
        elif msg.startswith("Backend '%s' raised when calling") and args[0] == BACKEND:
            self._why[args[1]] = f"raised NotImplementedError: {args[2]}"
        elif msg.startswith("Falling back to use 'networkx' instead of '%s'") and args[0] == BACKEND:
            name = args[1]
            self.fell_back[self.test][name] += 1
            self.reasons[name][self._why.pop(name, "not implemented by bfs4k")] += 1
        elif msg.startswith("Graph conversion failed") and args[0] == BACKEND:
            self.fell_back[self.test][args[1]] += 1
            self.reasons[args[1]]["graph conversion failed"] += 1


_REC = _Recorder()
_OUTCOMES: dict = {}
_SAMPLED: dict = {}  # test function -> "kept of cases"
_LEFT_OUT: list = []  # tests --bfs4k-leave-out deselected
_START = [0.0]


def pytest_addoption(parser):
    parser.addoption("--bfs4k-summary", default=os.environ.get("BFS4K_NX_SUMMARY", "nx-backend-tests.json"),
                     help="where the bfs4k backend's dispatch summary goes (JSON; Markdown beside it)")
    parser.addoption("--bfs4k-max-cases", action="append", default=[],
                     help="N: keep at most N cases of each parametrized test, evenly spread (0: all); "
                          "TEST=N: of the test function named TEST (repeatable)")
    parser.addoption("--bfs4k-leave-out", action="append", default=[],
                     help="TEST: leave out the test named TEST (a function name or Class::function; repeatable)")


def _case_limits(values: list[str]) -> tuple[int, dict]:
    """(the limit of every parametrized test, {test function name: its own limit})."""
    every, named = 0, {}
    for v in values:
        name, eq, n = v.rpartition("=")
        try:
            limit = int(n)
        except ValueError:
            raise pytest.UsageError(f"--bfs4k-max-cases={v}: expected N or TEST=N, N a whole number") from None
        if eq:
            named[name] = limit
        else:
            every = limit
    return every, named


def pytest_collection_modifyitems(config, items):
    leave = config.getoption("--bfs4k-leave-out")
    if leave:
        gone = [it for it in items if any(it.nodeid.partition("[")[0].endswith("::" + t) for t in leave)]
        if gone:
            config.hook.pytest_deselected(items=gone)
            ids = {id(it) for it in gone}
            items[:] = [it for it in items if id(it) not in ids]
            _LEFT_OUT.extend(it.nodeid for it in gone)
    every, named = _case_limits(config.getoption("--bfs4k-max-cases"))
    if every <= 0 and not named:
        return
    cases = defaultdict(list)
    for item in items:
        cases[item.nodeid.partition("[")[0]].append(item)
    dropped = []
    for name, group in cases.items():
        limit = named.get(name.rpartition("::")[2], every)
        if 0 < limit < len(group):
            keep = {group[i * len(group) // limit].nodeid for i in range(limit)}
            dropped += [it for it in group if it.nodeid not in keep]
            module = getattr(getattr(group[0], "module", None), "__name__", "")
            # a module given by --pyargs outside the root directory has no path in the node id
            _SAMPLED[f"{module}{name}" if name.startswith("::") else name] = f"{limit} of {len(group)} cases"
    if dropped:
        gone = {id(it) for it in dropped}
        config.hook.pytest_deselected(items=dropped)
        items[:] = [it for it in items if id(it) not in gone]


def pytest_configure(config):
    log = logging.getLogger("networkx.utils.backends")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    log.addHandler(_REC)
    _START[0] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _REC.test = item.nodeid


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        if report.nodeid not in _OUTCOMES or report.outcome != "passed":
            outcome = report.outcome
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            _OUTCOMES[report.nodeid] = outcome


def _our_functions() -> set:
    from .info import FUNCTIONS

    return set(FUNCTIONS)


def summary() -> dict:
    ours = _our_functions()
    tests = sorted(set(_OUTCOMES) | set(_REC.dispatched) | set(_REC.fell_back))
    per_test, calls_run, calls_back = {}, Counter(), Counter()
    for t in tests:
        run, back = _REC.dispatched.get(t, Counter()), _REC.fell_back.get(t, Counter())
        calls_run.update(run)
        calls_back.update(back)
        per_test[t] = {"outcome": _OUTCOMES.get(t, "not run"), "dispatched": dict(run),
                       "fell_back": {k: v for k, v in back.items() if k in ours}}
    tested = [t for t in tests if t in _OUTCOMES]
    outcomes = Counter(_OUTCOMES[t] for t in tested)
    dispatched_tests = [t for t in tested if _REC.dispatched.get(t)]
    back_only = [t for t in tested if not _REC.dispatched.get(t)
                 and any(k in ours for k in _REC.fell_back.get(t, ()))]
    from . import searches

    try:
        where = searches.backend.current().describe()
    except Exception as err:  # no GPU, no simulator: every call fell back
        where = f"none ({err})"
    return {
        "backend": BACKEND,
        "kernels_ran_on": where,
        "config": {k: v for k, v in searches.config().items()},
        "seconds": round(time.time() - _START[0], 1),
        "tests": {"total": len(tested), **dict(outcomes)},
        "tests_dispatching_to_bfs4k": len(dispatched_tests),
        "tests_whose_bfs4k_functions_all_fell_back": len(back_only),
        "tests_calling_no_bfs4k_function": len(tested) - len(dispatched_tests) - len(back_only),
        "calls_dispatched": dict(calls_run.most_common()),
        "calls_fell_back": {k: {"calls": v, "why": dict(_REC.reasons[k].most_common())}
                            for k, v in calls_back.most_common() if k in ours},
        "calls_fell_back_other_functions": sum(v for k, v in calls_back.items() if k not in ours),
        "engine_runs": dict(searches.RUNS),
        "auto_chose": dict(searches.CHOSEN.most_common()),
        "result_store": {"hits": searches.STORE.hits, "misses": searches.STORE.misses, "bytes": searches.STORE.nbytes},
        "failed": [t for t in tested if _OUTCOMES[t] == "failed"],
        "sampled": dict(_SAMPLED),
        "left_out": list(_LEFT_OUT),
        "per_test": per_test,
    }


def merge(parts: list[dict]) -> dict:
    """One summary of several runs' summaries (networkx's suites split over processes)."""
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    per_test = {}
    for p in parts:
        per_test.update(p["per_test"])
    outcomes = Counter(t["outcome"] for t in per_test.values() if t["outcome"] != "not run")
    out["tests"] = {"total": sum(outcomes.values()), **dict(outcomes)}
    for key in ("tests_dispatching_to_bfs4k", "tests_whose_bfs4k_functions_all_fell_back",
                "tests_calling_no_bfs4k_function", "calls_fell_back_other_functions"):
        out[key] = sum(p[key] for p in parts)
    out["seconds"] = max(p["seconds"] for p in parts)  # the processes ran side by side
    out["processes"] = len(parts)
    calls, runs, chose, back, why = Counter(), Counter(), Counter(), Counter(), defaultdict(Counter)
    for p in parts:
        calls.update(p["calls_dispatched"])
        runs.update(p["engine_runs"])
        chose.update(p.get("auto_chose", {}))
        for name, b in p["calls_fell_back"].items():
            back[name] += b["calls"]
            why[name].update(b["why"])
    out["calls_dispatched"] = dict(calls.most_common())
    out["calls_fell_back"] = {k: {"calls": v, "why": dict(why[k].most_common())} for k, v in back.most_common()}
    out["engine_runs"] = dict(runs)
    out["auto_chose"] = dict(chose.most_common())
    out["result_store"] = {k: sum(p["result_store"][k] for p in parts) for k in ("hits", "misses", "bytes")}
    out["failed"] = sorted(t for p in parts for t in p["failed"])
    out["sampled"] = {k: v for p in parts for k, v in p.get("sampled", {}).items()}
    out["left_out"] = [t for p in parts for t in p.get("left_out", [])]
    out["per_test"] = per_test
    return out


def write(s: dict, path) -> None:
    """The summary as JSON at `path`, and as Markdown beside it."""
    with open(path, "w") as f:
        json.dump(s, f, indent=1)
    with open(os.path.splitext(path)[0] + ".md", "w") as f:
        f.write(markdown(s))


def markdown(s: dict) -> str:
    t = s["tests"]
    side = f" ({s['processes']} processes side by side)" if s.get("processes", 1) > 1 else ""
    lines = [f"# networkx's tests with the {s['backend']} backend", "",
             f"Kernels ran on: {s['kernels_ran_on']}; {s['seconds']} s{side}.", "",
             f"Backend config (nx.config.backends.bfs4k): {s['config']}.", "",
             "| tests | passed | failed | skipped | xfailed | dispatched to bfs4k | bfs4k calls all fell back | no bfs4k function |",
             "|---|---|---|---|---|---|---|---|",
             f"| {t['total']} | {t.get('passed', 0)} | {t.get('failed', 0)} | {t.get('skipped', 0)} | "
             f"{t.get('xfailed', 0)} | {s['tests_dispatching_to_bfs4k']} | "
             f"{s['tests_whose_bfs4k_functions_all_fell_back']} | {s['tests_calling_no_bfs4k_function']} |",
             "", f"Engine runs: {s['engine_runs']}; stored results reused {s['result_store']['hits']} times.",
             *(["", f"auto's choices (searches by candidate): {s['auto_chose']}."] if s.get("auto_chose") else []),
             "", "| function | calls run by bfs4k | calls run by networkx | why |", "|---|---|---|---|"]
    names = sorted(set(s["calls_dispatched"]) | set(s["calls_fell_back"]))
    for name in names:
        back = s["calls_fell_back"].get(name, {"calls": 0, "why": {}})
        why = "; ".join(f"{r} ({n})" for r, n in back["why"].items())
        lines.append(f"| {name} | {s['calls_dispatched'].get(name, 0)} | {back['calls']} | {why} |")
    if s.get("sampled"):
        lines += ["", "Parametrized tests run in part (--bfs4k-max-cases):",
                  *[f"- {t}: {n}" for t, n in s["sampled"].items()]]
    if s.get("left_out"):
        lines += ["", "Tests left out (--bfs4k-leave-out):", *[f"- {t}" for t in s["left_out"]]]
    if s["failed"]:
        lines += ["", "Failed:", *[f"- {t}" for t in s["failed"]]]
    return "\n".join(lines) + "\n"


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--bfs4k-summary")
    if not path:
        return
    write(summary(), path)


def run_suites(suites: list[str], summary_path, env: dict, timeout: float, cwd, args=()) -> tuple[int, str]:
    """Run networkx's `suites` (module names for --pyargs) under pytest with this plugin, in a new
    process group (session), and return (exit status, the end of its log). When they run past
    `timeout` seconds, or the caller is stopped, the whole group is killed before this returns
    or raises: no test process is left behind. On Linux the child also dies with its parent (a
    killed pytest worker takes it along)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "explorer.nx_backend.testing",
            f"--bfs4k-summary={summary_path}", *args, "--pyargs", *suites]
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env,
                                start_new_session=True, preexec_fn=_die_with_parent(os.getpid()))
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            log.seek(0)
            raise TimeoutError(f"networkx's tests {suites} ran past {timeout:.0f} s; their processes were "
                               f"killed. The log ended:\n{log.read()[-4000:]}") from None
        except BaseException:
            _kill_group(proc)
            raise
        log.seek(0)
        return returncode, log.read()[-4000:]


def _kill_group(proc) -> None:
    """SIGKILL to the child's group, before the child is reaped: until then its pid, the group's
    id, cannot be given to another process."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    proc.wait()


def _die_with_parent(parent: int):
    """A preexec function: the child gets SIGKILL when its parent exits (Linux's PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return None

    def arm():
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent exited before the signal was armed
            os._exit(1)

    return arm
