"""A corpus of hostile inputs, generated (never committed): escape injection, odd encodings,
huge lines and numbers, and the log shapes that must be counted and skipped."""

from __future__ import annotations

import random
from pathlib import Path

# every kind of sequence a terminal would act on, and characters that reorder or hide text
INJECTIONS = {
    "osc-title-st": "\x1b]2;pwned\x1b\\",
    "osc-title-bel": "\x1b]0;pwned\x07",
    "osc8-link": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "osc52-clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "csi-clear": "\x1b[2J\x1b[H",
    "csi-sgr": "\x1b[31;1mred\x1b[0m",
    "dcs": "\x1bPq#0;2;0;0;0\x1b\\",
    "apc": "\x1b_Gf=100;AAAA\x1b\\",
    "sos-pm": "\x1bXsos\x1b\\\x1b^pm\x1b\\",
    "c1-csi": "\x9b31m\x9d0;t\x9c",
    "bidi": "\u202eevil\u202c\u2066iso\u2069\u202a\u202b\u202d\u2067\u2068",
    "zero-width": "a\u200bb\u200c\u200d\ufeffc\u2028d\u2029",
    "controls": "\x00\x01\x07\x08\x0b\x0c\r\x7f",
    "cjk": "証明ジョブ-中文-😀",
    "combining": "e\u0301\u0301\u0301",
    "markup": "[bold red]x[/] [link=http://x]y[/link]",
}
# text that must never reach a text output as a character (the JSON escapes them)
RAW_CONTROLS = {c for c in range(0x20) if c not in (0x09, 0x0A)} | {0x7F} | set(range(0x80, 0xA0))


def job_line_set(job: str, stamp: int, worker: int = 0, partition: int = 0) -> bytes:
    """A complete partition (synthesis, queue, GPU interval) of `job`."""
    j = job.encode("utf-8", "surrogateescape")
    p = f"partition={partition}".encode()
    w = f"worker={worker}".encode()
    return b"".join(
        [
            b"TIMELINE,%d,SYNTH_START,%s,%s\n" % (stamp, j, p),
            b"TIMELINE,%d,SYNTH_END,%s,%s\n" % (stamp + 50, j, p),
            b"TIMELINE,%d,GPU_QUEUE,%s,%s\n" % (stamp + 51, j, p),
            b"TIMELINE,%d,GPU_START,%s,%s,%s\n" % (stamp + 60, j, w, p),
            b"TIMELINE,%d,GPU_END,%s,%s,%s,gpu_ms=100\n" % (stamp + 160, j, w, p),
        ]
    )


def injected_log() -> bytes:
    """Every injection as a job id, with gaps between them so the report lists them all."""
    out = [b"pipeline GPU worker started worker_id=0 gpu=0\n"]
    for k, payload in enumerate(INJECTIONS.values()):
        out.append(job_line_set(f"job-{k}-{payload}", 1000 * k + 10))
        out.append(f"raw {payload} line\n".encode())
    return b"".join(out)


def corpus(root: Path) -> list[Path]:
    """Write the hostile files under `root`; return their paths."""
    rng = random.Random(10)
    files: dict[str, bytes] = {
        "injected.log": injected_log(),
        "utf16.log": injected_log().decode("utf-8").encode("utf-16"),
        "utf16-no-bom.log": injected_log().decode("utf-8").encode("utf-16-le"),
        "binary.log": bytes(rng.randrange(256) for _ in range(300_000)),
        "nul.log": b"\x00" * 100_000 + job_line_set("after-nuls", 10),
        "no-newline.log": job_line_set("j", 10).rstrip(b"\n"),
        "crlf.log": job_line_set("crlf", 10).replace(b"\n", b"\r\n"),
        "long-line.log": job_line_set("a", 10) + b"x" * (3 << 20) + b"\n" + job_line_set("b", 900),
        "long-job-id.log": job_line_set("J" * 200_000, 10),
        "huge-stamps.log": job_line_set("big", 9_223_372_036_854_775_000)
        + job_line_set("bigger", 10**19),
        "negative.log": job_line_set("neg", -5000) + b"TIMELINE,-1,GPU_END,x,worker=0\n",
        "many-fields.log": b"TIMELINE," + b",".join(b"f%d=1" % k for k in range(50_000)) + b"\n",
        "only-commas.log": b"," * 200_000 + b"\n" + b"TIMELINE" + b"," * 1000 + b"\n",
        "invalid-utf8.log": job_line_set("job-\udcff\udcfe", 10),
        "empty.log": b"",
        "newlines.log": b"\n" * 200_000,
    }
    paths = []
    for name, data in files.items():
        path = root / name
        path.write_bytes(data)
        paths.append(path)
    # a file whose very name injects an escape sequence
    evil_name = root / "name-\x1b]2;pwned\x07-\u202e.log"
    evil_name.write_bytes(injected_log())
    paths.append(evil_name)
    return paths
