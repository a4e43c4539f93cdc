"""Property test: random bytes and mutated real lines, fed whole and cut at random places.

Whatever the input, the builder gives the same model whole and chunked, never raises, and the
report's figures stay possible (utilizations in [0, 1], no negative duration, no line
counted twice). CI runs a short run; `CUZK_PROPERTY_CASES=100000` runs a long one (the
closing figure is printed with `-s`).
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable
from typing import Any

from conftest import SAMPLES
from helpers import build, model_fingerprint

from parsers.report import report_dict

CASES = int(os.environ.get("CUZK_PROPERTY_CASES", "3000"))
SEED = int(os.environ.get("CUZK_PROPERTY_SEED", "20261130"))

_NUMBER = re.compile(rb"-?\d+")
_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d")
_ODD_NUMBERS = [
    b"0",
    b"-1",
    b"-7",
    b"4294967296",
    b"9223372036854775808",
    b"1" * 40,
    b"1" * 400,
    b"1e308",
    b"-1e308",
    b"nan",
    b"0x10",
    b"3.5",
]
_ODD_BYTES = [
    b"\x00",
    b"\r",
    b"\x1b[31m",
    b"\x1b]2;t\x07",
    b"\xc2\x9b",
    b"\xff\xfe",
    b"\xe2\x80\xae",
]


def _real_lines() -> list[bytes]:
    lines: list[bytes] = []
    for name in ("journal-2gpu", "curio-mixed", "p9-c6", "p12-gw2-merged"):
        lines += (SAMPLES / f"{name}.log").read_bytes().splitlines(keepends=True)
    return lines


REAL = _real_lines()


def _mutate_line(rng: random.Random, line: bytes) -> bytes:
    kind = rng.randrange(8)
    if kind == 0 and line:  # flip, insert or delete a byte
        k = rng.randrange(len(line))
        op = rng.randrange(3)
        if op == 0:
            return line[:k] + bytes([rng.randrange(256)]) + line[k + 1 :]
        if op == 1:
            return line[:k] + bytes([rng.randrange(256)]) + line[k:]
        return line[:k] + line[k + 1 :]
    if kind == 1:  # a number replaced by one out of range or not a number
        spots = list(_NUMBER.finditer(line))
        if spots:
            m = rng.choice(spots)
            return line[: m.start()] + rng.choice(_ODD_NUMBERS) + line[m.end() :]
    if kind == 2 and line:  # a control sequence or invalid UTF-8 inside
        k = rng.randrange(len(line))
        return line[:k] + rng.choice(_ODD_BYTES) + line[k:]
    if kind == 3:  # cut short (no newline: the next line is glued on)
        return line[: rng.randrange(len(line) + 1)]
    if kind == 4:  # CRLF
        return line.rstrip(b"\n") + b"\r\n"
    return line


def _case(rng: random.Random) -> bytes:
    """A few dozen lines: a window of a real log, mutated, with random bytes among them."""
    start = rng.randrange(len(REAL))
    window = REAL[start : start + rng.randrange(1, 60)]
    out: list[bytes] = []
    for line in window:
        r = rng.random()
        if r < 0.3:
            line = _mutate_line(rng, line)
        elif r < 0.35:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
        elif r < 0.4:
            out.append(line)  # a duplicate
        elif r < 0.45 and out:
            out.insert(rng.randrange(len(out)), line)  # out of order
            continue
        out.append(line)
    if rng.random() < 0.1:  # a whole case of random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 400)))
    return b"".join(out)


def _cuts(rng: random.Random, n: int) -> list[int]:
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(rng.choice([1, 2, 3, 5, 8, 17, 64, 200]))
    return sizes


def _check_report(rep: dict[str, Any], data: bytes) -> None:
    def walk(node: object, path: str, check: Callable[[str, float], None]) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}.{k}", check)
        elif isinstance(node, list):
            for k, v in enumerate(node):
                walk(v, f"{path}[{k}]", check)
        elif isinstance(node, int | float) and not isinstance(node, bool):
            check(path, float(node))

    def possible(path: str, v: float) -> None:
        assert v == v, f"NaN at {path}"
        leaf = path.rsplit(".", 1)[-1]
        if "util" in path:
            assert 0.0 <= v <= 1.0, f"{path} = {v}"
        if leaf.endswith("_ms") or leaf.endswith("_s") or "duration" in leaf:
            assert v >= 0.0, f"{path} = {v}"

    walk(rep, "", possible)
    lines = rep["lines"]
    assert all(v >= 0 for v in lines.values()), lines
    physical = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    # a line cut by another line holds two logical lines (the one that cut it starts with a
    # TIMELINE or CUZK_ marker, or a stdout timestamp); nothing is counted more often
    markers = data.count(b"TIMELINE,") + data.count(b"CUZK_") + len(_STAMP.findall(data))
    assert lines["total"] <= physical + markers, (lines, physical, markers)


def test_random_and_mutated_input_whole_equals_chunked() -> None:
    rng = random.Random(SEED)
    started = time.perf_counter()
    for case in range(CASES):
        data = _case(rng)
        try:
            whole = build(data)
            chunked = build(data, _cuts(rng, len(data)))
            assert model_fingerprint(chunked) == model_fingerprint(whole)
            _check_report(report_dict(whole), data)
        except Exception as exc:
            raise AssertionError(f"case {case} (seed {SEED}): {data[:2000]!r}") from exc
    elapsed = time.perf_counter() - started
    print(f"\nproperty test: {CASES} cases in {elapsed:.1f} s, seed {SEED}, no failure")
