"""The book's two editions, English (the source) and Chinese (``zh/``), kept in step.

A local Sphinx extension (build tooling, never imported by a reader) loaded by both editions'
``_config.yml`` (``sphinx: local_extensions: editions: book/_ext``, ``../book/_ext`` from ``zh/``),
and a command line for translators. The Chinese edition is a second Jupyter Book, ``zh/``, whose
pages mirror the English paths (``zh/book/03-scaling/index.md`` translates
``book/03-scaling/index.md``); ``scripts/build-zh.sh`` builds it into ``_build/html/zh/`` after the
English one, sharing its notebook cache. ``zh/TRANSLATING.md`` is the translators' guide.

At build time, in both editions, this extension

- puts a language switch in the header of every page: a relative link to the same page in the
  other edition (to the other edition's first page where that page is not translated yet), so it
  works over http and from ``file://`` alike, plus ``<link rel="alternate" hreflang>`` in the head;
- renders the lab checkers' stored verdicts in the edition's language (a verdict keeps its
  message's key and values: :mod:`helpers.exercises.messages`).

In the Chinese edition only, it also

- replaces each figure's caption and text alternative by the Chinese ones given in the page
  (a ``figure-text`` directive right after the code cell that draws the figure: the cell's code,
  and so its English caption, stays identical to the English page's);
- shows a chapter's quiz from its Chinese file (``zh/book/quizzes/chNN.json``), the page's code
  still naming the English one, and the quiz's buttons in Chinese;
- resolves a reference to a page, label or API object that the Chinese edition does not hold yet
  to the English page (``objects.inv`` of the English build), so that a partly translated edition
  builds with ``-n -W`` and its links lead somewhere;
- renders ``edition-status`` (the Chinese intro): the English revision the edition follows, and
  the pages still to translate or to update;
- warns (an error under ``-W``) when a Chinese page's code cells differ from its English page's
  (the notebook cache matches a notebook by its code: it would be executed again, and its numbers
  could differ), and when ``jieba`` is missing (Sphinx's Chinese search then indexes no Chinese word).

The drift check: each Chinese page records, in its front matter (a lab: in its notebook metadata),
the English files it translates and a hash of each of their blocks (paragraphs, figure captions,
quiz questions). ``tests/test_editions.py`` fails when an English page has no Chinese page (and is
not listed in ``zh/UNTRANSLATED.txt``) or when a recorded hash no longer matches, printing the
English blocks that changed. Command line::

    python book/_ext/editions.py --check                      # the drift report (exit 1 on drift)
    python book/_ext/editions.py --update zh/book/...md       # re-record, once the translation is updated
    python book/_ext/editions.py --start book/03-scaling/index.md   # a new Chinese page to translate
    python book/_ext/editions.py --sync-code zh/book/...md    # the English page's code cells, prose untouched
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import html
import json
import posixpath
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.parsers.rst import Directive, directives

ROOT = Path(__file__).resolve().parents[2]
"""The repository: the English edition's source folder."""
ZH = "zh"
"""The Chinese edition's folder in the repository, and in the built site (``_build/html/zh``)."""
UNTRANSLATED_FILE = "UNTRANSLATED.txt"
"""In ``zh/``: the English pages not translated yet, one path a line (the drift check's one exception)."""
RECORD_KEY = "translation"
"""The front-matter (notebook-metadata) key of a Chinese page's record of its English sources."""
SOURCE_SUFFIXES = (".md", ".ipynb")
GENERATED_PAGES = ("genindex", "search", "py-modindex")
"""Pages Sphinx writes in both editions without a source file (the module index: both editions document modules)."""
_EDITIONS = {"en": {"text": "English", "hreflang": "en", "title": "Read this page in English"},
             "zh": {"text": "中文", "hreflang": "zh-CN", "title": "阅读本页的中文版"}}
_ZH_MISSING_TITLE = "本页尚未译成中文：前往中文版首页"

# --- the editions' pages ---------------------------------------------------------------------------


def toc_docnames(book: Path) -> list[str]:
    """The docnames of a book's ``_toc.yml``, in reading order.

    Args:
        book: The book's source folder (``ROOT`` or ``ROOT / "zh"``).

    Returns:
        Docnames such as ``"book/03-scaling/index"``; an empty list when there is no ``_toc.yml``.
    """
    from sphinx_external_toc.parsing import parse_toc_yaml

    toc = book / "_toc.yml"
    return list(parse_toc_yaml(toc).keys()) if toc.is_file() else []


