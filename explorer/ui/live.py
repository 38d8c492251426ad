"""Bokeh figures that live in a notebook page: BokehJS loaded inline, views that draw the current
state whenever they are drawn, and updates that reach the browser while a run goes on.

    load_bokehjs()                          # before the first figure of a page: no internet needed
    view = LiveBokehModel(layout)           # an ipywidget; displayed, reloaded: it shows the state now
    feed = LevelFeed(stream, "run 1", view) # levels to the plots at most every FEED_INTERVAL_S, each
    for lv in run: feed.add(lv)             #   batch one patch, handed to the browser before the run goes on
    feed.close()

jupyter_bokeh's BokehModel builds a new view from the document as it was when the model was made
and sends later changes only to views that exist: a figure changed before it is displayed (a
classroom run from code, then shown) or a page reloaded later would show that first state, empty. A
LiveBokehModel sends the document as it is now when a view is about to be drawn.

While a run holds the kernel's main thread (and the simulator's threads share the interpreter
lock), the kernel's IOPub thread, which sends every message to the browser, may not run for
seconds: the plots would then fill in one burst at the end. `flush_to_browser` waits until that
thread has sent what is queued, as `sys.stdout.flush()` does for printed text.
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Callable

from bokeh.core.serialization import Serializer
from bokeh.protocol import Protocol
from bokeh.protocol.messages.patch_doc import patch_doc
from jupyter_bokeh import BokehModel

#: At most this often a run's levels go to the browser (each batch one patch, flushed): a few
#: updates a second, which a browser on a loaded 2-core machine still draws one by one (each
#: costs it a repaint of every figure); every level of a slow run, many levels of a GPU's run.
FEED_INTERVAL_S = 0.4
#: How long a flush waits for the kernel's IOPub thread before the run goes on anyway.
FLUSH_TIMEOUT_S = 5.0


def load_bokehjs() -> None:
    """Put BokehJS into the page: a figure's view calls window.Bokeh and shows only "Javascript
    Error" without it, and only output_notebook() loads it. Inline, so that it works without
    internet (a classroom); BOKEH_RESOURCES=cdn chooses the CDN instead."""
    from bokeh.io import output_notebook
    from bokeh.resources import Resources
    from bokeh.settings import settings

    output_notebook(resources=Resources(mode=settings.resources(default="inline")), hide_banner=True)


class LiveBokehModel(BokehModel):
    """A BokehModel whose views always start from the document as it is now, and whose changes
    can go to the browser as one patch.

    `refresh()` re-sends the document (a container calls it just before it is displayed, and
    before it shows a model built earlier); a full state request, which is how the page asks for
    every widget when it reloads, gets the document as it is now too. Inside `one_patch()` every
    change waits and then goes as one message: the browser lays out and paints the figures once
    for all of them (once per change, a loaded browser falls seconds behind a run)."""

    _stale = False  # whether the document changed since render_bundle was made
    _held: tuple | None = None  # changes (encoded) waiting for the end of one_patch()

    def refresh(self) -> None:
        """Send the document as it is now, if it changed; existing views redraw from it."""
        if self._stale:
            self._stale = False
            self.render_bundle = self._model_to_traits(self._model)

    @contextlib.contextmanager
    def one_patch(self):
        if self._held is not None:  # already inside one
            yield
            return
        self._held = ([], [])  # encoded events, their buffers
        try:
            yield
        finally:
            (events, buffers), self._held = self._held, None
            if events:
                msg = patch_doc(patch_doc.create_header(), {}, {"events": events})
                msg.add_buffers(*buffers)
                self._send_message(msg)

    def _document_patched(self, event) -> None:
        self._stale = True
        if event.setter is self:  # the browser's own change: it has it
            return
        if self._held is None:
            self._send_message(Protocol().create("PATCH-DOC", [event]))
            return
        # Encoded now: a change refers to values that later changes of the batch modify in place
        # (a source's data replaced, then streamed into: encoded late, the rows came twice).
        doc = event.document
        serializer = Serializer(references=doc.models.synced_references)
        self._held[0].extend(serializer.encode([event]))
        self._held[1].extend(serializer.buffers)
        doc.models.flush_synced(lambda model: not serializer.has_ref(model))

    def _send_message(self, msg) -> None:
        # As BokehModel._document_patched sends its one event: header, metadata, content, buffers.
        for part in (msg.header_json, msg.metadata_json, msg.content_json):
            self.send({"msg": "patch", "payload": part})
        for buffer in msg.buffers:
            self.send({"msg": "patch", "payload": json.dumps(buffer.ref)})
            self.send({"msg": "patch"}, [buffer.to_bytes()])

    def get_state(self, key=None, drop_defaults=False):
        if key is None and self._stale:
            # The whole state is asked for when the page reloads: bring the bundle up to date
            # without an update message of its own (the reply carries it).
            self._stale = False
            self._trait_values["render_bundle"] = self._model_to_traits(self._model)
        return super().get_state(key, drop_defaults)

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()
        self.refresh()
        return super()._repr_mimebundle_(**kwargs)


def refresh_views(widget) -> None:
    """`refresh()` every LiveBokehModel inside `widget` (an ipywidgets container tree)."""
    if isinstance(widget, LiveBokehModel):
        widget.refresh()
    for child in getattr(widget, "children", ()):
        refresh_views(child)


def _iopub_thread():
    """The running kernel's IOPub thread, or None outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:
        return None
    thread = getattr(kernel, "iopub_thread", None) or getattr(getattr(kernel, "iopub_socket", None), "io_thread", None)
    return thread if hasattr(thread, "schedule") else None


def flush_to_browser(timeout: float = FLUSH_TIMEOUT_S) -> bool:
    """Wait until the kernel's IOPub thread has sent every message queued so far (widget and
    figure updates), at most `timeout` seconds. False outside a kernel or on time-out."""
    io = _iopub_thread()
    worker = getattr(io, "thread", None)
    if io is None or worker is None or not worker.is_alive() or worker is threading.current_thread():
        return False
    sent = threading.Event()
    io.schedule(sent.set)  # runs after everything scheduled before it
    return sent.wait(timeout)


class LevelFeed:
    """A run's levels into a LevelStream as they come, in batches at most every `interval`
    seconds (a level after a longer gap goes at once); each batch is one patch of `view` (when
    given), and is flushed to the browser before the run goes on. `on_batch(last_level)` runs
    first (the status line), so that what it says and what the plots show arrive together."""

    def __init__(self, stream, label: str, view: LiveBokehModel | None = None, interval: float | None = None,
                 on_batch: Callable | None = None, flush: Callable[[], object] | None = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.stream, self.label, self.view = stream, label, view
        self.interval = FEED_INTERVAL_S if interval is None else interval
        self._on_batch, self._clock = on_batch, clock
        self._flush = flush or (lambda: flush_to_browser())
        self._pending: list = []
        self._last = -float("inf")
        self.batches = 0

    def add(self, level) -> None:
        self._pending.append(level)
        if self._clock() - self._last >= self.interval:
            self.push()

    def push(self) -> None:
        if not self._pending:
            return
        levels, self._pending = self._pending, []
        with self.view.one_patch() if self.view is not None else contextlib.nullcontext():
            self.stream.push_many(levels, self.label)
        if self._on_batch is not None:
            self._on_batch(levels[-1])
        self._flush()
        self.batches += 1
        self._last = self._clock()

    def close(self) -> None:
        """Push what is left."""
        self.push()
