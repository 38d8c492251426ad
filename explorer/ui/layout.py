"""Widths a person can read: labels, buttons and drop-downs as wide as their text, and the knob
pages laid out so every knob's name shows whole (the Explorer and its panels share them).

ipywidgets gives a description label 80 px and cuts what is longer ('single_blo…'); a label beside
a narrower box spills under the next control ('knol'). So widths come from the text: `text_px`
estimates, from DejaVu Sans' advance widths (the widest usual sans-serif font, which browsers on
Linux draw the widgets in), how many pixels a text needs.
"""
from __future__ import annotations

import html
import math

import ipywidgets as W

from ..knobs import KnobSpec


def _esc(x) -> str:
    return html.escape(str(x))


#: Advance widths in em of DejaVu Sans, the widest of the usual sans-serif fonts (browsers on Linux
#: draw the widgets' text in it; Arial, Helvetica and Segoe UI are narrower), rounded up.
_EM = {**dict.fromkeys("ijl'", 0.28), **dict.fromkeys("IJ", 0.3), **dict.fromkeys(" .,", 0.32),
       **dict.fromkeys(":;/|", 0.34), "f": 0.36, "-": 0.37, **dict.fromkeys("t()[]", 0.4), "r": 0.42,
       **dict.fromkeys("_§*", 0.5), "s": 0.53, "z": 0.53, "c": 0.55, "L": 0.56, "F": 0.58, "k": 0.58,
       **dict.fromkeys("vxyP", 0.6), **dict.fromkeys("aeoTY", 0.62), **dict.fromkeys("hnuE", 0.64),
       **dict.fromkeys("bdgpqS0123456789", 0.64), "K": 0.66, **dict.fromkeys("AV", 0.69),
       **dict.fromkeys("BRXZC", 0.7), "U": 0.74, **dict.fromkeys("HN", 0.76), **dict.fromkeys("DG&OQ", 0.79),
       "w": 0.82, **dict.fromkeys("=+<>#", 0.84), "M": 0.87, "%": 0.95, "m": 0.98, "W": 0.99}
#: The widgets' font size (JupyterLab's --jp-widgets-font-size).
WIDGET_FONT_PX = 13


def text_px(text: str, font_px: float = WIDGET_FONT_PX) -> int:
    """Pixels `text` needs on one line in the widgets' font, rounded up (a character not in the
    table counts a whole em): what a label's or a button's width must hold to show it whole."""
    return math.ceil(sum(_EM.get(c, 1.0) for c in str(text)) * font_px) + 2


#: Room a drop-down takes beside its chosen option's text (padding and the arrow).
SELECT_CHROME_PX = 36
#: Room a button takes beside its label (padding), and beside an icon.
BUTTON_CHROME_PX = 22
ICON_PX = 20


def select_px(options, least: int = 0) -> int:
    """Width of a drop-down that shows each of `options` (labels or (label, value) pairs) whole."""
    labels = [o[0] if isinstance(o, tuple) else o for o in options]
    return max([least, *(text_px(str(x)) + SELECT_CHROME_PX for x in labels)])


def button_px(text: str, icon: bool = False) -> int:
    return text_px(text) + BUTTON_CHROME_PX + (ICON_PX if icon else 0)


def fit_description(control: W.DOMWidget) -> W.DOMWidget:
    """Give a text box's own description label the width its text needs (ipywidgets' 80 px
    cuts 'range values'), and widen the control by what the label took beyond 80 px."""
    need = text_px(control.description)
    control.style.description_width = f"{need}px"
    width = control.layout.width
    if width and width.endswith("px"):
        control.layout.width = f"{int(float(width[:-2])) + max(0, need - 80)}px"
    return control


#: Space between a label and its control (ipywidgets' label margin).
LABEL_GAP_PX = 8


