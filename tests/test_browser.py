"""A real browser: JupyterLab on a free 127.0.0.1 port, Debian's headless chromium driven
by Selenium through Debian's chromedriver (nothing is downloaded at run time, and BokehJS comes
inline). Every notebook runs top to bottom under the CUDA simulator, what it printed and wrote is
checked (tests/_notebooks.py), then buttons are pressed as a person would. Failing: "Javascript
Error" or a traceback in an output, an empty figure, a classroom drawn grey while its text speaks
of a level, plots that arrive in one update, a tab that opens blank, a reloaded page that lost the
runs. Screenshots (and the browser's console log) go to $BFS4K_ARTIFACTS, else .ci/artifacts/
(git-ignored), for CI to keep.

Without chromium, chromedriver or selenium the browser tests skip, saying what to install (and
tests/test_notebook.py runs the notebooks headless instead); where the environment variable CI is
set they fail instead (.ci/run installs them as root)."""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from explorer import graphs
from explorer.reference import cpu_bfs
from explorer.ui.cli import LAB_HOST, free_port, jupyter_lab_argv, load_graph_spec
from explorer.ui.tables import run_label

from _notebooks import (CHECKS, CHROMEDRIVER, CHROMIUM, CLASSROOM, DUPLICATES, MULTI_SEARCH, NOTEBOOKS, QUICKSTART,
                        TUNING, check_notebook, missing_browser)

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000")
#: The notebook JupyterLab shows (a hidden panel's elements are found too, with no text).
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
NOTEBOOK_TIMEOUT = 600  # seconds for a notebook to run top to bottom in the browser (simulator)
ACTION_TIMEOUT = 240  # seconds for a button's effect (a loaded 2-core CI machine needs more than 120)
OPEN_TIMEOUT = 180  # seconds for JupyterLab to show a notebook with its kernel idle
RUN_ALL_LOST_S = 60  # seconds after Run All with no cell queued: the request was lost


def artifacts_dir() -> Path:
    path = Path(os.environ.get("BFS4K_ARTIFACTS") or ROOT / ".ci" / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _need_browser() -> None:
    why = missing_browser()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the browser test must run in CI: {why}")
    pytest.skip(f"no real browser here: {why}")


# ------------------------------------------------------------------ JupyterLab and the browser

@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a copy of the notebooks (what they write stays there), kernels on the
    simulator; yields (base URL, token)."""
    _need_browser()
    work = tmp_path_factory.mktemp("lab")
    for name in CHECKS:
        shutil.copy(NOTEBOOKS / name, work / name)
    home = tmp_path_factory.mktemp("jupyter-home")
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No "get notified about Jupyter news?" prompt over the page (and no fetch of the news).
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port = free_port(LAB_HOST, 0)
    token = secrets.token_hex(24)
    env = {**os.environ, "JUPYTER_TOKEN": token, "NUMBA_ENABLE_CUDASIM": "1",
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "ws")}
    argv = [*jupyter_lab_argv(work / QUICKSTART, port, as_root=os.geteuid() == 0), "--no-browser"]
    log = open(artifacts_dir() / "jupyterlab.log", "w")
    server = subprocess.Popen(argv, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://{LAB_HOST}:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start (exit {server.poll()}); see {log.name}")
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        log.close()


@pytest.fixture(scope="module")
def browser(lab, tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    driver.set_page_load_timeout(60)
    driver.console = []  # every console entry, read by console_errors(), written out at the end
    try:
        yield driver
    finally:
        try:
            console_errors(driver)
            (artifacts_dir() / "browser-console.log").write_text(
                "\n".join(f"{e['level']} {e['message']}" for e in driver.console))
        finally:
            driver.quit()


@pytest.fixture(autouse=True)
def _own_console(request):
    """Each test's console errors are its own: those a failed test left unread (it stopped before its
    page check) are read and kept in the log before the next test starts, not charged to it."""
    if "browser" in request.fixturenames:
        console_errors(request.getfixturevalue("browser"))


def console_errors(driver) -> list[str]:
    """The browser console's errors since the last call (a missing favicon is not one)."""
    new = driver.get_log("browser")
    driver.console += new
    return [e["message"] for e in new if e["level"] == "SEVERE" and "favicon" not in e["message"]]


def wait_for(what: str, check, timeout: float = ACTION_TIMEOUT, every: float = 0.5):
    """check()'s first truthy value; fails naming `what` after `timeout` seconds. An element that
    JupyterLab re-rendered while check() read it (stale) counts as not yet."""
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except StaleElementReferenceException:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def open_and_run_all(driver, lab, name: str) -> None:
    """Open a notebook in JupyterLab and press Run > Run All Cells; wait until every code cell ran."""
    from selenium.webdriver.common.by import By

    base, token = lab
    # A workspace of its own: the page restores no other notebook.
    driver.get(f"{base}/lab/workspaces/{Path(name).stem}/tree/{name}?token={token}")

    def kernel_asked():
        # A server slow to list its kernels makes JupyterLab ask which one: the notebook's own.
        for accept in driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept"):
            accept.click()
            return True
        return False

    def ready():
        return not kernel_asked() and driver.find_elements(By.CSS_SELECTOR, f"{PANEL} .jp-CodeCell") and \
            driver.execute_script("return document.body.textContent.includes('Idle')")

    wait_for(f"{name} with its kernel idle", ready, OPEN_TIMEOUT)
    menu_command(driver, "Run", "runmenu:run-all")
    asked = time.monotonic()

    def all_ran():
        nonlocal asked
        kernel_asked()
        errors = error_outputs(driver)
        if errors:  # Run All stops at a failing cell: say why now, with a picture
            driver.save_screenshot(str(artifacts_dir() / f"{Path(name).stem}-error.png"))
            pytest.fail(f"{name} failed in the browser: {errors}; the console's errors: {console_errors(driver)}")
        prompts = driver.execute_script("return Array.from(document.querySelectorAll(arguments[0])).map("
                                        "(p) => p.textContent.trim())", f"{PANEL} .jp-CodeCell .jp-InputArea-prompt")
        if prompts and all(p == "[ ]:" for p in prompts) and time.monotonic() - asked > RUN_ALL_LOST_S:
            # No cell queued: a kernel connection that JupyterLab was still replacing (a loaded
            # server) lost the request. Nothing ran yet, so asking again runs each cell once.
            menu_command(driver, "Run", "runmenu:run-all")
            asked = time.monotonic()
        return prompts and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts)

    try:
        wait_for(f"{name} to run top to bottom", all_ran, NOTEBOOK_TIMEOUT, every=1)
    finally:
        driver.save_screenshot(str(artifacts_dir() / f"{Path(name).stem}-ran.png"))


