"""The drift check and the translators' command line (part of :mod:`editions`).

A Chinese page drifts when a recorded hash no longer matches its English block, when its code
cells or its ``literalinclude``/``eval-rst`` blocks are not its English page's, or when an English
page has no Chinese page (and is not listed in ``zh/UNTRANSLATED.txt``). The translators' tools
start a Chinese page, copy the English code cells into one, and re-record one::

    python book/_ext/editions.py --check                      # the drift report (exit 1 on drift)
    python book/_ext/editions.py --update zh/book/...md       # re-record, once the translation is updated
    python book/_ext/editions.py --start book/03-scaling/index.md   # a new Chinese page to translate
    python book/_ext/editions.py --sync-code zh/book/...md    # the English page's code cells, prose untouched
"""


import argparse
import difflib
import json
import posixpath
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from editions_records import (
    CODE_CELL,
    FENCE,
    ROOT,
    UNTRANSLATED_FILE,
    ZH,
    Block,
    current_record,
    english_pages,
    file_blocks,
    markdown_blocks,
    read_record,
    sources_of,
    split_front_matter,
    toc_docnames,
    untranslated,
    write_record,
    zh_path,
)

__all__ = [
    "Drift",
    "block_changes",
    "check",
    "code_cells",
    "code_differences",
    "copied_paragraphs",
    "directive_differences",
    "english_revision",
    "in_chinese_folder",
    "main",
    "source_directives",
    "start",
    "sync_code",
    "update",
]

# --- the drift check --------------------------------------------------------------------------------


def _quote(text: str, width: int = 100) -> str:
    lines = text.strip().splitlines()
    shown = [line[:width] + ("…" if len(line) > width else "") for line in lines[:8]]
    if len(lines) > 8:
        shown.append(f"… ({len(lines) - 8} more lines)")
    return "\n".join("      > " + line for line in shown)


