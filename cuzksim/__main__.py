"""`python -m cuzksim`: a simulated daemon log on standard output.

Every field of `SimConfig` is an option of its own (`--gpus 2 --fail 0.01 --capture
journal`); `--random SEED` starts from the random run `random_config` makes of that seed,
`--demo` from the built-in demo's; the options given after either change it. The log goes to
standard output only (`python -m cuzksim --gpus 2 > gpu2.log`): nothing is written to a file.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import typing
from dataclasses import fields, replace
from typing import Any, get_args

from cuzksim.config import DEMO_CONFIG, SimConfig, random_config
from cuzksim.logs import write_log


def _choices(kind: Any) -> tuple[str, ...] | None:
    """The values a Literal field takes (None: another kind)."""
    return tuple(get_args(kind)) if typing.get_origin(kind) is typing.Literal else None


def _args_doc(doc: str) -> dict[str, str]:
    """Each name of a docstring's `Args:` and what it says, its deeper lines joined on (the
    entries' indent is the first one's: Python 3.13 strips a docstring's common indent)."""
    out: dict[str, str] = {}
    name = None
    indent = None
    for line in inspect.cleandoc(doc).split("Args:", 1)[-1].splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        head, _, said = line.strip().partition(": ")
        if depth == indent and head.isidentifier():
            name = head
            out[name] = said.strip()
        elif name is not None and depth > indent:
            out[name] += " " + line.strip()
    return out


def _option(field: str) -> str:
    """The option of SimConfig's field `field` (`--synth-ms` of synth_ms)."""
    return f"--{field.replace('_', '-')}"


def _flag(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"not true or false: {text!r}")


def parser() -> argparse.ArgumentParser:
    """The options: --random, --demo, then one per SimConfig field."""
    ap = argparse.ArgumentParser(
        prog="python -m cuzksim",
        description="Write a simulated cuzk daemon log to standard output.",
    )
    start = ap.add_mutually_exclusive_group()
    start.add_argument("--random", type=int, metavar="SEED", help="a random run of this seed")
    start.add_argument("--demo", action="store_true", help="the built-in demo's run")
    hints = typing.get_type_hints(SimConfig)
    said_of = _args_doc(SimConfig.__doc__ or "")
    for f in fields(SimConfig):
        kind = hints[f.name]
        said = said_of.get(f.name, "")
        name = _option(f.name)
        choices = _choices(kind)
        if choices is not None:
            ap.add_argument(name, dest=f.name, choices=choices, help=said)
        elif kind is bool:
            ap.add_argument(name, dest=f.name, type=_flag, metavar="true|false", help=said)
        else:
            ap.add_argument(name, dest=f.name, type=kind, metavar=kind.__name__.upper(), help=said)
    return ap


# what each field may be: at least one, at least zero, a probability (0..1), more than zero
AT_LEAST_ONE = ("proofs", "concurrency", "partitions", "gpus", "gw", "pw")
AT_LEAST_ZERO = ("gpu_base", "miner")
SHARES = (
    "splice",
    "fail",
    "mix",
    "stdout_share",
    "splice_stdout",
    "fail_prove",
    "fail_synth",
    "circuits",
)
# more than zero, and at most (larger made stamps past the year 9999: a traceback)
ABOVE_ZERO = {"synth_ms": 1e9, "gpu_scale": 1e3}
SYNTH_SD_MAX = 1e9


def _wrong(config: SimConfig) -> str | None:
    """Why `config` is no run (a field out of its range), or None."""
    for name in AT_LEAST_ONE:
        if getattr(config, name) < 1:
            return f"{_option(name)} must be at least 1"
    for name in AT_LEAST_ZERO:
        if getattr(config, name) < 0:
            return f"{_option(name)} must be at least 0"
    for name in SHARES:
        if not 0.0 <= getattr(config, name) <= 1.0:
            return f"{_option(name)} is a probability: from 0 to 1"
    for name, most in ABOVE_ZERO.items():
        if not 0 < getattr(config, name) <= most:
            return f"{_option(name)} must be more than 0 and at most {most:g}"
    if not 0 <= config.synth_sd <= SYNTH_SD_MAX:
        return f"--synth-sd must be from 0 to {SYNTH_SD_MAX:g}"
    return None


def config_of(argv: list[str]) -> SimConfig:
    """The run the command line names (a bad option: one line, exit 2)."""
    ap = parser()
    args = vars(ap.parse_args(argv))
    seed, demo = args.pop("random"), args.pop("demo")
    base = random_config(seed) if seed is not None else DEMO_CONFIG if demo else SimConfig()
    given = {name: value for name, value in args.items() if value is not None}
    config = replace(base, **given)
    wrong = _wrong(config)
    if wrong is not None:
        ap.error(wrong)
    return config


def main(argv: list[str] | None = None) -> int:
    """Write the log; 0, or 1 when standard output was closed early (`| head`)."""
    config = config_of(sys.argv[1:] if argv is None else argv)
    try:
        write_log(config, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away: nothing more to say
        return 1
    except KeyboardInterrupt:
        return 130  # ctrl+c: the log so far is out
    except OverflowError:  # a run of days-long syntheses, hundreds of thousands of them
        print("python -m cuzksim: error: the run goes past the year 9999", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
