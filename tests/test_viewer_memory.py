"""What the viewer keeps: a model it no longer shows is freed at once, not at the cyclic
collector's next walk."""

from __future__ import annotations

import gc
import weakref

from conftest import SAMPLES

from parsers.report import read_log
from tui.lanes import LaneDrawing


def test_a_lane_drawing_and_its_model_are_freed_when_dropped() -> None:
    drawing = LaneDrawing(read_log(SAMPLES / "curio-mixed.log"))
    dead = weakref.ref(drawing)
    gc.disable()  # a reference cycle would keep it until a collection
    try:
        del drawing
        assert dead() is None
    finally:
        gc.enable()