def source_path(book: Path, docname: str) -> Path | None:
    """The source file of ``docname`` in ``book`` (``.md`` or ``.ipynb``), or ``None``."""
    for suffix in SOURCE_SUFFIXES:
        path = book / f"{docname}{suffix}"
        if path.is_file():
            return path
    return None


def english_pages(root: Path = ROOT) -> list[str]:
    """Every page of the English edition, as repository paths (``"book/intro.md"``), in toc order."""
    pages = []
    for docname in toc_docnames(root):
        path = source_path(root, docname)
        if path is not None:
            pages.append(path.relative_to(root).as_posix())
    return pages


def untranslated(root: Path = ROOT) -> list[str]:
    """The English pages listed in ``zh/UNTRANSLATED.txt`` (comments ``#`` and blank lines skipped)."""
    path = root / ZH / UNTRANSLATED_FILE
    if not path.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def zh_path(english: str, root: Path = ROOT) -> Path:
    """Where the Chinese translation of the English file ``english`` lives (the same path under ``zh/``)."""
    return root / ZH / english


# --- blocks and their hashes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One unit of English text a translation follows: a paragraph, a caption, a quiz question.

    Attributes:
        kind: ``"text"`` (a paragraph, heading, list or directive chunk of the prose), ``"caption"``
            or ``"alt"`` (of a figure drawn by a code cell), or ``"question"`` (of a quiz).
        text: The block as written in the English file.
    """

    kind: str
    text: str

    @property
    def digest(self) -> str:
        """12 hex digits of the SHA-256 of the block's kind and text, whitespace collapsed (re-wrapping
        a paragraph is not a change; a changed word is)."""
        normal = self.kind + ":" + " ".join(self.text.split())
        return hashlib.sha256(normal.encode("utf-8")).hexdigest()[:12]


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{[^}]*\}|[\w+-]*)")
_FRONT_MATTER = re.compile(r"\A---\n(.*?\n)?---\n", re.DOTALL)
_CODE_CELL = "{code-cell}"


def split_front_matter(text: str) -> tuple[str, str]:
    """``(front matter without its --- lines, body)``; the front matter is empty when there is none."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return "", text
    return match.group(1) or "", text[match.end():]


def _cell_code(lines: list[str]) -> str:
    """A ``{code-cell}`` fence's code, without its options (``:tags: ...`` lines or a ``---`` block)."""
    body = lines[1:-1]
    if body and body[0].strip() == "---":
        end = next((i for i in range(1, len(body)) if body[i].strip() == "---"), 0)
        body = body[end + 1:]
    while body and body[0].startswith(":"):
        body = body[1:]
    return "\n".join(body)


def caption_blocks(code: str) -> list[Block]:
    """The captions and text alternatives a code cell's ``captioned(fig, caption, alt=...)`` calls give.

    Args:
        code: The cell's source (IPython magics are skipped).

    Returns:
        A ``"caption"`` and an ``"alt"`` block per call, in the order of the code.
    """
    source = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines())
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and (getattr(node.func, "attr", None) == "captioned" or getattr(node.func, "id", None) == "captioned")]
    blocks = []
    for call in sorted(calls, key=lambda node: (node.lineno, node.col_offset)):
        texts = [("caption", call.args[1] if len(call.args) > 1 else None),
                 ("alt", next((k.value for k in call.keywords if k.arg == "alt"), None))]
        for kind, value in texts:
            if value is not None:
                text = value.value if isinstance(value, ast.Constant) else ast.unparse(value)
                blocks.append(Block(kind, str(text)))
    return blocks


def markdown_blocks(text: str) -> list[Block]:
    """The blocks of MyST markdown: paragraphs split at blank lines (inside directives too: a
    glossary's entries are blocks of their own), code cells replaced by their figures' captions.

    Args:
        text: A page or a notebook's markdown cell (front matter already removed).

    Returns:
        The blocks, in reading order.
    """
    blocks: list[Block] = []
    chunk: list[str] = []
    fence: tuple[str, int, bool] | None = None  # an open code cell: (character, length, True)
    fenced: list[str] = []

    def flush() -> None:
        if any(line.strip() for line in chunk):
            blocks.append(Block("text", "\n".join(chunk).strip("\n")))
        chunk.clear()

    for line in text.splitlines():
        if fence is None:
            match = _FENCE.match(line)
            if match and match.group(3) == _CODE_CELL:
                marker = match.group(2)
                fence = (marker[0], len(marker), True)
                fenced = [line]
                flush()
                continue
            if line.strip():
                chunk.append(line)
            else:
                flush()
            continue
        fenced.append(line)
        stripped = line.strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= fence[1]:
            blocks.extend(caption_blocks(_cell_code(fenced)))
            fence = None
    if fence is not None:  # an unclosed fence: keep its text
        chunk.extend(fenced)
    flush()
    return blocks


