"""The one error family: a failure the user is told of in one line.

Whatever opens, reads or writes for the user raises a `CuzkError` (or a subclass) with the
sentence to show and the exit status it means; `tui/cli.py` alone turns it into that line on
standard error and that status. Nothing below the command line ends the process.
"""

from __future__ import annotations


class CuzkError(Exception):
    """A failure told in one line (`str(error)`), ending the command with `exit_code`.

    2: what the user gave cannot be used (a path, an option, a file that cannot be read);
    1: the command could not finish (a report that cannot be written, a failure of the core).
    """

    exit_code = 2


class OptionError(CuzkError):
    """An option, or a combination of them, that cannot be used (shown with the pointer to
    --help, as argparse's own errors are)."""


class CoreFailure(CuzkError):
    """The compiled core failed (a bug, caught at its boundary): said in one line, exit 1."""

    exit_code = 1

    def __init__(self, what: object) -> None:
        super().__init__(f"{what} (please report it)")
