"""The cost model `auto` chooses by: each candidate's time on a ladder of generated graphs, measured
on a GPU (`python3 -m explorer calibrate`), turned into a prediction for any graph.

A candidate's prediction is a sum of costs the searches have (a fixed part, per level, per arc, per
vertex, per vertex and level, per unit of the largest degree: a hub one thread walks), its coefficients fitted non-negative
to the ladder's times by relative error, then corrected by how far the fit missed on the ladder
graphs nearest in shape (levels, mean degree, skew, size): on a ladder graph itself the prediction
is its measured time. The calibration file keeps the measurements, never the fit: a model is
refitted from them when loaded (milliseconds), so the file stays what was measured."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..graphs.stats import SearchFeatures

FORMAT = 1
SHIPPED = Path(__file__).parent / "calibrations"
#: The calibration used on a GPU that has none of its own (shipped with the package).
DEFAULT_GPU = "NVIDIA H100 80GB HBM3"
#: The squared distance at which a ladder graph's miss weighs e^-1/2 of the nearest one's: small, so
#: that a ladder graph's prediction is its own measurement. Leave-one-graph-out on the H100's ladder
#: of 36 graphs, its picks are 1.078x the best on the geometric mean with 0.1 (worst 1.72x, hubs18),
#: 1.074-1.118x with values from 0.05 to 2.
NEAR = 0.1
TERMS = ("fixed", "per level", "per arc", "per vertex", "per vertex and level", "per unit of the largest degree")


class CalibrationError(ValueError):
    """A calibration file that cannot be read or does not hold what `auto` needs."""


def _terms(f: SearchFeatures) -> np.ndarray:
    return np.array([1.0, f.levels, f.arcs, f.vertices, float(f.vertices) * f.levels, f.max_degree])


def _point(f: SearchFeatures) -> np.ndarray:
    """Where a graph sits among the ladder's: one unit is about a doubling of what matters most."""
    return np.array([math.log2(max(f.vertices, 1)) / 2, math.log2(max(f.avg_degree, 1.0)),
                     math.log2(max(f.levels, 1)), math.log2(max(f.skew, 1.0)), 2 * f.peak])


def file_name(gpu: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", gpu).strip("_") + ".json"


@dataclass
class Calibration:
    """Measured times: `times[candidate][i]` is the median elapsed ms of that candidate on ladder graph
    i (None: it cannot run there), over `runs[candidate][i]` runs."""

    device: dict  # the GPU's name, driver, versions and the date (backend.BackendInfo.as_dict())
    graphs: list[dict]  # {"name", "features": SearchFeatures fields}
    times: dict[str, list]
    runs: dict[str, list] = field(default_factory=dict)
    origin: str = ""  # the file it was read from

    @property
    def gpu(self) -> str:
        return str(self.device.get("name", "?"))

    def features(self) -> list[SearchFeatures]:
        keys = SearchFeatures.__dataclass_fields__
        return [SearchFeatures(**{k: g["features"][k] for k in keys}) for g in self.graphs]

    def as_json(self) -> dict:
        return {"format": FORMAT, "device": self.device, "graphs": self.graphs, "times": self.times, "runs": self.runs}

    def save(self, path) -> Path:
        from ..stats import write_text_atomic

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_text_atomic(path, json.dumps(self.as_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path) -> "Calibration":
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise CalibrationError(f"cannot read the calibration {path}: {err.strerror or err}") from None
        except json.JSONDecodeError as err:
            raise CalibrationError(f"{path}, line {err.lineno}: not JSON ({err.msg})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CalibrationError(f"{path}: not a calibration of format {FORMAT} (run python3 -m explorer calibrate)")
        try:
            cal = cls(device=dict(data["device"]), graphs=list(data["graphs"]), times=dict(data["times"]),
                      runs=dict(data.get("runs", {})), origin=str(path))
            cal.features()
        except (KeyError, TypeError) as err:
            raise CalibrationError(f"{path}: missing or malformed entry {err}") from None
        for name, ts in cal.times.items():
            if len(ts) != len(cal.graphs) or any(t is not None and not (isinstance(t, (int, float)) and t > 0)
                                                 for t in ts):
                raise CalibrationError(f"{path}: candidate {name!r} needs one positive time (or null) per ladder "
                                       f"graph ({len(cal.graphs)})")
        return cal


def user_path(gpu: str) -> Path:
    from ..graphs.cache import cache_dir

    return cache_dir() / "calibration" / file_name(gpu)


def find(gpu: str) -> Path:
    """The calibration file for `gpu`: the user's own (`python3 -m explorer calibrate`), else the one
    shipped for it, else the shipped DEFAULT_GPU's."""
    for path in (user_path(gpu), SHIPPED / file_name(gpu), SHIPPED / file_name(DEFAULT_GPU)):
        if path.is_file():
            return path
    raise CalibrationError(f"no calibration for {gpu} and none shipped ({SHIPPED}): run python3 -m explorer calibrate")


class CostModel:
    """Predicted elapsed ms of every calibrated candidate on a graph (see the module's text)."""

    def __init__(self, cal: Calibration):
        self.calibration = cal
        feats = cal.features()
        X = np.array([_terms(f) for f in feats]) if feats else np.zeros((0, len(TERMS)))
        self._scale = np.maximum(X.max(axis=0) if len(X) else np.ones(len(TERMS)), 1e-12)
        self._points = np.array([_point(f) for f in feats]) if feats else np.zeros((0, 5))
        self._fits: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for name, ts in cal.times.items():
            rows = np.array([i for i, t in enumerate(ts) if t is not None], dtype=np.int64)
            if len(rows) == 0:
                continue
            t = np.array([ts[i] for i in rows], dtype=np.float64)
            coef = _fit(X[rows] / self._scale, t)
            fitted = np.maximum((X[rows] / self._scale) @ coef, 1e-9)
            self._fits[name] = (rows, coef, np.log(t / fitted))

    @property
    def candidates(self) -> list[str]:
        return list(self._fits)

    def predict(self, f: SearchFeatures) -> dict[str, float]:
        x = _terms(f) / self._scale
        d2 = ((self._points - _point(f)) ** 2).sum(axis=1) if len(self._points) else np.zeros(0)
        out = {}
        for name, (rows, coef, resid) in self._fits.items():
            d = d2[rows]
            w = np.exp(-(d - d.min()) / (2 * NEAR))
            out[name] = float(max(x @ coef, 1e-9) * math.exp(float(w @ resid / w.sum())))
        return out


def _fit(A: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Non-negative coefficients c minimising the relative error of A @ c against t."""
    from scipy.optimize import nnls

    coef, _ = nnls(A / t[:, None], np.ones(len(t)))
    return coef
