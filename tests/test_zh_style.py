"""The Chinese edition keeps to the mechanical rules of its style guide (zh/STYLE.md): one word per idea,
the same headings in every chapter, and its typography. Prose, figure texts, quizzes and the labs'
text are read; code (code cells, inline code, formulas) is not."""

from __future__ import annotations

import ast
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
    # the terms that drifted between pages (the editor's review, item 6)
    "局部窗口注意力": "滑动窗口注意力",
    "KV 缓存": "键值缓存",
    "KV缓存": "键值缓存",
    "热力图": "热图",
    # zh.d2l.ai's names: in the glossary as "又作", the prose uses the book's
    "评分函数": "打分函数",
    "隐状态": "隐藏状态",
    "强制教学": "教师强制",
    "层规范化": "层归一化",
    "掩蔽": "掩码",
    # translationese and glossary slips (the review, items 7 and 8)
    "不论损失怎么说": "无论损失如何",
    "写开的": "显式存下分数矩阵的 / 显式计算的",
    "短训练，长测试": "短序列上训练，长序列上测试",
    "只取决于二者的相对偏移": "位置只通过相对偏移影响 q·k",
    "（而不是一步）": "（而不是 O(1)）",
}
CJK = "\u4e00-\u9fff"
RULES = {
    "a space before %": re.compile(r"\d\s+%"),
    "an en dash between Chinese words (a hyphen: 编码器-解码器)": re.compile(rf"[{CJK}]–[{CJK}]"),
    "one-hot in the prose (独热; 独热（one-hot） at a first use)": re.compile(r"one-hot", re.I),
    "rollout in the prose (注意力展开; 注意力展开（rollout） at a first use)": re.compile(r"\brollout\b", re.I),
}
ALLOWED = re.compile(r"独热（one-hot）|注意力展开（(?:attention )?rollout）|又作[“\"]?[^，。；）”\"\n]*[”\"]?")
"""What the rules let stand: a term's English at its first use, and the glossary's "又作" names."""
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
    text = ALLOWED.sub(" ", text)
    found = [f"{variant!r} (the guide's word: {word!r})" for variant, word in VARIANTS.items() if variant in text]
    for rule, pattern in RULES.items():
        found += [f"{match.group(0)!r}: {rule}" for match in pattern.finditer(text)]
    return found


PAGES = sorted([*ZH.glob("book/**/*.md"), *ZH.glob("book/quizzes/*.json"), *ZH.glob("notebooks/*.ipynb")])


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_the_chinese_page_keeps_to_the_style_guide(path: Path) -> None:
    assert not problems(prose(path)), f"{path.relative_to(ROOT)} (zh/STYLE.md): {problems(prose(path))}"


WORDS_OF_CODE = sorted([*ROOT.glob("src/helpers/claim_text/*.py"), *ROOT.glob("src/helpers/exercises/catalogue/*.py")])
"""The Chinese sentences a reader's kernel prints: a failed claim's (helpers.claims), a checker's verdict."""


def chinese_strings(path: Path) -> str:
    """The Chinese string literals of a module (its claims' or its checkers' sentences), one a line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    strings = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return "\n".join(string for string in strings if re.search(f"[{CJK}]", string))


@pytest.mark.parametrize("path", WORDS_OF_CODE, ids=[str(p.relative_to(ROOT)) for p in WORDS_OF_CODE])
def test_the_claims_and_checkers_chinese_keeps_to_the_style_guide(path: Path) -> None:
    text = chinese_strings(path)
    assert not problems(text), f"{path.relative_to(ROOT)} (zh/STYLE.md): {problems(text)}"


def test_the_rules_find_what_they_are_for() -> None:
    planted = "每个头的大小为 64，准确率 90 %，编码器–解码器的检查函数。"
    assert len(problems(planted)) == 4
    assert not problems("头维度为 64，准确率 90%，编码器-解码器，第 1–5 层，0.07–0.48。")
    drift = "局部窗口注意力的 KV 缓存，热力图，一行 one-hot 权重，注意力 rollout，掩蔽，写开的稠密注意力。"
    assert len(problems(drift)) == 7
    assert not problems("滑动窗口注意力的键值缓存，热图，独热（one-hot）的一行，注意力展开（rollout），KV 头。")
    assert not problems("掩码（mask）又作“掩蔽”。打分函数，又作评分函数。")
    code = "```{code-cell} ipython3\nx = 1  # >= 10 % of the weight\n```\n`90 %` $a – b$ 正文"
    assert not problems(CODE.sub(" ", code))


def test_the_glossary_defines_the_sink_and_the_guide_is_where_translators_look() -> None:
    glossary = (ZH / "book/00-start/index.md").read_text(encoding="utf-8")
    assert "注意力汇点（attention sink）" in glossary
    assert (ZH / "STYLE.md").is_file() and "STYLE.md" in (ZH / "_config.yml").read_text(encoding="utf-8")


_COMMENT = re.compile(r"#\s*(.+)$")
_TO_THE_READER = re.compile(r"\b(you|your|yours)\b|^(uncomment|run|write|put|record|replace|change|try|fill|edit|"
                            r"predict|set|type|add|remove|delete|choose|pick|compare|look|read|guess)\b", re.I)
INSTRUCTION_WORDS = 5
"""A comment of this many English words or more that speaks to the reader is an instruction (``# your code here``,
a placeholder, is not)."""


def lab_instructions_in_code(path: Path) -> list[str]:
    """The comments of a Chinese lab's code cells that tell the reader what to do, in English: they belong in the
    lab's markdown cells, in Chinese (a code cell is the English lab's, character for character)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = []
    for cell in cells:
        if cell["cell_type"] != "code" or "pip install" in "".join(cell["source"]):
            continue  # (the install cell explains itself: book/_ext/install_cell.py writes it, in both editions)
        for line in "".join(cell["source"]).splitlines():
            comment = _COMMENT.search(line)
            if comment and len(re.findall(r"[A-Za-z]{2,}", comment.group(1))) >= INSTRUCTION_WORDS \
                    and _TO_THE_READER.search(comment.group(1)):
                found.append(comment.group(1).strip())
    return found


LABS = sorted(ZH.glob("notebooks/*.ipynb"))


@pytest.mark.parametrize("path", LABS, ids=[str(p.relative_to(ROOT)) for p in LABS])
def test_a_labs_instructions_are_in_its_chinese_markdown_not_in_english_code_comments(path: Path) -> None:
    found = lab_instructions_in_code(path)
    assert not found, f"{path.relative_to(ROOT)}: instructions in English code comments: {found}"
