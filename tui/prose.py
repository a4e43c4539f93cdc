"""Prose that wraps where it may: at its ordinary spaces, never at a glue.

Textual and Rich both wrap text at any whitespace, a no-break space too: an inspector's
`on GPU 3` could end one line with `GPU` and begin the next with `3)`, `barrier 1.10s` lose
its figure to the next line. The inspectors write GLUE (a no-break space) between the words
that belong together and draw their text through `Prose`, which wraps it at the width it is
drawn in, at ordinary spaces only, each wrapped line going on under its line's own indent
(or under its HANG, written after a label column: the interval inspector's `lock       `),
and draws a glue as a space. The text report draws its gaps through it too (its lines have
no glue; at a terminal they wrap under their indent, piped they are whole).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from rich.cells import cell_len
from rich.cells import get_character_cell_size as _cells
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

GLUE = "\u00a0"  # written between words that are not to be wrapped apart, drawn as a space
# written where a line's wrapped part is to go on under (after a label column), not drawn
HANG = "\u2063"
MIN_ROOM = 20  # the least a wrapped line keeps, however deep its indent

_WORD = re.compile(r"[^ ]+")  # a glue is not a space here


def glued(*words: object) -> str:
    """The words joined by glue: `glued("GPU", 3)` is drawn `GPU 3`, on one line."""
    return GLUE.join(str(w) for w in words)


def _unglued(piece: Text) -> Text:
    if GLUE in piece.plain:
        piece = piece.copy()
        piece.plain = piece.plain.replace(GLUE, " ")  # as long: the styles stay in place
    return piece


def wrapped(text: Text, width: int) -> list[Text]:
    """The lines `text` is drawn in at `width` cells: each of its lines wrapped at its
    ordinary spaces (a word wider than the room is folded), the wrapped part under the
    line's HANG, else under its indent; glue drawn as spaces, a hang not at all."""
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        hang_at = line.plain.find(HANG)
        if hang_at >= 0:
            line = line[:hang_at] + line[hang_at + 1 :]
        plain = line.plain
        # the cells before each character
        at = range(len(plain) + 1) if plain.isascii() else [0, *accumulate(map(_cells, plain))]
        indent = len(plain) - len(plain.lstrip(" "))
        # the wrapped part's indent: under the hang where it leaves half the width at least
        # (deeper, a narrow terminal cut what went on beyond its edge)
        under = at[hang_at] if hang_at >= 0 and 2 * at[hang_at] <= width else indent
        first, then = max(width - indent, MIN_ROOM), max(width - under, MIN_ROOM)
        # the line's pieces (a, b) of `plain`: the first from 0 (its indent with it, its
        # room counted from the indent), the others from a word, drawn after `under` cells
        pieces: list[tuple[int, int]] = []
        start, end = 0, indent
        for word in _WORD.finditer(plain, indent):
            a, b = word.span()
            # a word no wrapped line holds is folded from where it begins, not moved to a
            # line of its own first (a raw log line's number stood alone above its text)
            moves = at[b] - at[a] <= then
            if (
                moves
                and end > indent
                and at[b] - at[max(start, indent)] > (then if start else first)
            ):
                pieces.append((start, end))
                start = a
            while at[b] - at[max(start, indent)] > (room := then if start else first):
                begin = max(start, indent)  # a word wider than the room: folded
                cut = bisect_right(at, at[begin] + room, begin + 1, b + 1) - 1
                cut = max(cut, begin + 1)
                if cut <= a < b and start < a:  # the words before fill the line: it begins
                    pieces.append((start, end))  # the next (not at the space before it)
                    start = a
                    continue
                # after its last comma, `=` or `;` that leaves the line a quarter full at
                # least (`…,SYNTH_END,` then the job id whole)
                soft = max(plain.rfind(ch, max(begin, a), cut) for ch in ",=;")
                if soft >= 0 and 4 * (at[soft + 1] - at[begin]) >= room:
                    cut = soft + 1
                pieces.append((start, cut))
                start = cut
            end = b
        pieces.append((start, end))
        for k, (a, b) in enumerate(pieces):
            out.append(_unglued(line[a:b] if k == 0 else Text(" " * under) + line[a:b]))
    return out


class Prose:
    """`text` drawn as `wrapped` lays it out at the width it is given; unwrapped (a report
    piped: whole lines), as it is, glue drawn as spaces."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __str__(self) -> str:
        """The text as drawn unwrapped (glue as spaces, no hang)."""
        return self.text.plain.replace(GLUE, " ").replace(HANG, "")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.no_wrap:
            yield from (Text("\n").join(wrapped(self.text, 1 << 30)).render(console))
            yield Segment.line()
            return
        for line in wrapped(self.text, options.max_width):
            yield from line.render(console)
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lines = self.text.plain.split("\n")
        widest = max((cell_len(line) for line in lines), default=0)
        word = max((cell_len(w) for w in _WORD.findall(self.text.plain)), default=0)
        return Measurement(min(word, options.max_width), min(widest, options.max_width))
