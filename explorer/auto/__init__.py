"""`auto`: the technique and knobs for the graph at hand, chosen by a cost model calibrated by
measurement, with the reason (candidates.py: what it chooses among; model.py: the calibration and
the model; choose.py: the choice; calibrate.py: `python3 -m explorer calibrate`)."""
from .choose import AUTO, TAKES_NO_KNOBS, Choice, choose, is_auto, model_for
from .model import Calibration, CalibrationError, CostModel

#: What "auto" is, where a technique's doc would be (the CLI's `techniques`, the Explorer).
DOC = ("The default: the technique and its knobs chosen for the graph and the device, among the "
       "configurations that can run here, by a cost model calibrated on a GPU (python3 -m explorer "
       "calibrate measures yours; the H100's ships); on a GPU the model's close contenders are timed "
       "on the graph at its first search. Each run says what it chose and why.")

__all__ = ["AUTO", "DOC", "TAKES_NO_KNOBS", "Calibration", "CalibrationError", "Choice", "CostModel", "choose",
           "is_auto", "model_for"]
