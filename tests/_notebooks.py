"""What each notebook must print, show and write when it runs top to bottom under the simulator,
checked on the notebook as run: in chromium by tests/test_browser.py (CI always), or headless by
tests/test_notebook.py where no browser can run. One notebook runs once either way."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Callable

from explorer.ui.report import NOTEBOOK_WIDTH

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
QUICKSTART = "01_quickstart.ipynb"
TUNING = "02_tuning_k1_k7.ipynb"
DUPLICATES = "03_duplicate_analysis.ipynb"
CLASSROOM = "04_classroom.ipynb"
MULTI_SEARCH = "05_multi_search.ipynb"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401  (only whether it is there)
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing (apt-get install {package}; .ci/run installs it as root)"
    if shutil.which("jupyter") is None:
        return "jupyter is not on PATH (pip install -e '.[notebook]')"
    return None


def browser_runs_them() -> bool:
    """Whether tests/test_browser.py runs the notebooks here (it fails where CI is set and cannot)."""
    return missing_browser() is None or bool(os.environ.get("CI"))


def code_outputs(nb) -> list:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]


def printed(nb) -> str:
    """Everything the notebook's cells printed."""
    return "\n".join(o.get("text", "") for o in code_outputs(nb) if o.output_type == "stream")


def check_notebook(name: str, nb, wrote: Callable[[str], bool]) -> None:
    """The checks of notebook `name`, run (`nb`, an nbformat notebook with its outputs); `wrote(f)`:
    whether the run wrote file f beside it."""
    assert not [o for o in code_outputs(nb) if o.output_type == "error"]
    text = printed(nb)
    # Every printed line shows whole: JupyterLab breaks a wider one anywhere, mid-word or mid-number.
    wide = [line for line in text.splitlines() if len(line) > NOTEBOOK_WIDTH]
    assert not wide, f"{name} prints lines over {NOTEBOOK_WIDTH} characters: {wide[:3]}"
    CHECKS[name](nb, text, wrote)


def _quickstart(nb, text, wrote) -> None:
    assert "simulator" in text.lower()
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["level", "frontier_in"])
    rows = [dict(zip(lines[header].split(), line.split())) for line in lines[header + 1:header + 5]]
    assert [[r["level"], r["frontier_in"], r["discovered"]] for r in rows] == \
        [["0", "1", "3"], ["1", "3", "4"], ["2", "4", "2"], ["3", "2", "0"]]
    assert re.search(r"^validation +ok$", text, re.M), text
    assert wrote("quickstart-report.html")
    # Without BokehJS in the page the plots show only "javascript error": the explorer's cell
    # must publish the BokehJS load before the widget itself.
    explorer_cell = next(c for c in nb.cells if c.cell_type == "code" and "Explorer(" in c.source)
    data = [o.get("data", {}) for o in explorer_cell.outputs]
    load = next(i for i, d in enumerate(data) if "application/vnd.bokehjs_load.v0+json" in d)
    widget = next(i for i, d in enumerate(data) if "application/vnd.jupyter.widget-view+json" in d)
    assert load < widget, [next(iter(d), None) for d in data]


def _tuning(nb, text, wrote) -> None:
    assert "K1 = " in text and "(§7)" in text  # the advice, with its reasons
    assert text.count("bfs4k on ") == 3 and " ok " in text  # the simulator's three sweep stages, checked
    assert "tuned:" in text and wrote("tuning-stage1.json")
    assert all(f"{name} " in text for name in ("defaults", "§7 advice", "tuned")) and "valid" in text
    assert "tuned vs §7 advice:" in text and "simulation times" in text
    assert "K6: advice 128, 32 here: the simulator's 32-thread blocks" in text
    # Noise is called noise: each point the median of 3 runs with their range, a knob moves from the
    # advice only when faster in every run, and the explanation says the times are not GPU times.
    assert text.count("median of 3 runs") == 3 and "fastest–slowest" in text
    assert re.search(r"^K1: advice 4 (kept: .*|-> tuned \d+, faster in every run \(measured\).*)$", text, re.M)
    assert "Simulator: every time below is the time to simulate the kernels on the CPU, not a GPU" in text
    plots = [o for c in nb.cells if c.cell_type == "code" and "SweepPlot" in c.source for o in c.outputs
             if "application/vnd.bokehjs_exec.v0+json" in o.get("data", {})]
    assert len(plots) == 3  # a plot per stage


