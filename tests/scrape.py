"""A scrape of a model's metrics as the exporter serves them, and its samples read back."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from parsers.metrics import Carried, Figures, LogHealth, families, figures_of
from parsers.model import LogModel

HOST = "rig-7"
HEALTH = LogHealth("following", ("following", "truncated"), 2.5, (("truncated", 0), ("rotated", 1)))

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class _Fixed(Collector):
    def __init__(self, figures: Figures, counted: dict[tuple[str, tuple[str, ...]], float]) -> None:
        self.figures, self.counted = figures, counted

    def collect(self) -> Iterable[Metric]:
        return families(self.figures, self.counted, HOST, HEALTH)


def exposition(model: LogModel) -> bytes:
    """A scrape of `model`'s metrics, in the Prometheus text format."""
    figures = figures_of(model)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(figures, Carried().counted(figures.counters)))
    return generate_latest(registry)


def scraped(text: bytes) -> Samples:
    """Every sample of a scrape, by name and labels (the host label checked and left out)."""
    out: Samples = {}
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            assert s.labels.pop("host") == HOST
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out
