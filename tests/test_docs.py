"""The project's own documents: every `docs/<file>.md#section` cited in the repository names a
document in docs/ and a heading of it, a section is cited in that one form (its heading's
anchor), and nothing cites the documents kept outside it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
# what is read for citations: the code, the tests, the benchmarks and the documents
SOURCE_SUFFIXES = (".py", ".pyi", ".rs", ".md", ".toml")
SKIPPED_DIRS = {".git", "target", "__pycache__", "samples", "__snapshots__", "build", "dist"}
# `docs/analysis.md#per-gpu`, `docs/log-format.md`
CITATION = re.compile(r"docs/([\w.-]+?\.md)(?:#([\w-]+))?")
# inside docs/: `[text](analysis.md#per-gpu)`, `[text](#splices)`
RELATIVE_LINK = re.compile(r"\]\(([\w.-]+\.md)?(?:#([\w-]+))?\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#* *$")
# a section named in words beside its document, which nothing checks: `docs/analysis.md,
# "Gaps"`, `"Gaps", docs/analysis.md`, `docs/analysis.md §Gaps`, `docs/analysis.md section Gaps`
WORDED = re.compile(
    r"""docs/[\w.-]+\.md(?:(?:, *| +)["'“]\w|,? *§|,? +section\b)"""
    r"""|["'”],? +\(?docs/[\w.-]+\.md(?![\w#])"""
)
# the documents that stood outside the repository, named by a line that cites one
OUTSIDE = re.compile(r"\b(?:LOG-FORMAT|ANALYSIS)\.md\b")
# a line that checks such a name is absent cites nothing
ABSENCE_CHECK = re.compile(r"""["'](?:LOG-FORMAT|ANALYSIS)\.md["'] not in """)


class Citation(NamedTuple):
    """One reference to a document: where it is, which document and which section."""

    where: str  # path:line
    doc: str
    anchor: str | None


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text as shown (a link shows its words), lower
    case, every character but letters, digits, `_`, `-` and spaces dropped, spaces as `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    """Every heading anchor of a Markdown document (outside code blocks; a repeated heading
    gets `-1`, `-2`, … as on GitHub)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in doc.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        base = github_anchor(match.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def source_files() -> list[Path]:
    """The repository's text files that may cite a document."""
    return sorted(
        p
        for p in ROOT.rglob("*")
        if p.is_file()
        and p.suffix in SOURCE_SUFFIXES
        and not SKIPPED_DIRS.intersection(p.relative_to(ROOT).parts[:-1])
        and p != Path(__file__)  # its citations are examples
    )


def citations() -> list[Citation]:
    """Every reference to a document of docs/, anywhere in the repository."""
    out = []
    for path in source_files():
        rel = path.relative_to(ROOT)
        for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            where = f"{rel}:{no}"
            for m in CITATION.finditer(line):
                out.append(Citation(where, m.group(1), m.group(2)))
            if rel.parts[0] == "docs":
                for m in RELATIVE_LINK.finditer(line):
                    if m.group(1) or m.group(2):
                        out.append(Citation(where, m.group(1) or rel.name, m.group(2)))
    return out


def test_the_anchor_rule_is_githubs() -> None:
    # the README's links, which GitHub resolves, and headings of each kind the documents use
    assert github_anchor("The trace (`--export-trace`)") == "the-trace---export-trace"
    assert (
        github_anchor("Comparing two runs (`--compare BEFORE AFTER`)")
        == "comparing-two-runs---compare-before-after"
    )
    assert github_anchor("kernel_util_range") == "kernel_util_range"
    assert github_anchor("C++ timing lines") == "c-timing-lines"
    assert github_anchor("What each figure means ([docs/analysis.md](docs/analysis.md))") == (
        "what-each-figure-means-docsanalysismd"
    )


def test_every_cited_section_is_a_heading_of_a_document() -> None:
    cited = citations()
    wrong = []
    for c in cited:
        doc = DOCS / c.doc
        if not doc.is_file():
            wrong.append(f"{c.where}: no docs/{c.doc}")
        elif c.anchor is not None and c.anchor not in anchors(doc):
            wrong.append(f"{c.where}: docs/{c.doc} has no heading #{c.anchor}")
    assert wrong == []
    # the code, the tests, the core and the README cite both documents by section
    by_section = [c for c in cited if c.anchor is not None]
    assert {c.doc for c in by_section} >= {"analysis.md", "log-format.md"}
    places = {c.where.split("/")[0].split(":")[0] for c in by_section}
    assert places >= {"parsers", "tui", "core", "tests", "README.md", "docs"}


def test_a_section_named_in_words_is_seen() -> None:
    cited = (
        'docs/analysis.md, "Where the busy time went"',
        '"CPU path nearby", docs/analysis.md)',
        "docs/log-format.md §Splices",
        "docs/analysis.md section Gaps",
    )
    assert all(WORDED.search(line) for line in cited)
    fine = (
        "docs/analysis.md#where-the-busy-time-went",
        "the figures of docs/analysis.md, from its first section on",
        '"What moved beyond noise (docs/analysis.md)"',
        'text = "defined in docs/analysis.md", "here"',
    )
    assert not any(WORDED.search(line) for line in fine)


def test_every_section_is_cited_by_its_anchor() -> None:
    """A section named in words could be renamed or never exist, unseen: cite its anchor."""
    worded = []
    for path in source_files():
        for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if WORDED.search(line):
                worded.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert worded == []


def test_nothing_cites_the_documents_that_were_outside_the_repository() -> None:
    named = []
    for path in source_files():
        for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line) and not ABSENCE_CHECK.search(line):
                named.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert named == []


# a name the documents give beside the source file that holds it: "`_kernel_range` in
# `parsers/assembly.py`", "(`starts_mid_run`, `parsers/assembly.py`)",
# "`parsers/report.py` `missing_timeline`"
SOURCE_FILE = r"`((?:parsers|tui|core/src|benchmarks)/[\w/.-]+\.(?:py|rs))`"
NAME = r"`([A-Za-z_]\w*)(?:\(\))?`"
NAMED_IN_FILE = re.compile(rf"{NAME}(?:,| in) {SOURCE_FILE}|{SOURCE_FILE} {NAME}")
DEFINITION = r"(?:def|class|fn|struct|const|enum|type|static)\s+{0}\b|^\s*{0}\s*[:=]"


def named_in_files(text: str) -> list[tuple[str, str]]:
    """Each (name, source file) a document's text names together."""
    flat = " ".join(text.split())  # a citation may be wrapped over two lines
    return [
        (m.group(1) or m.group(4), m.group(2) or m.group(3)) for m in NAMED_IN_FILE.finditer(flat)
    ]


def test_a_name_given_beside_a_source_file_is_defined_there() -> None:
    """A function moved to another module left `_kernel_range` cited in
    `parsers/analysis.py` and `starts_mid_run` likewise: the documents must point where the
    code is."""
    docs = [*DOCS.glob("*.md"), ROOT / "README.md"]
    pairs = [
        (doc.name, name, file) for doc in docs for name, file in named_in_files(doc.read_text())
    ]
    assert len(pairs) >= 5
    wrong = [
        pair
        for pair in pairs
        if not (ROOT / pair[2]).is_file()
        or not re.search(DEFINITION.format(re.escape(pair[1])), (ROOT / pair[2]).read_text(), re.M)
    ]
    assert wrong == []


def test_a_name_cited_beside_the_wrong_file_is_caught() -> None:
    text = "(`starts_mid_run`, `parsers/analysis.py`) and\n`_kernel_range` in `parsers/assembly.py`"
    assert named_in_files(text) == [
        ("starts_mid_run", "parsers/analysis.py"),
        ("_kernel_range", "parsers/assembly.py"),
    ]
    source = (ROOT / "parsers/analysis.py").read_text()
    assert not re.search(DEFINITION.format("starts_mid_run"), source, re.M)
    assert re.search(DEFINITION.format("build_model"), source, re.M)


def _readme_block(after: str) -> list[str]:
    """The lines of the README's first ```text block after the line holding `after`."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    at = next(k for k, line in enumerate(lines) if after in line)
    start = lines.index("```text", at) + 1
    return lines[start : lines.index("```", start)]


def test_the_readmes_report_examples_are_the_commands_output() -> None:
    """The README's report examples had drifted from what the commands they name print
    (`picked up 3607 ms` where the report writes `3.61 s`): each is run and compared."""
    import subprocess
    import sys

    samples = ROOT / "tests" / "samples"
    for top in (3, 1):
        command = f"cuzk-tui tests/samples/p12-c15-gw1.log --report --top {top}`"
        shown = _readme_block(command)
        args = [str(samples / "p12-c15-gw1.log"), "--report", "--top", str(top)]
        run = subprocess.run(
            [sys.executable, "-m", "tui.cli", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        printed = run.stdout.splitlines()
        if top == 1:  # the example quotes the largest gap alone
            first = next(k for k, line in enumerate(printed) if line.startswith("  1. "))
            printed = printed[first : first + len(shown)]
        assert shown == printed, top


def test_the_readmes_compare_example_is_the_commands_output() -> None:
    """The README's `--compare` example had drifted (`+0.0 points` where the command prints
    `0.0 points`, a row missing): its lines are the command's, the `…` standing for the
    lines it leaves out."""
    import subprocess
    import sys

    shown = _readme_block("p12-c15-gw1.log p12-gw2-merged.log --report` (one worker per GPU")
    args = [str(ROOT / "tests" / "samples" / x) for x in ("p12-c15-gw1.log", "p12-gw2-merged.log")]
    run = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--compare", *args, "--report"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    printed = run.stdout.splitlines()
    cut = shown.index("…")
    head, tail = shown[:cut], shown[cut + 1 :]
    assert printed[: len(head)] == head
    start = printed.index(tail[0], len(head))
    assert printed[start : start + len(tail)] == tail