def _duplicates(nb, text, wrote) -> None:
    # Fig. 12's table: run, duplicates, removed, left (then the warp sizes).
    rows = [re.match(r"(\S.{23}) +([\d,]+) +([\d,]+) +([\d,]+)", line) for line in text.splitlines()]
    table = {m[1].strip(): [int(m[i].replace(",", "")) for i in (2, 3, 4)] for m in rows if m}
    assert set(table) == {"Sequential", "VirtualWarp1", "VirtualWarp4", "EdgeDiscover", "EdgeDiscover + Hash64",
                          "VirtualWarp4 + Hash64"}, table
    assert table["Sequential"] == [0, 0, 0] and table["VirtualWarp4"][0] > 0 and table["EdgeDiscover"][0] > 0
    assert table["VirtualWarp4 + Hash64"][2] < table["VirtualWarp4"][0]  # hash64 removes most of them
    assert table["EdgeDiscover + Hash64"][2] < table["EdgeDiscover"][0]
    assert "Fig. 13(b)" in text and "detected duplicates" in text and "best of its scope" in text
    # Figs. 12 and 13 read one run: the same duplicates (racy counts differ from run to run, and
    # two runs gave 52 and 42); the table gives the range over several runs of each setting.
    fig13 = int(re.search(r"Fig\. 13\(b\) on \S+, virtual warps of 4: ([\d,]+) duplicates", text)[1].replace(",", ""))
    assert table["VirtualWarp4 + Hash64"][0] == fig13
    assert "over 3 runs" in text and re.search(r"VirtualWarp4 +[\d,]+ +[\d,]+ +[\d,]+ +[\d,]+–[\d,]+", text)
    assert "duplicated vertices; a sample:" in text
    assert re.search(r"mesh +Kronecker\n", text) and "candidates" in text
    assert re.search(r"from several blocks +0 +0", text) and "one after another" in text  # the simulator's blocks


def _classroom(nb, text, wrote) -> None:
    assert "simulator" in text.lower()
    assert "F1 = [1, 2, 3]" in text and "F2 = [4, 5, 6, 8]" in text  # part 1: the frontiers
    assert "level 1: frontier [1, 2, 3], entries read 3, edges examined 10" in text
    assert "edge-discover" in text and "Fig. 6" in text  # part 2: the lanes over the edges
    assert "bottom-up edges" in text or "bottom-up is not registered" in text  # part 3
    assert "reached by 2+ frontier edges: [8]" in text  # part 4: where the duplicate is born
    for cell in [c for c in nb.cells if c.cell_type == "code" and "Classroom(" in c.source]:
        # BokehJS is loaded before each classroom widget is shown
        data = [o.get("data", {}) for o in cell.outputs]
        widgets = [i for i, d in enumerate(data) if "application/vnd.jupyter.widget-view+json" in d]
        loads = [i for i, d in enumerate(data) if "application/vnd.bokehjs_load.v0+json" in d]
        assert widgets and loads and loads[0] < widgets[-1], cell.source


def _multi_search(nb, text, wrote) -> None:
    assert "simulator" in text.lower()
    assert "ranked: [(" in text and "matches networkx" in text
    assert "rank" in text and "energy" in text.lower()
    # BokehJS inline: no internet needed
    assert not any("cdn.bokeh.org" in json.dumps(o.get("data", {})) for o in code_outputs(nb))


CHECKS = {QUICKSTART: _quickstart, TUNING: _tuning, DUPLICATES: _duplicates, CLASSROOM: _classroom,
          MULTI_SEARCH: _multi_search}