def quiz_blocks(text: str) -> list[Block]:
    """One block per question of a quiz file (jupyterquiz's JSON), its whole content."""
    return [Block("question", json.dumps(question, ensure_ascii=False, sort_keys=True))
            for question in json.loads(text)]


def file_blocks(path: Path) -> list[Block]:
    """The blocks of an English file: a MyST page, a notebook (markdown cells and captions), a quiz.

    Args:
        path: A ``.md``, ``.ipynb`` or ``.json`` file.

    Returns:
        The blocks, in reading order.

    Raises:
        ValueError: ``path`` has another suffix.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return markdown_blocks(split_front_matter(text)[1])
    if path.suffix == ".ipynb":
        blocks = []
        for cell in json.loads(text)["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "markdown":
                blocks += markdown_blocks(source)
            elif cell["cell_type"] == "code":
                blocks += caption_blocks(source)
        return blocks
    if path.suffix == ".json":
        return quiz_blocks(text)
    raise ValueError(f"path: no blocks for a {path.suffix} file ({path})")


_QUIZ_CALL = re.compile(r"""quiz\(\s*["']([^"']+\.json)["']""")


def quiz_sources(english: str, root: Path = ROOT) -> list[str]:
    """The quiz files an English page shows (``quiz("../quizzes/ch03.json", ...)`` in its code), as
    repository paths."""
    path = root / english
    if path.suffix not in SOURCE_SUFFIXES:
        return []
    found = []
    for relative in _QUIZ_CALL.findall(path.read_text(encoding="utf-8")):
        quiz = posixpath.normpath(posixpath.join(posixpath.dirname(english), relative))
        if (root / quiz).is_file():
            found.append(quiz)
    return found


def sources_of(english: str, root: Path = ROOT) -> list[str]:
    """What a Chinese page translates: its English page and the quizzes that page shows."""
    return [english, *quiz_sources(english, root)]


# --- a Chinese page's record ------------------------------------------------------------------------


def read_record(path: Path) -> dict[str, list[str]]:
    """A Chinese page's record: ``{English file: [block hashes]}`` (empty when it has none).

    Args:
        path: A Chinese ``.md`` page or ``.ipynb`` lab.

    Returns:
        The record.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        record = json.loads(text).get("metadata", {}).get(RECORD_KEY) or {}
    else:
        record = (yaml.safe_load(split_front_matter(text)[0]) or {}).get(RECORD_KEY) or {}
    return {source: hashes.split() if isinstance(hashes, str) else list(hashes) for source, hashes in record.items()}


def _record_yaml(record: dict[str, list[str]]) -> str:
    lines = [f"{RECORD_KEY}:  # the English blocks this page translates: python book/_ext/editions.py --update"]
    for source, hashes in record.items():
        if not hashes:
            lines.append(f"  {source}: []")
            continue
        lines.append(f"  {source}: >-")
        lines += ["    " + " ".join(hashes[i:i + 8]) for i in range(0, len(hashes), 8)]
    return "\n".join(lines) + "\n"


def write_record(path: Path, record: dict[str, list[str]]) -> None:
    """Writes ``record`` into a Chinese page (front matter) or lab (notebook metadata), leaving the rest.

    Args:
        path: The Chinese page.
        record: ``{English file: [block hashes]}``.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        notebook = json.loads(text)
        notebook.setdefault("metadata", {})[RECORD_KEY] = record
        path.write_text(json.dumps(notebook, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return
    front, body = split_front_matter(text)
    kept, skipping = [], False
    for line in front.splitlines():
        if line.startswith(f"{RECORD_KEY}:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    front = "\n".join(kept) + ("\n" if kept else "")
    path.write_text(f"---\n{front}{_record_yaml(record)}---\n{body}", encoding="utf-8")


def current_record(english: str, root: Path = ROOT) -> dict[str, list[str]]:
    """What a Chinese page's record should be now: the hashes of its English sources' blocks."""
    return {source: [block.digest for block in file_blocks(root / source)] for source in sources_of(english, root)}


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
                match = _FENCE.match(line)
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
        fence = _FENCE.match(block.text)
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
            match = _FENCE.match(line)
            if match and match.group(3) == _CODE_CELL:
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


# --- build time: both editions ----------------------------------------------------------------------


def edition_of(app: Any) -> str:
    """``"zh"`` for the Chinese edition's build (Sphinx ``language`` ``zh_CN``), else ``"en"``."""
    return "zh" if str(app.config.language or "").lower().startswith("zh") else "en"


def _english_root(app: Any) -> Path:
    """The English edition's source folder, seen from either build."""
    srcdir = Path(app.srcdir).resolve()
    return srcdir.parent if edition_of(app) == "zh" else srcdir


def switch_target(pagename: str, edition: str, other_pages: Iterable[str], other_root: str) -> tuple[str, bool]:
    """Where a page's language switch leads, relative to the page.

    Args:
        pagename: The page, e.g. ``"book/03-scaling/index"``.
        edition: The page's edition, ``"en"`` or ``"zh"``.
        other_pages: The other edition's pages.
        other_root: The other edition's first page (used when it lacks ``pagename``).

    Returns:
        ``(relative URL, whether the other edition lacks the page)``.
    """
    up = "../" * pagename.count("/")
    base = f"{up}{ZH}/" if edition == "en" else f"{up}../"
    missing = pagename not in set(other_pages)
    return f"{base}{other_root if missing else pagename}.html", missing


def _other_edition(app: Any) -> tuple[list[str], str, bool]:
    """The other edition's pages (seen from the Chinese edition, with the English site's module-source
    pages, ``_modules/...``: the switch of a Chinese one leads to the same English one), its first page,
    and (seen from the English edition) whether the Chinese one documents the same modules."""
    cached = getattr(app, "_editions_other", None)
    if cached is None:
        root = _english_root(app)
        book = root if edition_of(app) == "zh" else root / ZH
        docnames = toc_docnames(book)
        pages = [*docnames, *GENERATED_PAGES]
        if edition_of(app) == "zh":  # the English site, built first, holds every module's source page (viewcode)
            modules = Path(app.config.editions_english_html) / "_modules"
            pages += [path.relative_to(modules.parent).with_suffix("").as_posix() for path in modules.rglob("*.html")]
        cached = (pages, docnames[0] if docnames else "index",
                  # the Chinese edition, built second, documents the same modules once it has every API page
                  edition_of(app) == "en" and set(_api_pages(root)) <= set(docnames))
        app._editions_other = cached
    return cached


def _api_pages(root: Path) -> list[str]:
    return [docname for docname in toc_docnames(root) if docname.startswith("book/api/")]


def _other_edition_pages(app: Any, pagename: str) -> tuple[list[str], str]:
    """:func:`_other_edition`'s pages and first page; with ``pagename`` among the pages when it is an
    English module-source page (``_modules/...``) and the Chinese edition has every API page."""
    pages, first, same_modules = _other_edition(app)
    if same_modules and pagename.startswith("_modules/"):
        pages = [*pages, pagename]
    return pages, first


def _page_context(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """The language switch of a page (``html-page-context``): ``edition_switch`` for the header
    template, and ``<link rel="alternate">`` in the head."""
    edition = edition_of(app)
    other = "en" if edition == "zh" else "zh"
    pages, first = _other_edition_pages(app, pagename)
    url, missing = switch_target(pagename, edition, pages, first)
    labels = _EDITIONS[other]
    context["edition_switch"] = {"url": url, "text": labels["text"], "hreflang": labels["hreflang"],
                                 "title": _ZH_MISSING_TITLE if missing and other == "zh" else labels["title"],
                                 "edition": other, "missing": missing}
    if not missing:
        context["metatags"] = context.get("metatags", "") + (
            f'\n    <link rel="alternate" hreflang="{labels["hreflang"]}" href="{html.escape(url)}" />')


_VERDICT = re.compile(r'<p style="(?P<style>[^"]*)" data-check="(?P<record>[^"]*)">(?P<text>.*?)</p>', re.DOTALL)


def localise_verdicts(markup: str, language: str) -> str:
    """Renders every stored checker verdict of an output in ``language`` (see :mod:`helpers.exercises`).

    Args:
        markup: An HTML output of a notebook cell.
        language: ``"en"`` or ``"zh"``.

    Returns:
        The output with each ``<p data-check=...>`` verdict rendered again.
    """
    def render(match: re.Match[str]) -> str:
        from helpers.exercises import CheckResult

        record = json.loads(html.unescape(match["record"]))
        verdict = CheckResult(record["passed"], "", record["key"], record["fields"])
        return verdict.in_language(language)._repr_html_()

    return _VERDICT.sub(render, markup)


def _raw_outputs(doctree: Any) -> Iterable[Any]:
    return (node for node in doctree.findall(nodes.raw) if "html" in node.get("format", "").split())


def _set_raw(node: Any, markup: str) -> None:
    node.children = [nodes.Text(markup)]
    node.rawsource = markup


def _localise_outputs(app: Any, doctree: Any, docname: str) -> None:
    """``doctree-resolved``: verdicts in the edition's language; in Chinese, captions and quizzes too."""
    edition = edition_of(app)
    for node in _raw_outputs(doctree):
        markup = node.astext()
        if "data-check=" in markup:
            _set_raw(node, localise_verdicts(markup, edition))
    if edition == "zh":
        _apply_figure_texts(app, doctree, docname)
        _apply_quizzes(app, doctree, docname)
        _apply_glue_text(app, doctree, docname)
    else:  # a figure-text is the Chinese edition's; an English page has none to apply
        for node in list(doctree.findall(figure_text)):
            node.parent.remove(node)


def _config_inited(app: Any, config: Any) -> None:
    """The switch's template in the article header of every page, and its stylesheet."""
    here = Path(__file__).resolve().parent
    if str(here / "templates") not in config.templates_path:
        config.templates_path.append(str(here / "templates"))
    if str(here / "static") not in config.html_static_path:
        config.html_static_path.append(str(here / "static"))  # editions.css: the switch in the header's row
    options = dict(config.html_theme_options or {})
    header_end = options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(header_end, str):
        header_end = [item.strip() for item in header_end.split(",") if item.strip()]
    if "edition-switch.html" not in header_end:
        header_end = ["edition-switch.html", *header_end]
    options["article_header_end"] = header_end
    config.html_theme_options = options


def _execute_in_english_folders(srcdir: Path) -> None:
    """Chinese edition: a notebook the cache lacks runs in its English page's folder.

    A code cell that reads a file relative to its page (a chapter's quiz, ``../quizzes/ch03.json``)
    then reads the English file, as in the English build, so that the run is the English run and
    its outputs are the ones the English build caches. (myst-nb runs a notebook in its source's
    folder, ``NotebookClientCache.path.parent``: this wraps ``start_client`` to point ``path`` at the
    English page for the time of the run.)
    """
    from myst_nb.core.execute.cache import NotebookClientCache

    original = NotebookClientCache.start_client
    if getattr(original, "_editions_english_folder", False):
        return

    def start_client(self: Any) -> None:
        chinese = self._path
        english = None
        if chinese is not None:
            try:
                english = srcdir.parent / Path(chinese).resolve().relative_to(srcdir)
            except ValueError:
                english = None
        if english is None or not english.is_file():
            return original(self)
        self._path = english
        try:
            return original(self)
        finally:
            self._path = chinese

    start_client._editions_english_folder = True  # type: ignore[attr-defined]
    NotebookClientCache.start_client = start_client


def _builder_inited(app: Any) -> None:
    """Chinese edition: checks its search can index Chinese, and that its code is the English code."""
    if edition_of(app) != "zh" or app.builder.format != "html":
        return
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    _execute_in_english_folders(Path(app.srcdir).resolve())
    try:
        import jieba
    except ImportError:
        logger.warning("jieba is not installed: Sphinx's Chinese search indexes no Chinese word (pip install jieba)",
                       type="editions", subtype="search")
    else:
        import logging as std_logging

        jieba.setLogLevel(std_logging.WARNING)  # not its "Building prefix dict..." on every build
    root = _english_root(app)
    for docname in toc_docnames(Path(app.srcdir)):
        chinese, english = source_path(Path(app.srcdir), docname), source_path(root, docname)
        if chinese is None or english is None:
            if english is None:
                logger.warning("%s has no English page %s", docname, docname, type="editions", subtype="source")
            continue
        differences = code_differences(english, chinese)
        if differences:
            logger.warning("%s: its code cells differ from %s's (%s): run python book/_ext/editions.py "
                           "--sync-code %s", chinese.relative_to(root), english.relative_to(root),
                           "; ".join(differences[:3]), chinese.relative_to(root), type="editions", subtype="code")


# --- build time: the Chinese edition ----------------------------------------------------------------


class figure_text(nodes.General, nodes.Element):  # noqa: N801 (docutils names its nodes in lower case)
    """A figure's Chinese caption and text alternative, applied to the code cell before it."""


class FigureText(Directive):
    """``figure-text``: the Chinese caption (its content) and text alternative (``:alt:``) of the
    figure drawn by the code cell just before it."""

    has_content = True
    option_spec = {"alt": directives.unchanged_required}

    def run(self) -> list[Any]:
        """The :class:`figure_text` node, applied to the figure at the end of the build."""
        caption = " ".join("\n".join(self.content).split())
        if not caption or not self.options.get("alt"):
            raise self.error("figure-text needs the caption as its content and the text alternative as :alt:")
        node = figure_text()
        node["caption"], node["alt"] = caption, " ".join(self.options["alt"].split())
        node.source, node.line = self.state_machine.get_source_and_line(self.lineno)
        return [node]


_FIGCAPTION = re.compile(r"<figcaption>(.*?)</figcaption>", re.DOTALL)
_ALT_PARAGRAPH = re.compile(r'<p id="[^"]*-alt" class="book-figure-alt"[^>]*>(.*?)</p>', re.DOTALL)
_GROUP_LABEL = re.compile(r'<figure class="book-figure"><div role="group" aria-label="([^"]*)"')


def translate_figure(markup: str, caption: str, alt: str) -> str | None:
    """A captioned figure's HTML (``helpers.viz.captioned``) with another caption and text alternative.

    Args:
        markup: The figure's HTML output.
        caption: The new caption (plain text).
        alt: The new text alternative (plain text).

    Returns:
        The new HTML, or ``None`` when ``markup`` holds no captioned figure.
    """
    found = _FIGCAPTION.search(markup)
    if found is None:
        return None
    alt_found = _ALT_PARAGRAPH.search(markup) or _GROUP_LABEL.search(markup)
    if alt_found is not None and alt_found.group(1):
        markup = markup.replace(f'aria-label="{alt_found.group(1)}"', f'aria-label="{html.escape(alt)}"')
        markup = markup.replace(f">{alt_found.group(1)}</p>", f">{html.escape(alt)}</p>")
    return _FIGCAPTION.sub(lambda _: f"<figcaption>{html.escape(caption)}</figcaption>", markup, count=1)


def _is_code_cell(node: Any) -> bool:
    return getattr(node, "get", None) is not None and node.get("nb_element") == "cell_code"


def _apply_figure_texts(app: Any, doctree: Any, docname: str) -> None:
    """Each ``figure-text`` onto the figure of the code cell before it; a captioned figure left in
    English is reported."""
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    translated = set()
    for node in list(doctree.findall(figure_text)):
        parent = node.parent
        index = parent.index(node)
        cell = next((sibling for sibling in reversed(parent.children[:index]) if _is_code_cell(sibling)), None)
        done = False
        if cell is not None:
            for output in _raw_outputs(cell):
                new = translate_figure(output.astext(), node["caption"], node["alt"])
                if new is not None and id(output) not in translated:
                    _set_raw(output, new)
                    translated.add(id(output))
                    done = True
                    break
        if not done:
            logger.warning("figure-text: no captioned figure in the code cell before it", location=node,
                           type="editions", subtype="figure")
        parent.remove(node)
    for output in _raw_outputs(doctree):
        match = _FIGCAPTION.search(output.astext())
        if match and id(output) not in translated:
            logger.warning("a figure's caption is still English (add a figure-text after its cell): %s",
                           html.unescape(match.group(1))[:120], location=(docname, output.line),
                           type="editions", subtype="figure")


GLUE_TEXT_KEY = "glue_text"
"""The front-matter key of a Chinese page's translations of the English phrases its code glues."""
_ENGLISH_PHRASE = re.compile(r"[A-Za-z]{3,}")


def translate_glued(text: str, phrases: dict[str, str]) -> str | None:
    """A glued English phrase in Chinese, by a page's ``glue_text`` table.

    Args:
        text: The glued value, e.g. ``"3 of them"``.
        phrases: ``{English pattern: Chinese pattern}``; ``{name}`` in a pattern stands for any text,
            carried over (``{"{n} of them": "有 {n} 个"}``).

    Returns:
        The Chinese text, or ``None`` when no pattern matches.
    """
    for english, chinese in phrases.items():
        parts = re.split(r"\{(\w+)\}", english)
        pattern = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts))
        match = re.fullmatch(pattern, text.strip())
        if match:
            return chinese.format(**match.groupdict())
    return None


