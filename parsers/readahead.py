"""A plain log file read by the compiled core on a thread of its own.

The report of a long log spends most of its time in the core's scan; started first, the scan
runs while the interpreter loads the analysis (numpy and the model), which the report needs
only once the file is read. This module imports the core alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from parsers._core import Scanner
from parsers.later import Later
from parsers.regular import open_regular


class ReadAhead:
    """Starts reading `path` at once; `scanner()` waits for the end of the file.

    Raises (from the constructor): OSError when the file cannot be opened, NotARegularFile.
    """

    def __init__(self, path: Path, workers_per_gpu: int | None = None) -> None:
        self.path = path
        self._scanner = Scanner(workers_per_gpu)
        self._fd = open_regular(path)
        self._reading = Later(self._read, name="cuzk-tui-read")

    def _read(self) -> None:
        try:
            self._scanner.feed_fd(self._fd)
        finally:
            os.close(self._fd)

    def scanner(self) -> Scanner:
        """The scanner, once it has read the file to its end.

        Raises: what reading the file raised (OSError).
        """
        self._reading.result()
        return self._scanner
