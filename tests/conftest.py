"""Shared fixtures: the sample logs and their truth files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SAMPLES = Path(__file__).parent / "samples"
SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.log"))


def truth(name: str) -> dict[str, Any]:
    """The exact answers written beside a sample."""
    data: dict[str, Any] = json.loads((SAMPLES / f"{name}.truth.json").read_text())
    return data


@pytest.fixture(params=SAMPLE_NAMES)
def sample_name(request: pytest.FixtureRequest) -> str:
    """Each sample log in turn."""
    name: str = request.param
    return name
