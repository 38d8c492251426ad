"""`auto`: the technique and knobs for the graph at hand, chosen by a cost model calibrated by
measurement, with the reason (candidates.py: what it chooses among; model.py: the calibration and
the model; choose.py: the choice; calibrate.py: `python3 -m explorer calibrate`)."""
from .choose import AUTO, TAKES_NO_KNOBS, Choice, choose, is_auto, model_for
from .model import Calibration, CalibrationError, CostModel

__all__ = ["AUTO", "TAKES_NO_KNOBS", "Calibration", "CalibrationError", "Choice", "CostModel", "choose", "is_auto", "model_for"]