#: [text, mime type] of every output of the notebook shown, and the text of our widgets' status
#: lines, read as text content: WebDriver's .text lays out every element it reads, which on a
#: large notebook polled each second took the browser's time from the page it tests.
_OUTPUTS_JS = """
const panel = document.querySelector(arguments[0]);
if (!panel) return [[], []];
return [Array.from(panel.querySelectorAll('.jp-OutputArea-output')).map(
          (o) => [o.textContent, o.getAttribute('data-mime-type')]),
        Array.from(panel.querySelectorAll('.widget-html-content')).map((o) => o.textContent)];
"""


def menu_command(driver, menu: str, command: str) -> None:
    """Open a menu of JupyterLab's menu bar and click its item of `command` (Run > Run All Cells)."""
    from selenium.webdriver.common.by import By

    wait_for(f"the {menu} menu", lambda: [m for m in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item")
                                          if m.text == menu])[0].click()
    wait_for(command, lambda: [m for m in driver.find_elements(By.CSS_SELECTOR, "li.lm-Menu-item")
                               if m.get_attribute("data-command") == command])[0].click()


def error_outputs(driver) -> list[str]:
    """Tracebacks and error text in the notebook's outputs, and error status lines of our widgets."""
    outputs, statuses = driver.execute_script(_OUTPUTS_JS, PANEL)
    bad = [text[:500] for text, mime in outputs if "Traceback" in text or "javascript error" in text.lower()
           or (mime == "application/vnd.jupyter.stderr" and "Error" in text)]
    return bad + [text.strip()[:500] for text in statuses if "✗" in text]


#: Rows of every ColumnDataSource named `name` in the Bokeh documents shown inside each element
#: matching `selector` (the whole page when absent), in the elements' order: [{column: [values]}]
#: for the columns asked.
_SOURCES_JS = """
const [name, columns, selector] = arguments;
if (typeof Bokeh === 'undefined') return [];  // not loaded (yet)
const roots = selector ? Array.from(document.querySelectorAll(selector)) : [document.body];
const out = [];
for (const root of roots) {
  const seen = new Set();
  for (const view of Bokeh.index.roots) {
    if (!root.contains(view.el)) continue;
    const doc = view.model.document;
    if (!doc || seen.has(doc)) continue;
    seen.add(doc);
    for (const model of doc._all_models.values()) {
      if (model.name !== name || !model.data) continue;
      const row = {};
      for (const c of columns) {
        const col = model.data instanceof Map ? model.data.get(c) : model.data[c];
        row[c] = col === undefined ? null : Array.from(col);
      }
      out.push(row);
    }
  }
}
return out;
"""


def sources(driver, name: str, columns, selector: str | None = None) -> list[dict]:
    return driver.execute_script(_SOURCES_JS, name, list(columns), selector)


def fig2_levels() -> int:
    dist, _ = cpu_bfs(graphs.sample_graph("bfs4k_fig2"), 0)
    return int(dist.max()) + 1


def buttons(container, text: str):
    from selenium.webdriver.common.by import By

    return [b for b in container.find_elements(By.CSS_SELECTOR, "button.widget-button") if b.text.strip() == text]


#: Every Bokeh figure (Plot) shown inside `arguments[0]` (a CSS selector; a tab not selected shows
#: nothing) that draws nothing:
#: [title, renderers] of each plot whose glyph renderers have no row with a finite number or a
#: text (a legend key's one NaN row draws nothing too). Views never built count as well: a
#: figure output whose BokehJS did not run has no Bokeh root inside it.
_EMPTY_FIGURES_JS = """
const root = document.querySelector(arguments[0]);
const out = [];
if (typeof Bokeh === 'undefined') return root && root.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.bokehjs_exec.v0+json"]') ? [['(BokehJS not loaded)', 0]] : [];
const drawn = (v) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v !== '');
const hasRows = (source) => {
  const data = source.data instanceof Map ? Object.fromEntries(source.data) : source.data;
  return Object.values(data || {}).some((col) => col && Array.from(col).some(
    (v) => drawn(v) || (v && typeof v === 'object' && v.length !== undefined && Array.from(v).some(drawn))));
};
const seen = new Set();
for (const view of Bokeh.index.roots) {
  if (!root || !root.contains(view.el) || view.el.offsetParent === null) continue;
  const doc = view.model.document;
  if (!doc || seen.has(doc)) continue;
  seen.add(doc);
  for (const m of doc._all_models.values()) {
    if (!Array.isArray(m.renderers) || !('toolbar' in m) || !m.visible) continue;
    const glyphs = m.renderers.filter((r) => r.data_source || r.node_renderer);
    const full = glyphs.filter((r) => r.visible !== false && hasRows(r.data_source || r.node_renderer.data_source));
    if (glyphs.length && !full.length) out.push([m.title ? m.title.text : '(untitled)', glyphs.length]);
  }
}
for (const o of root.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.bokehjs_exec.v0+json"]')) {
  if (!Array.from(Bokeh.index.roots).some((v) => o.contains(v.el))) out.push(['(a figure output with no Bokeh view)', 0]);
}
return out;
"""


