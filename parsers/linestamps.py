"""The TIMELINE lines the model knows by number and by time: each partition's GPU_START
and GPU_END line with its stamp (`start_line`/`end_line` of the partition table), so that a
time finds its line, and a line its partition, without reading the log."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parsers.model import F64, I64, PartitionTable


@dataclass(slots=True, eq=False)
class LineStamps:
    """The GPU_START and GPU_END lines of some partitions: `line` sorted, with the stamp
    (`ms`, on the model's time axis) and the partition (`part`) of each."""

    line: I64
    ms: F64
    part: I64
    _by_time: I64 | None = None  # the order by stamp, then line: made when first asked

    @property
    def by_time(self) -> I64:
        """The stamps' order by stamp, then line (made once, at the first time asked for:
        a pane that is only scrolled never needs it)."""
        if self._by_time is None:
            self._by_time = np.lexsort((self.line, self.ms)).astype(np.int64)
        return self._by_time

    @staticmethod
    def of(parts: PartitionTable, first: int = 0, end: int | None = None) -> LineStamps:
        """The stamped lines of partitions `first`..`end` (exclusive; all by default: a
        merged model's partitions come from several logs, each with its own line numbers).

        Args:
            parts: the model's partition table.
            first: the first partition of the log whose lines these are.
            end: past its last partition.
        """
        end = len(parts) if end is None else end
        index = np.arange(first, end, dtype=np.int64)
        lines, stamps, owners = [], [], []
        for line_col, ms_col in (
            (parts.start_line, parts.gpu_start),
            (parts.end_line, parts.gpu_end),
        ):
            line, ms = line_col[first:end], ms_col[first:end]
            known = (line > 0) & ~np.isnan(ms)
            lines.append(line[known])
            stamps.append(ms[known])
            owners.append(index[known])
        line = np.concatenate(lines).astype(np.int64)
        ms = np.concatenate(stamps).astype(np.float64)
        part = np.concatenate(owners)
        order = np.argsort(line, kind="stable")
        return LineStamps(line[order], ms[order], part[order])

    def __len__(self) -> int:
        return len(self.line)

    def at_line(self, line: int) -> tuple[int, float] | None:
        """The partition whose GPU_START or GPU_END is line `line`, and its stamp (None:
        the model knows of no such line there)."""
        k = int(np.searchsorted(self.line, line, side="left"))
        if k < len(self.line) and self.line[k] == line:
            return int(self.part[k]), float(self.ms[k])
        return None

    def first_at_or_after(self, ms: float) -> int | None:
        """The line of the earliest stamp at or after `ms` (ties: the first line); None
        when every stamp is before it."""
        times = self.ms[self.by_time]
        k = int(np.searchsorted(times, ms, side="left"))
        return int(self.line[self.by_time[k]]) if k < len(times) else None

    def nearest(self, ms: float) -> int | None:
        """The line whose stamp is nearest `ms` (None: no stamped line)."""
        if not len(self.line):
            return None
        times = self.ms[self.by_time]
        k = int(np.searchsorted(times, ms, side="left"))
        if k == len(times) or (k > 0 and ms - times[k - 1] <= times[k] - ms):
            k -= 1
        return int(self.line[self.by_time[k]])
