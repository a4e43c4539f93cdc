"""Log text made safe for a terminal: every control, escape and format character shown visibly."""

from __future__ import annotations

import sys
import unicodedata
from typing import NamedTuple

# Why every one of these and not only ESC: a terminal acts on C0 and C1 controls (ESC starts
# CSI, OSC, DCS, APC, SOS and PM sequences; U+009B is a CSI on its own, U+009D an OSC), and
# format characters (bidi overrides and isolates, zero-width joiners, U+2028/2029) reorder or
# hide what is printed around them. Replacing each such character by printable text leaves
# nothing for the terminal to interpret, whatever sequence it belonged to.
_DANGEROUS_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escape(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␛ ␇ ␀ …
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)) in _DANGEROUS_CATEGORIES:
            table[code] = _escape(code)
    return table


_TABLE: dict[int, str] | None = None
_TABLE_KEEP_TAB: dict[int, str] | None = None


def _table(keep_tab: bool) -> dict[int, str]:
    global _TABLE, _TABLE_KEEP_TAB
    if _TABLE is None or _TABLE_KEEP_TAB is None:
        _TABLE = _build_table()
        _TABLE_KEEP_TAB = {k: v for k, v in _TABLE.items() if k != 0x09}
    return _TABLE_KEEP_TAB if keep_tab else _TABLE


def visible(text: str, keep_tab: bool = False) -> str:
    """`text` with every control, escape, bidi and other format character made visible.

    C0 controls become their control pictures (ESC is `␛`, so `ESC [2K` reads `␛[2K`), DEL
    `␡`, and C1 controls, format characters, line/paragraph separators and lone surrogates
    `<U+XXXX>`. Nothing else changes: the result holds no character a terminal acts on.

    Args:
        text: anything that came from the log or the command line.
        keep_tab: leave tabs as they are (a raw line whose tabs the renderer expands).
    """
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to do
    return text.translate(_table(keep_tab))


def visible_bytes(raw: bytes) -> str:
    """Undecodable bytes as U+FFFD, then `visible`."""
    return visible(raw.decode("utf-8", "replace"))


CLIPBOARD_LIMIT_BYTES = 1024  # an id is tens of bytes; a clipboard filled by a log is an attack


class ClipboardText(NamedTuple):
    """What may go to a clipboard, and what was taken out on the way."""

    text: str
    removed: int  # characters dropped: controls, format characters, separators
    cut: bool  # longer than CLIPBOARD_LIMIT_BYTES and cut there


def clipboard_text(text: str, limit_bytes: int = CLIPBOARD_LIMIT_BYTES) -> ClipboardText:
    """`text` as it may be put on a clipboard: printable characters only, at most `limit_bytes`.

    A clipboard is pasted into a shell: a C0 or C1 control, DEL or a bidi override there is
    not shown but acted on (`ESC[201~` ends a bracketed paste, and what follows it runs as
    typed). So such characters are dropped, not made visible (a visible `␛` pasted is still
    not the id), and the caller says that something was.

    Args:
        text: an id from the log.
        limit_bytes: the most UTF-8 bytes kept; a longer text is cut at a character's start.
    """
    kept = text if text.isprintable() else "".join(c for c in text if c.isprintable())
    removed = len(text) - len(kept)
    raw = kept.encode()  # lone surrogates are not printable: none is left
    cut = len(raw) > limit_bytes
    if cut:
        kept = raw[:limit_bytes].decode("utf-8", "ignore")
    return ClipboardText(kept, removed, cut)