def empty_figures(driver, selector: str = PANEL) -> list:
    return driver.execute_script(_EMPTY_FIGURES_JS, selector)


def check_page(driver, name: str) -> None:
    """No error output, no empty figure, no word of a printed line or an output's table cell
    broken over two lines, no console error: the page as a person sees it."""
    from selenium.webdriver.common.by import By

    errors = wait_for("the page to settle", lambda: [error_outputs(driver)])[0]
    assert not errors, errors
    empty = empty_figures(driver)
    if empty:
        driver.save_screenshot(str(artifacts_dir() / f"{Path(name).stem}-empty-figure.png"))
    assert not empty, f"{name}: figures that draw nothing: {empty}"
    broken = [u for out in driver.find_elements(By.CSS_SELECTOR, f"{PANEL} .jp-Cell-outputArea")
              for u in unreadable(driver, out) if u[0] == "broken"]
    assert not broken, f"{name}: words of an output broken over two lines: {broken[:5]}"
    assert not console_errors(driver)


def shoot_outputs(driver, name: str) -> None:
    """A screenshot of every output of the notebook shown, for a person to look at."""
    from selenium.webdriver.common.by import By

    stem = Path(name).stem
    for i, out in enumerate(driver.find_elements(By.CSS_SELECTOR, f"{PANEL} .jp-Cell-outputArea")):
        if out.size["height"] > 30:
            driver.execute_script("arguments[0].scrollIntoView()", out)
            out.screenshot(str(artifacts_dir() / f"{stem}-out{i:02d}.png"))


def write_notebook(lab, name: str, cells: list[str]) -> None:
    """Put a notebook of these code cells into the folder JupyterLab serves (its contents API)."""
    import nbformat

    base, token = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    body = json.dumps({"type": "notebook", "format": "json", "content": nb}).encode()
    req = urllib.request.Request(f"{base}/api/contents/{name}?token={token}", data=body, method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=30).close()


def check_saved(driver, lab, name: str) -> None:
    """Save the notebook shown, then make its checks (tests/_notebooks.py) on what JupyterLab
    saved: what its cells printed and showed, and the files it wrote beside it."""
    import nbformat
    from selenium.webdriver.common.by import By

    menu_command(driver, "File", "docmanager:save")
    wait_for(f"{name} saved", lambda: not driver.find_elements(By.CSS_SELECTOR, ".jp-mod-dirty"), 60)
    nb = nbformat.from_dict(contents(lab, name)["content"])
    check_notebook(name, nb, lambda f: contents(lab, f, content=False) is not None)


def contents(lab, path: str, content: bool = True) -> dict | None:
    """JupyterLab's contents API model of `path` in the folder it serves; None when absent."""
    base, token = lab
    try:
        with urllib.request.urlopen(f"{base}/api/contents/{path}?token={token}&content={int(content)}",
                                    timeout=60) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def explorer_widget(driver):
    from selenium.webdriver.common.by import By

    try:
        return wait_for("the Explorer widget", lambda: [w for w in driver.find_elements(
            By.CSS_SELECTOR, f"{PANEL} .jp-OutputArea-output .widget-vbox") if buttons(w, "Run") and buttons(w, "Classroom")])[0]
    except pytest.fail.Exception as err:  # say what the page said: a widget manager's error, say
        driver.save_screenshot(str(artifacts_dir() / "no-explorer-widget.png"))
        pytest.fail(f"{err}; the browser console's errors: {console_errors(driver)}")


#: Records, from now on, when the rows of run `arguments[0]` in the `levels` sources change:
#: window.__bfs4kUpdates = [[ms since the call, rows], ...], at each change as the page applies it.
_WATCH_RUN_JS = """
const label = arguments[0];
window.__bfs4kUpdates = [];
const t0 = performance.now();
const hooked = new WeakSet();
const record = () => {
  let rows = 0;
  for (const view of Bokeh.index.roots) {
    const doc = view.model.document;
    if (!doc) continue;
    for (const m of doc._all_models.values()) {
      if (m.name !== 'levels' || !m.data) continue;
      if (!hooked.has(m)) {  // every change as it is applied: a loaded browser may apply several
        hooked.add(m);       // patches in one task, with no timer between them
        m.streaming.connect(record);
        m.change.connect(record);
      }
      const run = m.data instanceof Map ? m.data.get('run') : m.data.run;
      if (run && run.length && run[0] === label) rows = Math.max(rows, run.length);
    }
  }
  const u = window.__bfs4kUpdates;
  if (rows !== (u.length ? u[u.length - 1][1] : 0)) u.push([Math.round(performance.now() - t0), rows]);
};
clearInterval(window.__bfs4kWatch);
window.__bfs4kWatch = setInterval(record, 20);  // and models that a re-sent document brings
"""


def texts(element, selector: str) -> list[str]:
    """The text of each element matching `selector` inside `element`, read without laying the page
    out (WebDriver's .text computes every style it covers: seconds on a large notebook, while a
    run streams)."""
    return element.parent.execute_script(
        "return Array.from(arguments[0].querySelectorAll(arguments[1])).map((e) => e.textContent.trim())",
        element, selector)


