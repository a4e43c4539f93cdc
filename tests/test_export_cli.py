"""The export options on the command line: the warning of a JSON trace too large for
Perfetto UI, and --from/--to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SAMPLES

from parsers import export
from tui import cli

LOG = str(SAMPLES / "curio-mixed.log")


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "warning" in line]


def test_a_json_trace_past_the_limit_is_written_with_one_line_of_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "t.json"
    assert cli.main([LOG, "--export-trace", str(out)]) == 0
    assert _warnings(capsys.readouterr().err) == []  # a small trace: no word of it
    size = out.stat().st_size
    monkeypatch.setattr(export, "JSON_TRACE_LIMIT_BYTES", size - 1)
    assert cli.main([LOG, "--export-trace", str(out)]) == 0
    (line,) = _warnings(capsys.readouterr().err)
    assert "t.perfetto-trace" in line and "--from/--to" in line and "Perfetto UI" in line
    assert len(json.loads(out.read_text())["traceEvents"]) > 0  # written all the same
    # at the limit itself, and for the protobuf trace, nothing is said
    monkeypatch.setattr(export, "JSON_TRACE_LIMIT_BYTES", size)
    assert cli.main([LOG, "--export-trace", str(out)]) == 0
    monkeypatch.setattr(export, "JSON_TRACE_LIMIT_BYTES", 1)
    assert cli.main([LOG, "--export-trace", str(tmp_path / "t.perfetto-trace")]) == 0
    assert _warnings(capsys.readouterr().err) == []