def labelled(control: W.DOMWidget, label_width: str | int | None = None) -> W.HBox:
    """`control` behind a label of its description that shows its tooltip on hover.

    ipywidgets 8's selection views (Dropdown, Select, ToggleButtons) never put `tooltip` on the
    description label, and on the control itself only when there is no description: a Dropdown with
    a description shows no tooltip in the browser (text boxes do). So the description moves into
    this label, which carries the tooltip as its title, and the control keeps the tooltip with no
    description, which those views draw on the control.

    The label is at least `label_width` (pixels; labels of a column share one) and always as wide
    as its text. Its width is set by min-width and max-width: JupyterLab's sanitizer drops a
    `width` style, and ipywidgets' label class would otherwise be 80 px, cutting longer text.
    """
    text, tip = control.description, control.tooltip or ""
    control.description = ""
    px = max(_px(label_width), text_px(text))
    label = W.HTML(f"<div class='widget-label' title='{_esc(tip)}' style='min-width:{px}px;max-width:{px}px;"
                   f"margin-right:0'>{_esc(text)}</div>",
                   layout=W.Layout(width=f"{px + LABEL_GAP_PX}px", flex="0 0 auto"))
    return W.HBox([label, control])


def _px(width) -> int:
    if width is None:
        return 0
    if isinstance(width, (int, float)):
        return int(width)
    if not str(width).endswith("px"):
        raise ValueError(f"a label width in pixels ('120px' or 120), not {width!r}")
    return int(float(str(width)[:-2]))


def knob_widget(spec: KnobSpec, value=None) -> W.ValueWidget:
    """A control for one knob: a dropdown for a set of choices, else a text box bounded by the range.
    Put it in the panel through `labelled`, which shows its tooltip."""
    value = spec.default if value is None else value
    tip = f"{spec.meaning} [{spec.section or 'explorer'}; {spec.describe_range()}; default {spec.default!r}]"
    common = dict(description=spec.name, tooltip=tip, layout=W.Layout(width=f"{knob_control_px(spec)}px"))
    if spec.choices is not None:
        return W.Dropdown(options=list(spec.choices), value=value, **common)
    if spec.kind is int:
        return W.BoundedIntText(value=value, min=int(spec.low), max=int(spec.high), **common)
    return W.BoundedFloatText(value=value, min=spec.low, max=spec.high, step=0.05, **common)


#: The narrowest knob control: a number box that shows 8 digits.
KNOB_CONTROL_PX = 150


def knob_control_px(spec: KnobSpec) -> int:
    """A knob control's width: its choices' longest label whole ('dynamic-virtual-warps')."""
    return select_px(spec.choices, KNOB_CONTROL_PX) if spec.choices is not None else KNOB_CONTROL_PX


#: Width a knob page may take: the Explorer's two plot columns and toolbar, less the Knobs box's padding.
KNOB_PAGE_PX = 900
KNOB_COLUMNS = 3


def knob_columns(specs) -> tuple[int, list[int]]:
    """How a technique's knob page lays out its knobs in reading order, row by row: (columns,
    the label width of each column). Each column's labels are as wide as its longest knob name, so
    the names show whole; as many columns (at most three) as fit KNOB_PAGE_PX."""
    specs = list(specs)
    for ncols in range(min(KNOB_COLUMNS, max(len(specs), 1)), 0, -1):
        cols = [specs[c::ncols] for c in range(ncols)]
        labels = [max(text_px(s.name) for s in col) for col in cols]
        widths = [lab + LABEL_GAP_PX + max(knob_control_px(s) for s in col) + 6 for lab, col in zip(labels, cols)]
        if sum(widths) <= KNOB_PAGE_PX or ncols == 1:
            return ncols, labels
    raise AssertionError("unreachable")


def knob_grid(widgets: dict, specs) -> W.GridBox:
    """The knob controls of one technique behind labels that show each name whole."""
    specs = list(specs)
    ncols, labels = knob_columns(specs)
    return W.GridBox([labelled(widgets[s.name], labels[i % ncols]) for i, s in enumerate(specs)],
                     layout=W.Layout(grid_template_columns=f"repeat({ncols}, max-content)", grid_gap="0 12px"))