def tab_buttons(container, title: str):
    from selenium.webdriver.common.by import By

    return [t for t in container.find_elements(By.CSS_SELECTOR, ".lm-TabBar-tab") if t.text.strip() == title]


# ------------------------------------------------------------------ the tests

@pytest.mark.slow
def test_quickstart_in_chromium_streams_levels_opens_tabs_and_classroom_and_survives_a_reload(browser, lab):
    from selenium.webdriver.common.by import By

    name = QUICKSTART
    open_and_run_all(browser, lab, name)
    explorer = explorer_widget(browser)
    wait_for("the Explorer's plots", lambda: sources(browser, "levels", ["run"]))
    check_page(browser, name)
    shoot_outputs(browser, name)
    before = {r for s in sources(browser, "levels", ["run"]) for r in s["run"]}
    browser.execute_script("arguments[0].scrollIntoView()", explorer)
    buttons(explorer, "Run")[0].click()
    label = f"#{len(before) + 1} "  # the level table holds every run so far: this is the next
    status = wait_for("the run's status", lambda: [t for t in texts(explorer, ".widget-html-content")
                                                   if t.startswith(f"✓ {label}") and "valid BFS" in t])[0]
    levels = int(re.search(r": (\d+) levels", status)[1])  # a CPU technique records one more, empty

    def new_run():
        rows = [s for s in sources(browser, "levels", ["run", "level"]) if s["run"] and s["run"][0].startswith(label)]
        return rows if rows and len(rows[0]["level"]) >= levels else None

    (run,) = wait_for("the new run's levels in the frontier plot", new_run)
    assert run["level"] == list(range(len(run["level"])))  # one point per record, in order
    browser.save_screenshot(str(artifacts_dir() / "quickstart.png"))

    # Each tool tab shows its panel when first clicked, the first tab too.
    tabs = explorer.find_element(By.CSS_SELECTOR, ".jupyter-widget-tab, .widget-tab")
    for title, words in (("Tuning", "Sweep one knob"), ("Comparison", "technique"), ("Duplicates", "duplicate"),
                         ("Export", "report")):
        tab_buttons(tabs, title)[0].click()
        shown = lambda: [p for p in tabs.find_elements(By.CSS_SELECTOR, ".widget-tab-contents > *, "
                                                                        ".jupyter-widget-tab-contents > *")
                         if p.is_displayed() and words.lower() in p.text.lower()]
        browser.execute_script("arguments[0].scrollIntoView()", tabs)
        panel = wait_for(f"the {title} tab's panel", shown, 120)[0]
        assert panel.size["height"] > 60, (title, panel.size)
        tabs.screenshot(str(artifacts_dir() / f"quickstart-tab-{title.lower()}.png"))

    # The Classroom button opens a classroom drawn at level 0 of its run: the source ringed red.
    buttons(explorer, "Classroom")[0].click()
    room = wait_for("the classroom below the plots", lambda: explorer.find_elements(By.CSS_SELECTOR, ".bfs4k-classroom"))[0]
    nodes = wait_for("the classroom's drawing at level 0", lambda: [
        s for s in sources(browser, "classroom-nodes", ["line_color", "fill_color"], f"{PANEL} .bfs4k-classroom")
        if s["line_color"] and s["line_color"][0] == "#d62728"])
    assert nodes[0]["fill_color"][0] != "#e0e0e0"
    browser.execute_script("arguments[0].scrollIntoView()", room)
    room.screenshot(str(artifacts_dir() / "quickstart-classroom.png"))
    check_page(browser, name)

    # Reloaded (saved first, and what it printed checked), the page shows every run the kernel holds.
    runs = {r for s in sources(browser, "levels", ["run"]) for r in s["run"]}
    check_saved(browser, lab, name)
    browser.refresh()
    wait_for("the Explorer's runs after the reload", lambda: {r for s in sources(browser, "levels", ["run"])
                                                             for r in s["run"]} == runs)
    browser.execute_script("arguments[0].scrollIntoView()", explorer_widget(browser))
    browser.save_screenshot(str(artifacts_dir() / "quickstart-reloaded.png"))
    check_page(browser, name)

    # The report the notebook wrote, of every technique's run: its tables whole (scrolling inside
    # their boxes, never widening the page), its plots in sets whose legends name at most 6 runs.
    base, token = lab
    browser.get(f"{base}/files/quickstart-report.html?token={token}")
    legends = wait_for("the report's plots", lambda: browser.execute_script(_REPORT_LEGENDS_JS), 60)
    browser.save_screenshot(str(artifacts_dir() / "quickstart-report.png"))
    assert len(legends) >= 2 * 5 and max(legends) <= 6, legends  # several sets of the five plots
    bad = unreadable(browser, browser.find_element(By.TAG_NAME, "body"))
    assert not bad, bad
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


#: The number of entries each run legend of a standalone Bokeh page shows (none until it is drawn).
_REPORT_LEGENDS_JS = """
if (typeof Bokeh === 'undefined' || !Bokeh.documents.length) return null;
const out = [];
for (const doc of Bokeh.documents) {
  for (const m of doc._all_models.values()) {
    if (m.type === 'Legend' && m.name === 'runs') out.push(m.items.filter((i) => i.visible).length);
  }
}
return out.length ? out : null;
"""

