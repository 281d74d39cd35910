"""The Chinese edition keeps to the mechanical rules of its style guide (zh/STYLE.md): one word per idea,
the same headings in every chapter, and its typography. Prose, figure texts, quizzes and the labs'
text are read; code (code cells, inline code, formulas) is not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "zh"

VARIANTS = {  # a variant the guide replaces -> the word it uses
    "头的大小": "头维度",
    "每个头的维度": "头维度",
    "检查函数": "检查器",
    "长期依赖": "长程依赖",
    "汇聚点": "注意力汇点",
    "本章要点": "## 要点",
    "要记住的": "**记住**",
    "先检查这些": "先查这些",
}
CJK = "\u4e00-\u9fff"
RULES = {
    "a space before %": re.compile(r"\d\s+%"),
    "an en dash between Chinese words (a hyphen: 编码器-解码器)": re.compile(rf"[{CJK}]–[{CJK}]"),
}
CODE = re.compile(r"```\{code-cell\}.*?```|```\{(?:eval-rst|literalinclude)\}.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$",
                  re.S)
"""What the rules do not read in a page: code cells, inline code (a glue role's key too), API blocks, formulas."""


def prose(path: Path) -> str:
    """The text of a Chinese page, quiz or lab that a reader reads, code left out."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    elif path.suffix == ".json":
        text = "\n".join(json.dumps(item, ensure_ascii=False) for item in json.loads(path.read_text(encoding="utf-8")))
    else:
        text = path.read_text(encoding="utf-8").split("\n---\n", 1)[-1]  # front matter aside
    return CODE.sub(" ", text)


def problems(text: str) -> list[str]:
    found = [f"{variant!r} (the guide's word: {word!r})" for variant, word in VARIANTS.items() if variant in text]
    for rule, pattern in RULES.items():
        found += [f"{match.group(0)!r}: {rule}" for match in pattern.finditer(text)]
    return found


PAGES = sorted([*ZH.glob("book/**/*.md"), *ZH.glob("book/quizzes/*.json"), *ZH.glob("notebooks/*.ipynb")])


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_the_chinese_page_keeps_to_the_style_guide(path: Path) -> None:
    assert not problems(prose(path)), f"{path.relative_to(ROOT)} (zh/STYLE.md): {problems(prose(path))}"


def test_the_rules_find_what_they_are_for() -> None:
    planted = "每个头的大小为 64，准确率 90 %，编码器–解码器的检查函数。"
    assert len(problems(planted)) == 4
    assert not problems("头维度为 64，准确率 90%，编码器-解码器，第 1–5 层，0.07–0.48。")
    code = "```{code-cell} ipython3\nx = 1  # >= 10 % of the weight\n```\n`90 %` $a – b$ 正文"
    assert not problems(CODE.sub(" ", code))


def test_the_glossary_defines_the_sink_and_the_guide_is_where_translators_look() -> None:
    glossary = (ZH / "book/00-start/index.md").read_text(encoding="utf-8")
    assert "注意力汇点（attention sink）" in glossary
    assert (ZH / "STYLE.md").is_file() and "STYLE.md" in (ZH / "_config.yml").read_text(encoding="utf-8")
