"""ASCII stand-ins for what the viewer and the report draw, for a terminal that cannot show it.

One codec error handler, `ERRORS`, used where text is encoded for the terminal (the
report's standard output, the viewer's terminal file): whatever the encoding cannot write
(box drawing, blocks, arrows in an ASCII or Latin-1 locale; everything but ASCII with
`--ascii`) is written as an ASCII stand-in of the same width, so columns stay aligned and
nothing drawn can escape it. The phase glyphs keep one distinct character each, as the
legend shows them.
"""

from __future__ import annotations

import codecs
import io
import os
import unicodedata
from functools import lru_cache
from typing import IO

ERRORS = "cuzk-ascii"  # the codec error handler's name

# the Gantt's glyphs first: each phase (and the gap) its own character
_STAND_INS = {
    "▄": ",",  # pre-lock (`_` is a low busy share's)
    "╌": "-",  # lock wait
    "▓": "%",  # allocation
    "█": "#",  # kernel
    "▒": "=",  # barrier
    "▀": "^",  # cleanup
    "▸": ">",  # in flight
    "✗": "x",  # failed
    "░": ".",  # a gap
    # the busy, kernel and synthesis lanes' heights, the cells' partial fills
    "▁": "_",
    "▂": "_",
    "▃": "_",
    "▅": "=",
    "▆": "=",
    "▇": "#",
    "▉": "#",
    "▊": "#",
    "▋": "#",
    "▌": "|",
    "▍": "|",
    "▎": "|",
    "▏": "|",
    "▐": "|",
    "▕": "|",
    "▔": "-",
    # a proof's span: its start, its end, one ending where the next begins (`+-+` read
    # all three alike)
    "┣": "[",
    "┫": "]",
    "╋": "+",
    # marks, arrows and punctuation
    "▶": ">",
    "▼": "v",
    "▲": "^",
    "◀": "<",
    "←": "<",
    "→": ">",
    "↑": "^",
    "↓": "v",
    "–": "-",
    "—": "-",
    "−": "-",
    # one cell, as the ellipsis it stands for: a name cut in the middle reads as cut
    # (`curio-m~ed.log`), where `.` read as another name (`curio-m.ed.log`); one that ends
    # a word is prose and `.` (`_stand_in`)
    "…": "~",
    "·": ".",
    "•": "*",
    "≈": "~",
    "≤": "<",
    "≥": ">",
    "×": "x",
    "µ": "u",
    "✓": "v",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "\u00a0": " ",
}


@lru_cache(maxsize=4096)
def ascii_for(char: str) -> str:
    """The ASCII text drawn for `char`: as wide as it is (a wide character two cells, a
    combining mark none), `?` where nothing better is known.

    Args:
        char: one character the terminal's encoding cannot write.
    """
    if char.isascii():
        return char
    if char in _STAND_INS:
        return _STAND_INS[char]
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me"):
        return ""  # drawn over the character before it
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return "??"
    code = ord(char)
    if 0x2500 <= code <= 0x257F:  # box drawing: by the direction of its lines
        words = set(unicodedata.name(char, "").split())
        across = bool(words & {"HORIZONTAL", "LEFT", "RIGHT"})
        down = bool(words & {"VERTICAL", "UP", "DOWN"})
        return "-" if across and not down else "|" if down and not across else "+"
    if 0x2580 <= code <= 0x259F:  # other blocks and quadrants
        return "#"
    base = unicodedata.normalize("NFKD", char)
    if base[:1].isascii() and base[:1].isprintable() and all(map(unicodedata.combining, base[1:])):
        return base[0]  # é -> e
    return "?"


def _stand_in(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    whole, end = error.object, error.end
    out = []
    for i in range(error.start, end):
        char = whole[i]
        if char == "…" and (i + 1 == len(whole) or whole[i + 1].isspace()):
            out.append(".")  # prose trailing off (`searching… line`), not a name cut (`~`)
        elif char == "→" and i + 1 == end and whole[i - 1 : i + 2] == " → ":
            # `32.05 → 32.61` as `32.05 ->32.61`, as wide: `>` alone said greater than
            out.append("->")
            end += 1
            break
        else:
            out.append(ascii_for(char))
    return "".join(out), end


codecs.register_error(ERRORS, _stand_in)


# signs whose one-cell stand-ins (< and >) would say something else: spelled out where the
# text is made, before it is laid out, so columns stay aligned
_SPELLED = {"≤": "<=", "≥": ">="}


def spelled(text: str, encoding: str | None) -> str:
    """`text` with ≤ and ≥ written <= and >= when `encoding` cannot write them (None: as it
    is); `gaps ≥ 0 ms` drawn `gaps > 0 ms` said another threshold."""
    if encoding is None:
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        for sign, words in _SPELLED.items():
            text = text.replace(sign, words)
    except LookupError:
        pass
    return text


def c_locale() -> bool:
    """The user asked for the C (or POSIX) locale: `LC_ALL=C`, or LC_CTYPE or LANG where
    LC_ALL is not set. Python then writes UTF-8 all the same (its UTF-8 mode), where the
    locale says ASCII: a terminal in an 8-bit mode would read a control picture's bytes
    (`␛` is E2 90 9B) as C1 controls. (LC_CTYPE or LANG C alone, Python has already made
    LC_CTYPE C.UTF-8, its coercion of the C locale: that is kept.)"""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = os.environ.get(name)
        if value:
            return value in ("C", "POSIX")
    return False


def use_ascii_stand_ins(stream: IO[str] | None, ascii_only: bool) -> None:
    """Write `stream` with the stand-ins for what its encoding cannot write (`ascii_only`:
    for everything but ASCII). A stream that cannot be reconfigured is left as it is.

    Args:
        stream: standard output or standard error.
        ascii_only: `--ascii`: ASCII whatever the locale says.
    """
    if isinstance(stream, io.TextIOWrapper):
        if ascii_only or c_locale():
            stream.reconfigure(encoding="ascii", errors=ERRORS)
        else:
            stream.reconfigure(errors=ERRORS)