STREAM_GRAPH = "gen:grid2d:rows=2,cols=36"  # 37 levels from a corner
STREAM_CELLS = [
    "from explorer import backend\ninfo = backend.select('simulator')",
    "from explorer.ui.widgets import Explorer\n"
    f"ex = Explorer(graph='{STREAM_GRAPH}', source=0, technique='topdown-queue')\nex",
]


@pytest.mark.slow
def test_a_run_of_many_levels_reaches_the_browser_in_several_updates(browser, lab):
    # 37 levels, each its own launch: they reach the plots while the run goes on, not all at its end.
    write_notebook(lab, "stream.ipynb", STREAM_CELLS)
    open_and_run_all(browser, lab, "stream.ipynb")
    explorer = explorer_widget(browser)
    browser.execute_script("arguments[0].scrollIntoView()", explorer)
    label = run_label(1, "topdown-queue", load_graph_spec(STREAM_GRAPH).name)
    browser.execute_script(_WATCH_RUN_JS, label)
    buttons(explorer, "Run")[0].click()
    wait_for("the run's status", lambda: any("valid BFS" in t for t in texts(explorer, ".widget-html-content")))
    updates = wait_for("the last level in the plots", lambda: (u := browser.execute_script(
        "return window.__bfs4kUpdates")) and u[-1][1] == 37 and u)
    browser.save_screenshot(str(artifacts_dir() / "stream.png"))
    (artifacts_dir() / "stream-updates.json").write_text(json.dumps(updates))
    # Levels arrived while the run went on, not in one burst at its end. (A browser of a loaded
    # machine draws fewer, larger updates: one every 0.4 s at most, each as fast as it can.)
    assert len(updates) >= 3 and updates[-2][1] < 37 and updates[-1][0] - updates[0][0] >= 500, updates
    check_page(browser, "stream.ipynb")


SSSP_CELLS = [
    "from explorer import backend\ninfo = backend.select('simulator')",
    "from explorer.ui.widgets import Explorer\n"
    "ex = Explorer(graph='gen:grid2d:rows=3,cols=4,weights=integer', source=0, problem='shortest paths')\nex",
    "r = ex.run(technique='delta-stepping')\nroom = ex.open_classroom()\nroom.step()\nr.validation",
    "ex.tools.selected_index = 1\nruns = ex.tools.panel('comparison').compare([('bellman-ford', {'block_threads': 32})])",
]


@pytest.mark.slow
def test_shortest_paths_mode_in_chromium_draws_its_plots_and_classroom(browser, lab):
    write_notebook(lab, "sssp.ipynb", SSSP_CELLS)
    open_and_run_all(browser, lab, "sssp.ipynb")
    explorer = explorer_widget(browser)
    wait_for("the run's status", lambda: any("distances equal scipy" in t
                                             for t in texts(explorer, ".widget-html-content")))
    rows = wait_for("the iterations in the plots", lambda: [
        s for s in sources(browser, "sssp-iterations", ["frontier_in"]) if s["frontier_in"]])
    assert rows, "no iteration reached the plots"
    wait_for("the weighted classroom's drawing", lambda: [
        s for s in sources(browser, "weighted-nodes", ["dist"]) if "0" in s["dist"]])
    # the Comparison tab is the shortest paths' own: its runs' iterations drawn, its ranking shown
    wait_for("the comparison's ranking", lambda: any("Ranking (shortest-path wall time" in t
                                                     for t in texts(explorer, ".widget-html-content")))
    wait_for("the comparison's iterations in its plots", lambda: len([
        s for s in sources(browser, "sssp-iterations", ["frontier_in"]) if s["frontier_in"]]) >= 2)
    browser.save_screenshot(str(artifacts_dir() / "sssp.png"))
    check_page(browser, "sssp.ipynb")