def _apply_glue_text(app: Any, doctree: Any, docname: str) -> None:
    """Glued English phrases (``{glue:text}`` of a value such as ``"none of them"``) in Chinese."""
    from sphinx.util import logging

    source = source_path(Path(app.srcdir), docname)
    if source is None or source.suffix != ".md":
        return
    phrases = (yaml.safe_load(split_front_matter(source.read_text(encoding="utf-8"))[0]) or {}).get(GLUE_TEXT_KEY)
    for node in doctree.findall(nodes.inline):
        if "pasted-text" not in node.get("classes", []):
            continue
        text = node.astext()
        chinese = translate_glued(text, phrases or {})
        if chinese is not None:
            node.children = [nodes.Text(chinese)]
        elif len(_ENGLISH_PHRASE.findall(text)) >= 2:
            logging.getLogger(__name__).warning(
                "the glued text %r is English: give its Chinese in the page's front matter (%s:)", text,
                GLUE_TEXT_KEY, location=node, type="editions", subtype="glue")


QUIZ_STRINGS = {"'Check'": "'核对'", '"Correct!"': '"正确！"', '"Correct"': '"正确"',
                '"Incorrect -- try again."': '"不对，再试一次。"', '"Incorrect. Try again."': '"不对，再试一次。"',
                '"Type numeric answer here:"': '"输入数值答案："'}