def block_changes(recorded: Sequence[str], blocks: Sequence[Block]) -> list[str]:
    """What changed in an English file since a translation recorded its block hashes.

    Args:
        recorded: The hashes the Chinese page recorded.
        blocks: The English file's blocks now.

    Returns:
        One entry per change, quoting the English text now (empty when nothing changed).
    """
    current = [block.digest for block in blocks]
    changes = []
    matcher = difflib.SequenceMatcher(None, list(recorded), current, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag in ("replace", "insert"):
            for j in range(j1, j2):
                what = "changed" if tag == "replace" else "new"
                kind = "" if blocks[j].kind == "text" else f" ({blocks[j].kind})"
                changes.append(f"    {what}: English block {j + 1} of {len(blocks)}{kind} now reads:\n"
                               + _quote(blocks[j].text))
        if tag == "delete" or (tag == "replace" and i2 - i1 > j2 - j1):
            gone = recorded[i1:i2] if tag == "delete" else recorded[i1 + (j2 - j1):i2]
            after = f"after English block {j1}" if j1 else "at the start"
            changes.append(f"    removed: {len(gone)} recorded block(s) {after} (hashes {' '.join(gone)}) are no "
                           "longer in the English text: drop their translation")
    return changes


@dataclass
class Drift:
    """The state of the Chinese edition against the English one.

    Attributes:
        missing: English pages with no Chinese page and not listed as untranslated.
        pending: English pages listed in ``zh/UNTRANSLATED.txt`` (to translate).
        stale: ``{Chinese page: [changes]}`` for pages whose record no longer matches.
        problems: Anything else wrong (a listed page that exists, an unknown listed page, code cells
            that differ, a quiz with no Chinese file, a page the Chinese toc lacks or misplaces...).
    """

    missing: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    stale: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No drift (pending pages aside)."""
        return not (self.missing or self.stale or self.problems)

    def report(self) -> str:
        """The drift, in words, with what to do about each kind."""
        parts = []
        for page, changes in self.stale.items():
            parts.append(f"{page} no longer matches its English source:\n" + "\n".join(changes)
                         + f"\n  update the translation, then: python book/_ext/editions.py --update {page}")
        if self.missing:
            parts.append("English pages with no Chinese page (translate them, or list them in "
                         f"{ZH}/{UNTRANSLATED_FILE}):\n" + "\n".join(f"  {page}" for page in self.missing))
        if self.problems:
            parts.append("\n".join(self.problems))
        if self.pending:
            parts.append(f"still to translate ({ZH}/{UNTRANSLATED_FILE}, {len(self.pending)} pages):\n"
                         + "\n".join(f"  {page}" for page in self.pending))
        return "\n\n".join(parts)


def code_cells(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The code cells of a page or notebook as the notebook cache sees them: ``(source, metadata)``."""
    import jupytext

    notebook = jupytext.read(path)
    return [(cell.source, dict(cell.metadata)) for cell in notebook.cells if cell.cell_type == "code"]


def code_differences(english: Path, chinese: Path) -> list[str]:
    """How a Chinese page's code cells differ from its English page's (empty when identical).

    Args:
        english: The English page.
        chinese: Its translation.

    Returns:
        One line per difference.
    """
    import jupytext

    ours, theirs = code_cells(chinese), code_cells(english)
    problems = []
    kernels = [jupytext.read(path).metadata.get("kernelspec") for path in (english, chinese)]
    if kernels[0] != kernels[1]:
        problems.append(f"kernelspec {kernels[1]} instead of {kernels[0]}")
    if len(ours) != len(theirs):
        problems.append(f"{len(ours)} code cells instead of {len(theirs)}")
    for number, ((code, meta), (their_code, their_meta)) in enumerate(zip(ours, theirs), 1):
        if code != their_code:
            first = next((a for a, b in zip(code.splitlines() + [""], their_code.splitlines() + [""]) if a != b), "")
            problems.append(f"code cell {number} differs (first differing line: {first.strip()[:80]!r})")
        elif meta != their_meta:
            problems.append(f"code cell {number}'s metadata {meta} differs from {their_meta}")
    return problems


_INCLUDE = re.compile(r"^(\s*(?:`{3,}|~{3,}|:{3,})\s*\{literalinclude\}\s+)(?!/)(\S+)", re.MULTILINE)
_SOURCE_DIRECTIVES = ("{literalinclude}", "{eval-rst}")
"""Directives that show the package's source or API: a Chinese page has the English page's, unchanged."""


def in_chinese_folder(text: str) -> str:
    """A page's text with each relative ``literalinclude`` path one folder deeper: a page under ``zh/``
    includes the same file as its English page (``../../src/x.py`` becomes ``../../../src/x.py``)."""
    return _INCLUDE.sub(lambda match: f"{match.group(1)}../{match.group(2)}", text)


def source_directives(text: str) -> list[str]:
    """The ``literalinclude`` and ``eval-rst`` blocks of a MyST page's prose (not of its code cells)."""
    blocks: list[str] = []
    for is_cell, segment in _md_segments(split_front_matter(text)[1]):
        if is_cell:
            continue
        block: list[str] = []
        fence: tuple[str, int] | None = None
        for line in segment.splitlines():
            if fence is None:
                match = FENCE.match(line)
                if match and match.group(3) in _SOURCE_DIRECTIVES:
                    block, fence = [line.strip()], (match.group(2)[0], len(match.group(2)))
                continue
            stripped = line.strip()
            block.append(stripped)
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= fence[1]:
                blocks.append("\n".join(block))
                fence = None
    return blocks


def directive_differences(english: Path, chinese: Path) -> list[str]:
    """How a Chinese page's ``literalinclude`` and ``eval-rst`` blocks differ from its English page's
    (paths one folder deeper, see :func:`in_chinese_folder`); empty when they match."""
    if english.suffix != ".md":
        return []
    ours = source_directives(chinese.read_text(encoding="utf-8"))
    theirs = source_directives(in_chinese_folder(english.read_text(encoding="utf-8")))
    problems = [] if len(ours) == len(theirs) else [f"{len(ours)} literalinclude/eval-rst blocks instead of "
                                                     f"{len(theirs)}"]
    for number, (block, their_block) in enumerate(zip(ours, theirs), 1):
        if block != their_block:
            problems.append(f"literalinclude/eval-rst block {number} is not the English page's: "
                            f"{their_block.splitlines()[0][:80]!r} ... ({their_block.count(chr(10)) + 1} lines)")
    return problems


def check(root: Path = ROOT) -> Drift:
    """The drift of the Chinese edition (``root/zh``) against the English one (``root``).

    Args:
        root: The repository.

    Returns:
        A :class:`Drift`.
    """
    drift = Drift()
    pages = english_pages(root)
    listed = untranslated(root)
    for page in listed:
        if page not in pages:
            drift.problems.append(f"{ZH}/{UNTRANSLATED_FILE} lists {page}, which is not a page of the English toc")
    for page in pages:
        chinese = zh_path(page, root)
        relative = chinese.relative_to(root).as_posix()
        if not chinese.is_file():
            (drift.pending if page in listed else drift.missing).append(page)
            continue
        if page in listed:
            drift.problems.append(f"{relative} exists, yet {ZH}/{UNTRANSLATED_FILE} still lists {page}: "
                                  "remove the line")
        recorded = read_record(chinese)
        changes = []
        for source in sources_of(page, root):
            blocks = file_blocks(root / source)
            if source not in recorded:
                changes.append(f"  {source}: not recorded (run --update once it is translated)")
                continue
            found = block_changes(recorded[source], blocks)
            if found:
                changes += [f"  {source}:"] + found
            if source.endswith(".json") and not zh_path(source, root).is_file():
                drift.problems.append(f"{relative} shows the quiz {source}, which has no Chinese file "
                                      f"{ZH}/{source}")
        extra = sorted(set(recorded) - set(sources_of(page, root)))
        if extra:
            changes.append(f"  records {extra}, which this page no longer uses: run --update")
        if changes:
            drift.stale[relative] = changes
        differences = code_differences(root / page, chinese) + directive_differences(root / page, chinese)
        if differences:
            drift.problems.append(f"{relative}: its code cells must be the English page's, character for character "
                                  f"(copy them from {page}):\n" + "\n".join(f"  {d}" for d in differences))
    translated = [posixpath.splitext(page)[0] for page in pages if zh_path(page, root).is_file()]
    toc = toc_docnames(root / ZH)
    if toc != translated:
        drift.problems.append(f"{ZH}/_toc.yml must list the translated pages in the English toc's order:\n"
                              f"  expected {translated}\n  found    {toc}")
    return drift


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def copied_paragraphs(english: Path, chinese: Path, min_words: int = 8) -> list[str]:
    """Paragraphs of a Chinese page that are an English paragraph word for word (not translated yet).

    Code listings (fenced ``python``, ``bash``... blocks) and short blocks (headings of names,
    formulas) are not counted.

    Args:
        english: The English page.
        chinese: Its translation.
        min_words: The fewest Latin words a copied block must have to be reported.

    Returns:
        The copied paragraphs.
    """
    ours = file_blocks(chinese) if chinese.suffix != ".md" else markdown_blocks(
        split_front_matter(chinese.read_text(encoding="utf-8"))[1])
    theirs = {block.digest for block in file_blocks(english)}
    copied = []
    for block in ours:
        fence = FENCE.match(block.text)
        if fence and fence.group(3) and not fence.group(3).startswith("{"):
            continue  # a code listing
        if block.digest in theirs and not _CJK.search(block.text) and len(re.findall(r"[A-Za-z]{2,}",
                                                                                    block.text)) >= min_words:
            copied.append(block.text)
    return copied


def _md_segments(body: str) -> list[tuple[bool, str]]:
    """A MyST page's body as ``(is a code cell, text)`` segments that join back into it."""
    segments: list[tuple[bool, str]] = []
    prose: list[str] = []
    cell: list[str] = []
    fence: tuple[str, int] | None = None
    for line in body.splitlines(keepends=True):
        if fence is None:
            match = FENCE.match(line)
            if match and match.group(3) == CODE_CELL:
                segments.append((False, "".join(prose)))
                prose, cell, fence = [], [line], (match.group(2)[0], len(match.group(2)))
            else:
                prose.append(line)
            continue
        cell.append(line)
        stripped = line.strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= fence[1]:
            segments.append((True, "".join(cell)))
            cell, fence = [], None
    segments.append((False, "".join(prose) + "".join(cell)))  # (an unclosed fence stays as it was)
    return [segment for segment in segments if segment[1]]


def _aligned(ours: list[Any], theirs: list[Any], key: Any) -> list[tuple[int, list[Any]]]:
    """For each of our code cells (and -1: before the first), the English cells that belong there."""
    plan: dict[int, list[Any]] = {i: [] for i in range(-1, len(ours))}
    matcher = difflib.SequenceMatcher(None, [key(c) for c in ours], [key(c) for c in theirs], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                plan[i].append(theirs[j])
        elif tag in ("replace", "insert"):
            plan[i1 if tag == "replace" else i1 - 1].extend(theirs[j1:j2])
    return sorted(plan.items())


def _changed_cells(ours: list[str], theirs: list[str]) -> int:
    opcodes = difflib.SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")


def sync_code(chinese: Path, root: Path = ROOT) -> int:
    """Gives a Chinese page its English page's code cells, leaving its prose alone (``--sync-code``).

    Code cells are matched in order: an unchanged cell stays, a changed one is replaced where it
    was, a new English cell goes after the code cell before it, a removed one goes. Check where new
    cells landed, then translate the prose around them.

    Args:
        chinese: A Chinese page, ``zh/<English path>``.
        root: The repository.

    Returns:
        How many code cells changed (replaced, added or removed).

    Raises:
        ValueError: ``chinese`` is not under ``zh/`` or translates no English page.
    """
    english = root / chinese.resolve().relative_to((root / ZH).resolve())
    if not english.is_file():
        raise ValueError(f"chinese: {chinese} translates {english.relative_to(root)}, which does not exist")
    if chinese.suffix == ".ipynb":
        ours_nb, theirs_nb = (json.loads(path.read_text(encoding="utf-8")) for path in (chinese, english))
        source = lambda cell: "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]  # noqa: E731
        ours = [c for c in ours_nb["cells"] if c["cell_type"] == "code"]
        theirs = [c for c in theirs_nb["cells"] if c["cell_type"] == "code"]
        plan = dict(_aligned(ours, theirs, lambda c: (source(c), json.dumps(c.get("metadata", {}), sort_keys=True))))
        cells, index = list(plan[-1]), 0
        for cell in ours_nb["cells"]:
            if cell["cell_type"] == "code":
                cells += plan[index]
                index += 1
            else:
                cells.append(cell)
        changed = _changed_cells([source(c) for c in ours], [source(c) for c in theirs])
        ours_nb["cells"] = cells
        chinese.write_text(json.dumps(ours_nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return changed
    text = chinese.read_text(encoding="utf-8")
    front, body = split_front_matter(text)
    segments = _md_segments(body)
    ours = [segment for is_code, segment in segments if is_code]
    theirs = [segment for is_code, segment in _md_segments(split_front_matter(english.read_text(
        encoding="utf-8"))[1]) if is_code]
    plan = dict(_aligned(ours, theirs, lambda c: c))
    parts, index = ["\n".join(cell.rstrip("\n") for cell in plan[-1]) + ("\n\n" if plan[-1] else "")], 0
    for is_code, segment in segments:
        if is_code:
            parts.append("\n\n".join(cell.rstrip("\n") for cell in plan[index]) + ("\n" if plan[index] else ""))
            index += 1
        else:
            parts.append(segment)
    new_body = "".join(parts)
    changed = _changed_cells(ours, theirs)
    chinese.write_text((f"---\n{front}---\n" if front or text.startswith("---\n") else "") + new_body,
                       encoding="utf-8")
    return changed


def update(chinese: Path, root: Path = ROOT) -> dict[str, list[str]]:
    """Re-records a Chinese page's English sources (what ``--update`` does).

    Args:
        chinese: A Chinese page, ``zh/<English path>``.
        root: The repository.

    Returns:
        The record written.

    Raises:
        ValueError: ``chinese`` is not under ``zh/``, or translates no English page.
    """
    chinese = chinese.resolve()
    try:
        english = chinese.relative_to((root / ZH).resolve()).as_posix()
    except ValueError:
        raise ValueError(f"chinese: {chinese} is not under {root / ZH}") from None
    if not (root / english).is_file():
        raise ValueError(f"chinese: {chinese} translates {english}, which does not exist")
    record = current_record(english, root)
    write_record(chinese, record)
    return record


def start(english: str, root: Path = ROOT) -> Path:
    """Starts the translation of an English page: copies it (and its quizzes) under ``zh/``, records
    its sources, and removes it from ``zh/UNTRANSLATED.txt``.

    Args:
        english: The English page, e.g. ``"book/03-scaling/index.md"``.
        root: The repository.

    Returns:
        The new Chinese page.

    Raises:
        ValueError: ``english`` is not a page of the English toc, or already has a Chinese page.
    """
    if english not in english_pages(root):
        raise ValueError(f"english: {english} is not a page of the English toc")
    chinese = zh_path(english, root)
    if chinese.exists():
        raise ValueError(f"english: {english} already has a Chinese page, {chinese}")
    for source in sources_of(english, root):
        target = zh_path(source, root)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.suffix == ".md":
                target.write_text(in_chinese_folder((root / source).read_text(encoding="utf-8")), encoding="utf-8")
            else:
                target.write_bytes((root / source).read_bytes())
    update(chinese, root)
    listing = root / ZH / UNTRANSLATED_FILE
    if listing.is_file():
        lines = listing.read_text(encoding="utf-8").splitlines(keepends=True)
        listing.write_text("".join(line for line in lines if line.split("#", 1)[0].strip() != english),
                           encoding="utf-8")
    return chinese


def english_revision(root: Path = ROOT) -> tuple[str, str, bool]:
    """The English source's git revision: ``(short hash, commit date, whether pages have uncommitted changes)``;
    ``("", "", False)`` outside a git checkout."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                              check=True).stdout.strip()

    try:
        revision, date = git("log", "-1", "--format=%h %cs").split()
        dirty = bool(git("status", "--porcelain", "--", "book", "notebooks", "_toc.yml"))
    except (OSError, subprocess.SubprocessError, ValueError):
        return "", "", False
    return revision, date, dirty


# --- command line ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``--check`` (default), ``--update PAGE...``, ``--start ENGLISH_PAGE``; see the module's docstring."""
    parser = argparse.ArgumentParser(description="The Chinese edition's drift check and records.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="print the drift; exit 1 when there is some")
    group.add_argument("--update", nargs="+", metavar="ZH_PAGE", help="re-record these Chinese pages' sources")
    group.add_argument("--start", metavar="ENGLISH_PAGE", help="copy an English page under zh/ to translate it")
    group.add_argument("--sync-code", nargs="+", metavar="ZH_PAGE",
                       help="give these Chinese pages their English pages' code cells (prose untouched)")
    args = parser.parse_args(argv)
    if args.sync_code:
        for page in args.sync_code:
            print(f"{page}: {sync_code(Path(page))} code cell change(s) copied from its English page")
        return 0
    if args.update:
        for page in args.update:
            record = update(Path(page))
            print(f"{page}: recorded " + ", ".join(f"{len(h)} blocks of {s}" for s, h in record.items()))
        return 0
    if args.start:
        chinese = start(args.start)
        print(f"{chinese.relative_to(ROOT)}: copied from {args.start}, recorded, removed from "
              f"{ZH}/{UNTRANSLATED_FILE}. Translate it, add it to {ZH}/_toc.yml where the English toc has it, "
              f"then run: python book/_ext/editions.py --update {chinese.relative_to(ROOT)}")
        return 0
    drift = check()
    print(drift.report() or "the Chinese edition matches the English one")
    return 0 if drift.ok else 1