@pytest.mark.slow
def test_classroom_in_chromium_is_drawn_when_shown_and_run_and_step_recolour_it(browser, lab):
    from selenium.webdriver.common.by import By

    name = CLASSROOM
    open_and_run_all(browser, lab, name)
    check_saved(browser, lab, name)
    rooms = f"{PANEL} .bfs4k-classroom"
    # Every classroom of the lesson is drawn at the level its text speaks of, without a click:
    # parts 2 and 4 run and step theirs from code before showing them.
    shown = wait_for("the three classrooms drawn", lambda: (s := sources(browser, "classroom-nodes", ["fill_color"], rooms))
                     and len(s) == 3 and all(set(x["fill_color"]) != {"#e0e0e0"} for x in s) and s)
    assert len(shown) == 3
    rings = sources(browser, "classroom-duplicates", ["x"], rooms)
    assert len(rings) == 3 and len(rings[2]["x"]) == 1  # part 4 at level 1: vertex 8's magenta ring
    for i, room in enumerate(browser.find_elements(By.CSS_SELECTOR, rooms)):
        browser.execute_script("arguments[0].scrollIntoView()", room)
        room.screenshot(str(artifacts_dir() / f"classroom-part{(1, 2, 4)[i]}.png"))
    check_page(browser, name)
    shoot_outputs(browser, name)

    first = f"{PANEL} .bfs4k-classroom"  # the lesson's first classroom: the teaching graph, topdown-queue
    room = browser.find_element(By.CSS_SELECTOR, first)
    browser.execute_script("arguments[0].scrollIntoView()", room)

    def nodes():
        found = sources(browser, "classroom-nodes", ["fill_color", "line_color"], first)
        return found[0] if found else None

    def frontier_levels():
        found = sources(browser, "classroom-frontier", ["level"], first)
        return found[0]["level"] if found else None

    # While it runs, Step and Play cannot be pressed (a step pressed then would act on the old run).
    # A MutationObserver gets every change of the room's DOM in order, even when a busy browser
    # applies the run's messages in one burst, so the states are replayed rather than polled.
    browser.execute_script("""
      const room = arguments[0];
      const watched = Array.from(room.querySelectorAll('button')).filter((x) => ['Step', 'Play'].includes(x.textContent.trim()));
      const disabled = new Map(watched.map((b) => [b, b.disabled]));
      const isLevel = (n) => n.nodeType === 1 && (n.matches('.bfs4k-level') || n.querySelector('.bfs4k-level'));
      window.__bfs4kBusy = [];
      if (window.__bfs4kBusyWatch) window.__bfs4kBusyWatch.disconnect();
      window.__bfs4kBusyWatch = new MutationObserver((records) => {
        records.forEach((r, i) => {
          if (r.type === 'attributes' && disabled.has(r.target)) {
            // the value this change set is the next change's old value, or the present one
            const next = records.slice(i + 1).find((q) => q.type === 'attributes' && q.target === r.target);
            disabled.set(r.target, next ? next.oldValue !== null : r.target.disabled);
          } else if (r.type === 'childList') {
            const label = Array.from(r.addedNodes).find(isLevel);
            if (label && label.textContent.includes('running')) window.__bfs4kBusy.push(watched.map((b) => disabled.get(b)));
          }
        });
      });
      window.__bfs4kBusyWatch.observe(room, {subtree: true, childList: true, attributes: true,
                                             attributeFilter: ['disabled'], attributeOldValue: true});""", room)
    buttons(room, "Run")[0].click()
    wait_for("level 0 after Run", lambda: frontier_levels() == [0] and "level 0 of" in " ".join(texts(room, ".bfs4k-level")))
    wait_for("the run's status", lambda: "valid BFS" in " ".join(texts(room, ".bfs4k-status")))
    busy = browser.execute_script("window.__bfs4kBusyWatch.disconnect(); return window.__bfs4kBusy")
    assert busy and all(all(d) for d in busy), busy
    shown = nodes()
    assert shown["line_color"][0] == "#d62728"  # the source is the frontier: ringed red
    room.screenshot(str(artifacts_dir() / "classroom-run.png"))
    picture = room.screenshot_as_png

    buttons(room, "Step")[0].click()
    wait_for("level 1 after Step", lambda: frontier_levels() == [0, 1] and "level 1 of" in " ".join(texts(room, ".bfs4k-level")))
    stepped = wait_for("the drawing to recolour", lambda: (n := nodes()) != shown and n)
    assert stepped["fill_color"] != shown["fill_color"]  # level 2's vertices are reached now
    assert [stepped["line_color"][v] for v in (1, 2, 3)] == ["#d62728"] * 3  # the new frontier
    room.screenshot(str(artifacts_dir() / "classroom-step.png"))
    assert room.screenshot_as_png != picture  # and the pixels changed with it

    while buttons(room, "Step")[0].is_enabled():  # to the last level: one point per level
        level = len(frontier_levels())
        buttons(room, "Step")[0].click()
        wait_for(f"level {level} after Step", lambda: len(frontier_levels()) == level + 1)
    assert frontier_levels() == list(range(fig2_levels()))
    room.screenshot(str(artifacts_dir() / "classroom-last-level.png"))

    # Play: from level 0 again, the browser's timer steps to the last level and stops.
    buttons(room, "Play")[0].click()
    wait_for("playing", lambda: buttons(room, "Stop")[0].is_enabled() and len(frontier_levels()) < fig2_levels())
    wait_for("Play to reach the last level and stop", lambda: not buttons(room, "Stop")[0].is_enabled()
             and frontier_levels() == list(range(fig2_levels())), 60)
    check_page(browser, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [TUNING, DUPLICATES, MULTI_SEARCH])
def test_notebook_runs_in_chromium_with_every_figure_drawn(browser, lab, name):
    open_and_run_all(browser, lab, name)
    check_page(browser, name)
    check_saved(browser, lab, name)
    shoot_outputs(browser, name)
    if name == MULTI_SEARCH:
        # Run shows the application's values: ranked in a table, and as the drawing's colours.
        from selenium.webdriver.common.by import By

        tables = [t.text for t in browser.find_elements(By.CSS_SELECTOR, f"{PANEL} .bfs4k-values")]
        assert len(tables) == 2 and all("highest first" in t for t in tables), tables
        coloured = sources(browser, "multisearch-values", ["value"])
        assert len(coloured) == 2 and all(any(isinstance(v, (int, float)) for v in s["value"]) for s in coloured)


def test_ci_runs_exactly_the_readme_test_command():
    # README and .ci/run must agree, including the browser install step this test needs in CI.
    readme = (ROOT / "README.md").read_text()
    block = readme.split("# install everything and run the full test suite", 1)[1].split("```", 1)[0]
    block = block.split("\n", 1)[1]  # the rest of the heading's comment line
    command = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert command and ci[-1] == command[0].strip(), (ci[-1], command)
    assert "chromium chromium-driver" in ci[-1] and ci[-1].endswith("python3 -m pytest -n 2")


# ------------------------------------------------------------------ numbers and text a person reads
# Whole labels, legends beside the data, and noise called noise, in the Explorer's controls, its
# Tuning and Duplicates tabs and its plots, in a notebook of its own written into the running JupyterLab.