"""The quiz's own interface strings (helpers.viz.quiz's button, jupyterquiz's default feedback) in Chinese."""
_QUIZ_VARIABLE = re.compile(r"var questions([A-Za-z]+)=")


def translate_quiz(markup: str, questions: list[dict[str, Any]]) -> str | None:
    """A quiz's HTML (``helpers.viz.quiz``) showing other questions, with its buttons in Chinese.

    Args:
        markup: The quiz's HTML output.
        questions: The questions to show instead (jupyterquiz's format).

    Returns:
        The new HTML, or ``None`` when ``markup`` holds no quiz.
    """
    found = _QUIZ_VARIABLE.search(markup)
    if found is None:
        return None
    old, end = json.JSONDecoder().raw_decode(markup, found.end())
    if len(old) != len(questions):
        raise ValueError(f"questions: {len(questions)} questions for a quiz of {len(old)}")
    markup = markup[:found.end()] + json.dumps(questions).replace("</", "<\\/") + markup[end:]
    for english, chinese in QUIZ_STRINGS.items():
        markup = markup.replace(english, chinese)
    return markup


def _apply_quizzes(app: Any, doctree: Any, docname: str) -> None:
    """A quiz in a Chinese page shows the questions of its Chinese file."""
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    root = _english_root(app)
    english = source_path(root, docname)
    if english is None:
        return
    quizzes = quiz_sources(english.relative_to(root).as_posix(), root)
    outputs = [node for node in _raw_outputs(doctree) if _QUIZ_VARIABLE.search(node.astext())]
    for quiz, output in zip(quizzes, outputs):
        chinese = zh_path(quiz, root)
        if not chinese.is_file():
            logger.warning("the quiz %s has no Chinese file %s", quiz, chinese.relative_to(root),
                           location=docname, type="editions", subtype="quiz")
            continue
        try:
            new = translate_quiz(output.astext(), json.loads(chinese.read_text(encoding="utf-8")))
        except ValueError as error:
            logger.warning("%s: %s", chinese.relative_to(root), error, location=docname, type="editions",
                           subtype="quiz")
            continue
        if new is not None:
            _set_raw(output, new)


