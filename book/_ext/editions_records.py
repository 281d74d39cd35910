"""The editions' pages, their blocks and the records of a Chinese page (part of :mod:`editions`).

Which pages each edition has (its ``_toc.yml``), a page's blocks (paragraphs, figure captions,
quiz questions) and their hashes, the English files a page translates (the page and its quizzes),
and a Chinese page's record of them: in its front matter (a lab: in its notebook metadata), the
English files it translates and a hash of each of their blocks. :mod:`editions_drift` compares a
record with the English text as it is now.
"""


import ast
import hashlib
import json
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = [
    "RECORD_KEY",
    "ROOT",
    "SOURCE_SUFFIXES",
    "UNTRANSLATED_FILE",
    "ZH",
    "Block",
    "caption_blocks",
    "current_record",
    "english_pages",
    "file_blocks",
    "markdown_blocks",
    "quiz_blocks",
    "quiz_sources",
    "read_record",
    "source_path",
    "sources_of",
    "split_front_matter",
    "toc_docnames",
    "untranslated",
    "write_record",
    "zh_path",
]

ROOT = Path(__file__).resolve().parents[2]
"""The repository: the English edition's source folder."""
ZH = "zh"
"""The Chinese edition's folder in the repository, and in the built site (``_build/html/zh``)."""
UNTRANSLATED_FILE = "UNTRANSLATED.txt"
"""In ``zh/``: the English pages not translated yet, one path a line (the drift check's one exception)."""
RECORD_KEY = "translation"
"""The front-matter (notebook-metadata) key of a Chinese page's record of its English sources."""
SOURCE_SUFFIXES = (".md", ".ipynb")


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


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{[^}]*\}|[\w+-]*)")
_FRONT_MATTER = re.compile(r"\A---\n(.*?\n)?---\n", re.DOTALL)
CODE_CELL = "{code-cell}"


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
                # an f-string's own source, not ast.unparse's: that one writes f-strings differently on Python
                # 3.12 and later (PEP 701), and every recorded text alternative read as changed there
                text = value.value if isinstance(value, ast.Constant) else (
                    ast.get_source_segment(source, value) or ast.unparse(value))
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
            match = FENCE.match(line)
            if match and match.group(3) == CODE_CELL:
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