#: Text a person cannot read whole inside `arguments[0]`: [what, text, detail] for
#: - "clipped": a text reaching past the edge of an ancestor that hides what overflows it (a
#:   toggle button's "rand…", a label's ellipsis: the content box; overflow hidden: the padding box);
#: - "spills": a text reaching past its own widget, under the next one (a label drawn as "knol");
#: - "select": a drop-down whose chosen option is wider than the box showing it;
#: - "scrolls": a box of controls squeezed until it scrolls sideways;
#: - "broken": a word of a table cell or of printed output split over two lines (a table squeezed
#:   until words break; JupyterLab breaks printed lines wider than the output anywhere).
_UNREADABLE_JS = """
const root = arguments[0];
const out = [];
const cut = (t) => t.length > 80 ? t.slice(0, 77) + '...' : t;
const px = (v) => parseFloat(v) || 0;
// The box a text must stay inside for an ancestor that clips, or null for one that does not.
const room = (el) => {
  const s = getComputedStyle(el);
  const b = el.getBoundingClientRect();
  const ellipsis = s.textOverflow === 'ellipsis' && s.overflowX !== 'visible';
  if (!ellipsis && !['hidden', 'clip'].includes(s.overflowX)) return null;
  const inset = px(s.borderLeftWidth) + (ellipsis ? px(s.paddingLeft) : 0);
  const outset = px(s.borderRightWidth) + (ellipsis ? px(s.paddingRight) : 0);
  return [b.left + inset, b.right - outset];
};
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const text = node.textContent.trim();
  const el = node.parentElement;
  if (!text || !el || !el.offsetParent || el.closest('.bk-Canvas, .bk-root canvas, style, script')) continue;
  const range = document.createRange();
  range.selectNodeContents(node);
  const r = range.getBoundingClientRect();
  if (r.width === 0) continue;
  let clipped = false, scrolls = false;
  for (let a = el; a && a !== root.parentElement && !clipped; a = a.parentElement) {
    if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) { scrolls = true; break; }  // reachable
    const box = room(a);
    if (box && (r.left < box[0] - 1 || r.right > box[1] + 1)) {
      out.push(['clipped', cut(text), `${Math.round(r.width)} px of text in ${Math.round(box[1] - box[0])} px (${a.className})`]);
      clipped = true;
    }
  }
  const widget = el.closest('.jupyter-widgets');
  if (!clipped && !scrolls && widget) {
    const b = widget.getBoundingClientRect();
    if (r.left < b.left - 1 || r.right > b.right + 1) {
      out.push(['spills', cut(text), `${Math.round(r.left - b.left)}..${Math.round(r.right - b.left)} px in a widget of ${Math.round(b.width)} px (${widget.className})`]);
    }
  }
  if (el.closest('td, th, pre')) {
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const w = document.createRange();
      w.setStart(node, m.index);
      w.setEnd(node, m.index + m[0].length);
      const lines = new Set(Array.from(w.getClientRects()).map((q) => Math.round(q.top)));
      if (lines.size > 1) out.push(['broken', m[0], `over ${lines.size} lines in "${cut(text)}"`]);
    }
  }
}
for (const box of root.querySelectorAll('.widget-box')) {  // a row of controls squeezed until it scrolls
  if (box.offsetParent && box.scrollWidth > box.clientWidth + 1) {
    out.push(['scrolls', cut(box.innerText.trim().replace(/\\s+/g, ' ')), `${box.scrollWidth} px in ${box.clientWidth} px`]);
  }
}
const ctx = document.createElement('canvas').getContext('2d');
for (const sel of root.querySelectorAll('select')) {
  if (!sel.offsetParent || sel.multiple || sel.size > 1 || sel.selectedIndex < 0) continue;
  const s = getComputedStyle(sel);
  ctx.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
  const text = sel.options[sel.selectedIndex].text;
  const room = sel.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  if (ctx.measureText(text).width > room) out.push(['select', text, `${Math.round(room)} px`]);
}
return out;
"""


def unreadable(driver, element) -> list:
    return driver.execute_script(_UNREADABLE_JS, element)


#: Legends drawn inside a plot's frame, over its data: (plot title, legend labels) of each plot of
#: the page with a Legend among its `center` renderers.
_LEGENDS_INSIDE_JS = """
const out = [];
const docs = new Set();
for (const view of Bokeh.index.roots) {
  const doc = view.model.document;
  if (!doc || docs.has(doc)) continue;
  docs.add(doc);
  for (const m of doc._all_models.values()) {
    if (!m.center || !['Figure', 'Plot'].includes(m.type)) continue;
    for (const c of m.center) {
      if (c.type === 'Legend') out.push([m.title ? m.title.text : '', c.items.map((i) => JSON.stringify(i.label))]);
    }
  }
}
return out;
"""

#: The titles of the plots' run legends (where they say which runs they keep).
_RUN_LEGEND_TITLES_JS = """
const out = new Set();
for (const view of Bokeh.index.roots) {
  const doc = view.model.document;
  if (!doc) continue;
  for (const m of doc._all_models.values()) {
    if (m.type === 'Legend' && m.name === 'runs') out.add(m.title || '');
  }
}
return Array.from(out);
"""

#: A sweep whose two settings are within noise (their runs overlap), on a two-knob heatmap.
_NOISY_SWEEP = """
from explorer.sweep import SweepPoint, SweepResult
ts = {(4, 0): [100.0, 104.0, 99.0], (4, 1): [98.4, 103.0, 97.0], (32, 0): [150.0, 151.0, 152.0],
      (32, 1): [60.0, 61.0, 62.0]}
noisy = SweepResult(graph='bfs4k_fig2', source=0, technique='bfs4k', axes={'K1': [4, 32], 'K4': [0, 1]}, base={},
                    repeats=3, device={'backend': 'simulator'},
                    points=[SweepPoint({'K1': a, 'K4': b}, t, t, 4, True, 'ok') for (a, b), t in ts.items()])
noisy.points[-1].times_ms = [99.0, 99.5, 130.0]  # the fastest median, within noise of K1=4, K4=1
noisy.save('noisy-sweep.json')
"""

