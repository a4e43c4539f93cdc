"""contrib/: the alert rules promtool accepts, a dashboard that asks only for metrics the
exporter serves, and a systemd unit whose command line cuzk-tui takes."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from conftest import SAMPLES
from scrape import exposition, scraped

from parsers.load import model_of_bytes
from tui.options import options_of, parse_args

CONTRIB = Path(__file__).resolve().parent.parent / "contrib"
METRIC = re.compile(r"\bcuzk_[a-z_]+\b")


def served_names() -> set[str]:
    """Every sample name a scrape of a two-GPU log gives (with _bucket, _sum, _count)."""
    model = model_of_bytes((SAMPLES / "journal-2gpu.log").read_bytes(), "j")
    return {name for name, _ in scraped(exposition(model))}


def test_promtool_accepts_the_alert_rules() -> None:
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is missing: apt-get install prometheus"
    out = subprocess.run(
        [promtool, "check", "rules", str(CONTRIB / "alerts.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out
    assert "SUCCESS" in out.stdout


def test_the_alert_rules_name_only_served_metrics() -> None:
    names = set(METRIC.findall((CONTRIB / "alerts.yml").read_text()))
    assert "cuzk_gpu_busy_seconds_total" in names
    assert names <= served_names()


def _queries(node: Any) -> list[str]:
    """Every PromQL expression and variable query in a dashboard."""
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k in ("expr", "definition") and isinstance(v, str)]
        return found + [q for v in node.values() for q in _queries(v)]
    if isinstance(node, list):
        return [q for v in node for q in _queries(v)]
    return []


def test_the_dashboard_is_json_that_names_only_served_metrics() -> None:
    doc = json.loads((CONTRIB / "grafana-dashboard.json").read_text())
    panels = doc["panels"]
    assert {p["type"] for p in panels} >= {"timeseries", "heatmap"}
    assert all(p["targets"] and all(t["expr"] for t in p["targets"]) for p in panels)
    names = {n for q in _queries(doc) for n in METRIC.findall(q)}
    wanted = {
        "cuzk_gpu_kernel_utilization",
        "cuzk_gpu_timeline_utilization",
        "cuzk_gpu_busy_seconds_total",
        "cuzk_gap_seconds_bucket",
        "cuzk_seconds_per_proof",
        "cuzk_log_last_line_age_seconds",
        "cuzk_log_new_runs_total",  # a rotation the state says for a minute only
    }
    assert wanted <= names
    assert names <= served_names(), names - served_names()


def test_the_unit_s_command_line_is_one_cuzk_tui_takes() -> None:
    text = (CONTRIB / "cuzk-tui-metrics.service").read_text()
    (line,) = [x for x in text.splitlines() if x.startswith("ExecStart=")]
    script = shlex.split(line.removeprefix("ExecStart="))[-1]  # sh -c '...'
    command = shlex.split(script.split("|")[-1])
    assert command[0] == "exec" and command[1].endswith("/cuzk-tui")
    options = options_of(parse_args(command[2:]))
    assert options.log == "-" and options.serve_metrics == ("127.0.0.1", 9464)
