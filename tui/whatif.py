"""The viewer's what-if (the command palette): a change asked for, the loaded log replayed with
it (parsers/whatif.py) on a thread, and the prediction shown as `--what-if` prints it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import SystemCommand
from textual.widgets import Static

from parsers.errors import OptionError
from parsers.model import LogModel
from parsers.whatif import KNOBS, Change, Prediction, checked_changes, predict, prediction_text
from tui.screens import AskScreen, TextBoxScreen

if TYPE_CHECKING:
    from tui.app import CuzkApp

# The narrowest the prediction's text is wrapped to.
MIN_WIDTH = 40
SCROLLBAR = 2
# The palette's ready-made changes (any other is typed: "What if…").
PRESETS = (
    ("split-lock", "allocation and upload overlap the previous holder's kernels"),
    ("synthesis-speed=2", "synthesis twice as fast"),
    ("gpu-speed=2", "the GPU's kernels twice as fast"),
)


class WhatIfAskScreen(AskScreen):
    """A one-line box: the change, as --what-if takes it (several apart by spaces)."""

    DEFAULT_CSS = """
    WhatIfAskScreen > Vertical { width: 76; }
    """
    BOX_TITLE = "what if"
    BOX_SUBTITLE = "enter predicts · esc closes"
    PLACEHOLDER = "e.g. gpu-workers=2 synthesis-workers=40 split-lock"
    # the knobs, as --help lists them (which the viewer's user cannot see)
    HINT = "knobs: " + ", ".join(
        k.name if k.kind is bool else f"{k.name}={'N' if k.kind is int else 'X'}"
        for k in KNOBS.values()
    )


class WhatIfScreen(TextBoxScreen):
    """The prediction for the loaded log, made on a thread (a long log takes a while)."""

    BOX_TITLE = "what if"

    def __init__(self, model: LogModel, changes: tuple[Change, ...]) -> None:
        super().__init__()
        self.model = model
        self.changes = changes
        self.prediction: Prediction | None = None  # once made
        self.text: str | None = None  # ... and as shown

    def body(self) -> Static:
        """A line that says it is on its way."""
        what = ", ".join(c.text for c in self.changes)
        return Static(Text(f"replaying the log with {what}…", style="dim"), id="prediction")

    def opened(self) -> None:
        """Start the replay."""
        self.replay()

    @work(thread=True, exclusive=True, group="whatif")
    def replay(self) -> None:
        """Predict off the UI thread, then show it."""
        prediction = predict(self.model, self.changes)
        self.app.call_from_thread(self.show, prediction)

    def show(self, prediction: Prediction) -> None:
        """The prediction, as `--what-if` prints it, as wide as the box (plain text: never
        markup)."""
        self.prediction = prediction
        static = self.query_one("#prediction", Static)
        # less the scrollbar's columns: it comes once the text is longer than the box
        width = max(MIN_WIDTH, static.content_size.width - SCROLLBAR)
        self.text = prediction_text(prediction, width)
        static.update(Text(self.text))

    def on_resize(self) -> None:
        """A new width: the lines wrapped again."""
        if self.prediction is not None:
            self.call_after_refresh(self.show, self.prediction)


def not_replayed(model: LogModel) -> str | None:
    """Why what-if cannot replay `model` as shown (None: it can)."""
    if model.restarted:
        return "the daemon restarted in this log: what-if replays one run (give it a log of one)"
    if model.gpu_keys is not None:
        return "what-if replays one log: open it alone"
    return None


def open_what_if(app: CuzkApp, texts: list[str]) -> None:
    """Replay the loaded log with the changes `texts` name, or say what is wrong with them
    (the model may have changed since the palette offered it: a restart read meanwhile)."""
    refused = not_replayed(app.model)
    if refused is not None:
        app.notify(refused, severity="warning")
        return
    try:
        changes = checked_changes(texts)
    except OptionError as exc:
        app.notify(str(exc), severity="error")
        return
    if not changes:
        return
    app.open_screen(WhatIfScreen(app.model, changes))


def ask_what_if(app: CuzkApp) -> None:
    """Ask for a change, then predict it."""

    def asked(text: str | None) -> None:
        if text:
            open_what_if(app, text.split())

    app.open_screen(WhatIfAskScreen(), asked)


def commands(app: CuzkApp) -> Iterator[SystemCommand]:
    """The palette's what-if entries: none where what-if cannot replay what is shown, several
    logs or a daemon that restarted (they were offered, then refused once chosen)."""
    if not_replayed(app.model) is not None:
        return
    yield SystemCommand(
        "What if…",
        "Predict s/proof and utilization with a setting changed (like --what-if)",
        lambda: ask_what_if(app),
    )
    for change, means in PRESETS:
        yield SystemCommand(
            f"What if: {change}", f"Predict it for this log: {means}", _preset(app, change)
        )


def _preset(app: CuzkApp, change: str) -> Callable[[], None]:
    return lambda: open_what_if(app, [change])