NUMBERS_CELLS = [
    # The Explorer with luo-hierarchical's knobs open (its two 'block_thr…' labels), then every
    # technique's knob page.
    "from explorer.ui.widgets import Explorer\n"
    "ex = Explorer(graph='bfs4k_fig2', source=0, technique='luo-hierarchical')\n"
    "ex.knobs_panel.selected_index = 0\n"
    "ex",
    "import ipywidgets as W\n"
    "W.VBox(list(ex.knob_pages.children))",
    # Seven runs: the runs table, and plots that keep six of them; a sweep of three runs a point,
    # printed as text.
    "from explorer.sweep import format_sweep\n"
    "ex.technique.value = 'topdown-queue'\n"
    "for _ in range(7):\n"
    "    ex.run()\n"
    "tuning = ex.tools.panel('tuning')\n"
    "swept = tuning.run_sweep(knob1='block_threads', values1='32,64')\n"
    "print(format_sweep(swept))",
    # The Duplicates tab after a run; the Tuning tab showing a sweep within noise, as a heatmap.
    _NOISY_SWEEP + "ex.technique.value = 'bfs4k'\n"
    "prov = ex.tools.panel('duplicates').run()\n"
    "tuning.open_sweep('noisy-sweep.json')\n"
    "ex.tools.selected_index = 2",
    # Fig. 12's figure as notebook 03 draws it; buttons that open the Tuning and Comparison tabs
    # from the kernel.
    "from bokeh.io import show\n"
    "from explorer.ui.duplicates_panel import frontier_sizes_figure\n"
    "show(frontier_sizes_figure([1, 3, 4, 2], {'VirtualWarp4 + Hash64': prov.result.levels}, 'Fig. 12'))\n"
    "ex.tools.panel('comparison')\n"
    "opens = [W.Button(description=f'open {t}') for t in ('Tuning', 'Comparison')]\n"
    "for i, b in zip((0, 1), opens):\n"
    "    b.on_click(lambda _, i=i: setattr(ex.tools, 'selected_index', i))\n"
    "W.HBox(opens)",
]


def tool_tabs(driver):
    """The Explorer's tool tabs (Tuning, Comparison, Duplicates, Export), scrolled into view."""
    from selenium.webdriver.common.by import By

    tabs = wait_for("the tool tabs", lambda: [t for t in driver.find_elements(By.CSS_SELECTOR, f"{PANEL} .widget-tab")
                                              if "Duplicates" in t.text])[0]
    driver.execute_script("arguments[0].scrollIntoView()", tabs)
    return tabs


@pytest.mark.slow
def test_numbers_text_whole_legends_beside_the_data_noise_named(browser, lab):
    """Every label, button and drop-down of the Explorer, its knob pages (every technique), its
    Tuning and Duplicates tabs and the runs table shows its text whole; no printed line or table
    cell breaks a word; no legend sits inside a plot; a sweep within noise says so; plots that keep
    6 of 7 runs say so."""
    from selenium.webdriver.common.by import By

    write_notebook(lab, "numbers.ipynb", NUMBERS_CELLS)
    open_and_run_all(browser, lab, "numbers.ipynb")
    panel = browser.find_element(By.CSS_SELECTOR, PANEL)
    shots = artifacts_dir()
    for i, out in enumerate(browser.find_elements(By.CSS_SELECTOR, f"{PANEL} .jp-OutputArea-output")):
        if out.size["height"] > 0:
            browser.execute_script("arguments[0].scrollIntoView()", out)
            out.screenshot(str(shots / f"numbers-output-{i}.png"))
    tabs = tool_tabs(browser)
    try:
        wait_for("the Duplicates tab's tables", lambda: "best per block" in tabs.text)
    finally:
        tabs.screenshot(str(shots / "numbers-duplicates.png"))
    bad = unreadable(browser, tabs)
    buttons(panel, "open Tuning")[0].click()
    tabs = tool_tabs(browser)
    try:
        wait_for("the sweep's verdict", lambda: "Within noise" in tabs.text)
    finally:
        tabs.screenshot(str(shots / "numbers-tuning.png"))
    assert "Apply fastest median" in tabs.text and "not GPU times" in tabs.text
    bad += unreadable(browser, panel)  # what is shown: the Explorer, its knobs, the Tuning tab, the text
    buttons(panel, "open Comparison")[0].click()
    tabs = tool_tabs(browser)
    wait_for("the Comparison tab", lambda: "Add the Explorer's setting" in tabs.text)
    tabs.screenshot(str(shots / "numbers-comparison.png"))
    bad += unreadable(browser, tabs)
    assert not bad, "\n".join(map(str, bad))
    inside = browser.execute_script(_LEGENDS_INSIDE_JS)
    assert not inside, inside
    # Seven runs, six plotted: every run legend of the Explorer's plots says so.
    assert browser.execute_script(_RUN_LEGEND_TITLES_JS) == ["the last 6 of 7 runs (the plots keep 6)"]
    # The heatmap's cell text: black on its light (slow, yellow) end, white on its dark (fast) end.
    cells = {ms: color for s in sources(browser, "sweep_points", ["median_ms", "text_color"])
             for ms, color in zip(s["median_ms"], s["text_color"])}
    assert cells[max(cells)] == "black" and cells[min(cells)] == "white", cells
    errors = wait_for("the page to settle", lambda: [error_outputs(browser)])[0]
    assert not errors, errors
    assert not console_errors(browser)