def _english_inventory(app: Any) -> dict[str, dict[str, tuple[str, str, str, str]]]:
    """The English build's ``objects.inv`` (``{"py:function": {name: entry}}``), read once."""
    cached = getattr(app, "_editions_inventory", None)
    if cached is None:
        from sphinx.util.inventory import InventoryFile

        path = Path(app.config.editions_english_html) / "objects.inv"
        cached = {}
        if path.is_file():
            with path.open("rb") as stream:
                cached = InventoryFile.load(stream, "", posixpath.join)
        app._editions_inventory = cached
    return cached


def _fallback_to_english(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """``missing-reference`` in the Chinese edition: a link to the English page that holds the target."""
    if edition_of(app) != "zh":
        return None
    inventory = _english_inventory(app)
    domain, reftype, target = node.get("refdomain", ""), node.get("reftype", ""), node.get("reftarget", "")
    refdoc = node.get("refdoc", "")
    entry = None
    if domain == "std" and reftype == "doc":
        docname = posixpath.normpath(target.lstrip("/") if target.startswith("/")
                                     else posixpath.join(posixpath.dirname(refdoc), target))
        entry = inventory.get("std:doc", {}).get(docname)
    elif domain:
        try:
            objtypes = env.get_domain(domain).objtypes_for_role(reftype) or []
        except Exception:  # an unknown domain: nothing to fall back to
            objtypes = []
        names = [target] + ([f"{node['py:module']}.{target}"] if node.get("py:module") else [])
        for objtype in objtypes:
            for name in names:
                entry = entry or inventory.get(f"{domain}:{objtype}", {}).get(name)
    if entry is None:
        return None
    uri, title = entry[2], entry[3]
    up = "../" * (refdoc.count("/") + 1)
    reference = nodes.reference("", "", internal=False, refuri=up + uri, reftitle="英文版（中文版尚无此页）",
                                classes=["edition-fallback"])
    if domain == "std" and reftype == "doc" and not node.get("refexplicit") and title and title != "-":
        reference += nodes.Text(title)
    else:
        reference += contnode
    return reference


class edition_status(nodes.General, nodes.Element):  # noqa: N801
    """Where ``edition-status`` goes: filled when the page is resolved, from the sources as they are then."""


class EditionStatus(Directive):
    """``edition-status``: the English revision this edition follows, and the pages still to
    translate or to update."""

    def run(self) -> list[Any]:
        """The :class:`edition_status` node."""
        return [edition_status()]


def status_sentences(drift: Drift, revision: tuple[str, str, bool], pages: dict[str, str]) -> list[str]:
    """The Chinese intro's statement of which English revision the edition follows.

    Args:
        drift: :func:`check`'s result.
        revision: :func:`english_revision`'s result.
        pages: ``{English page: its title}`` for naming pages.

    Returns:
        Sentences (plain text) for the page.
    """
    short, date, dirty = revision
    if short:
        followed = f"本版译文对应英文版的修订 {short}（{date}）" + ("，外加其后尚未提交的改动" if dirty else "") + "。"
    else:
        followed = "本版译文对应构建时的英文源文件（构建目录不是 git 仓库，无法给出修订号）。"
    sentences = [followed]
    stale = [page.removeprefix(f"{ZH}/") for page in drift.stale]
    if stale or drift.missing:
        names = "、".join(pages.get(page, page) for page in [*stale, *drift.missing])
        sentences.append(f"以下页面的英文原文在此之后有改动，译文尚待更新：{names}。")
    else:
        sentences.append("已译的每一页都与这一修订的英文原文一致。")
    if drift.pending:
        sentences.append(f"英文版还有 {len(drift.pending)} 页尚未译出：中文版的目录里暂时没有它们，"
                         "正文中指向它们的链接会打开英文原文。")
    return sentences


def _fill_status(app: Any, doctree: Any, docname: str) -> None:
    found = list(doctree.findall(edition_status))
    if not found:
        return
    root = _english_root(app)
    drift = check(root)
    titles = {}
    for docname_en, title in _english_inventory(app).get("std:doc", {}).items():
        path = source_path(root, docname_en)
        if path is not None:
            titles[path.relative_to(root).as_posix()] = f"“{title[3]}”"
    sentences = status_sentences(drift, english_revision(root), titles)
    for node in found:
        node.replace_self([nodes.paragraph("", sentence) for sentence in sentences])


def _status_outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """``env-get-outdated``: a page with ``edition-status`` is rebuilt every time (the English pages it
    reports on are not its dependencies); every page is, when the other edition's pages changed since
    the last build (each page's language switch names them)."""
    other = _other_edition(app)
    key = (tuple(other[0]), *other[1:])
    if getattr(env, "editions_other_pages", None) != key:
        env.editions_other_pages = key
        return sorted(env.found_docs - set(added) - set(changed))
    pages = []
    for docname in env.found_docs:
        path = source_path(Path(app.srcdir), docname)
        if path is not None and path.suffix == ".md" and "{edition-status}" in path.read_text(encoding="utf-8"):
            pages.append(docname)
    return pages


def setup(app: Any) -> dict[str, Any]:
    """The Sphinx extension (both editions)."""
    app.add_config_value("editions_english_html", "_build/html", "env", types=[str])
    app.add_node(figure_text)
    app.add_node(edition_status)
    app.add_directive("figure-text", FigureText)
    app.add_directive("edition-status", EditionStatus)
    app.connect("config-inited", _config_inited)
    app.add_css_file("editions.css")
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _page_context)
    app.connect("doctree-resolved", _localise_outputs)
    app.connect("doctree-resolved", _fill_status)
    app.connect("missing-reference", _fallback_to_english)
    app.connect("env-get-outdated", _status_outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


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


if __name__ == "__main__":
    sys.exit(main())
