"""Colour palettes of the Gantt: the default, and one safe with red-green colour blindness."""

from __future__ import annotations

# component class -> colour; every palette names the same classes
DEFAULT = {
    "gantt--pre-lock": "#5f87af",
    "gantt--lock-wait": "#d75f5f",
    "gantt--alloc": "#d7af00",
    "gantt--kernel": "#5fd75f",
    "gantt--barrier": "#af5fd7",
    "gantt--cleanup": "#00afaf",
    "gantt--unknown": "#6c6c6c",
    "gantt--in-flight": "#eeeeee",
    "gantt--failed": "#d700d7",
    "gantt--busy": "#87afd7",
    "gantt--kernel-lane": "#5fd75f",
    "gantt--gap": "#ff5f5f",
    "gantt--synth": "#d7875f",
    "gantt--proof": "#87afff",
    "gantt--proof-alt": "#d7afff",
}
# Okabe & Ito's colours, chosen so that the phases also stay apart in 16 colours
OKABE_ITO = {
    "gantt--pre-lock": "#56b4e9",
    "gantt--lock-wait": "#e69f00",
    "gantt--alloc": "#f0e442",
    "gantt--kernel": "#2b7fff",
    "gantt--barrier": "#cc79a7",
    "gantt--cleanup": "#009e73",
    "gantt--unknown": "#707070",
    "gantt--in-flight": "#ffffff",
    "gantt--failed": "#d700d7",
    "gantt--busy": "#56b4e9",
    "gantt--kernel-lane": "#2b7fff",
    "gantt--gap": "#d55e00",
    "gantt--synth": "#e69f00",
    "gantt--proof": "#56b4e9",
    "gantt--proof-alt": "#cc79a7",
}
PALETTES = {"default": DEFAULT, "okabe-ito": OKABE_ITO}


def palette_css() -> str:
    """The Gantt's colour rules: the default palette, and each other one under its class."""
    rules = [f"GanttView > .{cls} {{ color: {colour}; }}" for cls, colour in DEFAULT.items()]
    for name, palette in PALETTES.items():
        if name != "default":
            rules += [
                f"GanttView.-{name} > .{cls} {{ color: {colour}; }}"
                for cls, colour in palette.items()
            ]
    return "\n".join(rules)
