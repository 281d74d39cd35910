"""The Chinese edition kept in step with the English one (``book/_ext/editions.py``, ``zh/``), and the
lab checkers' messages in both languages (``helpers.exercises.messages``).

The drift check is the first test: it fails when an English page (chapter, lab, reference page) has
no Chinese page and is not listed in ``zh/UNTRANSLATED.txt``, when a Chinese page's recorded
English blocks no longer match (printing the English text that changed), or when a Chinese page's
code differs from its English page's; it prints the pages still to translate. The other tests show
that each part of it can fail, on small books made in a temporary folder.
"""

from __future__ import annotations

import html
import importlib
import json
import pkgutil
import re
import string
import sys
from pathlib import Path

import pytest

from helpers.exercises import CheckResult, ch04, get_language, messages, set_language
from helpers.viz.quiz import quiz_problems

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import editions  # noqa: E402 (the book's local extension, not an installed package)

TRANSLATED = ["book/intro.md", "book/00-start/index.md", "book/figures.md", "book/bibliography.md"]


# --- the real editions ----------------------------------------------------------------------------------


def test_every_english_page_has_a_chinese_page_that_follows_its_current_text() -> None:
    drift = editions.check()
    print(drift.report())  # the pages still to translate, with -s or on failure
    assert drift.ok, drift.report()
    assert set(TRANSLATED) <= {page for page in editions.english_pages() if editions.zh_path(page).is_file()}


def test_the_untranslated_list_names_only_english_pages_without_a_chinese_one() -> None:
    pages, listed = editions.english_pages(), editions.untranslated()
    assert len(pages) >= 30 and set(listed) <= set(pages)
    assert not [page for page in listed if editions.zh_path(page).exists()]
    assert not set(TRANSLATED) & set(listed)


def test_chinese_pages_run_exactly_the_english_code() -> None:
    compared = 0
    for page in TRANSLATED:
        english, chinese = ROOT / page, editions.zh_path(page)
        assert editions.code_differences(english, chinese) == [], page
        compared += len(editions.code_cells(english))
    assert compared >= 20  # chapter 0 and the figures page hold code cells: the comparison is not vacuous


def test_no_chinese_page_keeps_an_english_paragraph_untranslated() -> None:
    for page in TRANSLATED:
        assert editions.copied_paragraphs(ROOT / page, editions.zh_path(page)) == [], page


def test_the_chinese_quiz_asks_the_same_questions_with_the_same_answers() -> None:
    english = json.loads((ROOT / "book/quizzes/ch00.json").read_text(encoding="utf-8"))
    chinese = json.loads((ROOT / "zh/book/quizzes/ch00.json").read_text(encoding="utf-8"))
    assert quiz_problems(chinese) == []
    assert [q["id"] for q in chinese] == [q["id"] for q in english]
    for ours, theirs in zip(chinese, english):
        assert ours["type"] == theirs["type"] and ours["question"] != theirs["question"]
        for answer, their_answer in zip(ours["answers"], theirs["answers"], strict=True):
            same = {k: v for k, v in answer.items() if k not in ("answer", "feedback")}
            assert same == {k: v for k, v in their_answer.items() if k not in ("answer", "feedback")}
            # every feedback says in words whether the answer is right, as the English one does
            assert answer["feedback"].startswith("正确" if answer.get("correct") else "不对"), answer["feedback"]


def test_the_chinese_toc_has_the_translated_pages_in_the_english_order() -> None:
    expected = [page.rsplit(".", 1)[0] for page in editions.english_pages() if editions.zh_path(page).is_file()]
    assert editions.toc_docnames(ROOT / "zh") == expected


# --- the drift check on a small book ---------------------------------------------------------------------

CHAPTER = """---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

First paragraph, about attention
over two lines.

```{code-cell} ipython3
viz.captioned(fig, "The curve falls.", alt="A line falling from 1 to 0.")
```

Second paragraph.

```{glossary}
term one
  Its definition.

term two
  Another definition.
```
"""


def small_book(root: Path, *, translated: bool = True) -> Path:
    """A two-page English book and its Chinese edition (chapter translated, or listed untranslated)."""
    (root / "book").mkdir(parents=True)
    (root / "zh" / "book").mkdir(parents=True)
    (root / "book" / "intro.md").write_text("# Intro\n\nHello.\n", encoding="utf-8")
    (root / "book" / "ch.md").write_text(CHAPTER, encoding="utf-8")
    toc = "format: jb-book\nroot: book/intro\nchapters:\n  - file: book/ch\n"
    (root / "_toc.yml").write_text(toc, encoding="utf-8")
    (root / "zh" / "book" / "intro.md").write_text("# 引言\n\n你好。\n", encoding="utf-8")
    if translated:
        chinese = CHAPTER.replace("# A chapter", "# 一章").replace("First paragraph, about attention\nover two lines.",
                                                                     "第一段，讲注意力。")
        (root / "zh" / "book" / "ch.md").write_text(chinese, encoding="utf-8")
        (root / "zh" / "_toc.yml").write_text(toc, encoding="utf-8")
        (root / "zh" / editions.UNTRANSLATED_FILE).write_text("# none\n", encoding="utf-8")
        editions.update(root / "zh" / "book" / "ch.md", root)
    else:
        (root / "zh" / "_toc.yml").write_text("format: jb-book\nroot: book/intro\n", encoding="utf-8")
        (root / "zh" / editions.UNTRANSLATED_FILE).write_text("book/ch.md\n", encoding="utf-8")
    editions.update(root / "zh" / "book" / "intro.md", root)
    return root


def test_a_changed_english_paragraph_fails_the_check_with_its_new_text_until_the_record_is_updated(
        tmp_path: Path) -> None:
    root = small_book(tmp_path)
    assert editions.check(root).ok, editions.check(root).report()
    chapter = root / "book" / "ch.md"
    chapter.write_text(chapter.read_text().replace("Second paragraph.", "Second paragraph, now longer."))
    drift = editions.check(root)
    assert not drift.ok and list(drift.stale) == ["zh/book/ch.md"]
    report = drift.report()
    assert "changed: English block 5 of 7 now reads:" in report and "> Second paragraph, now longer." in report
    assert "python book/_ext/editions.py --update zh/book/ch.md" in report
    editions.update(root / "zh" / "book" / "ch.md", root)
    assert editions.check(root).ok


def test_rewrapping_a_paragraph_is_not_a_change_but_a_new_or_removed_one_is(tmp_path: Path) -> None:
    root = small_book(tmp_path)
    chapter = root / "book" / "ch.md"
    chapter.write_text(chapter.read_text().replace("attention\nover two", "attention over\ntwo"))
    assert editions.check(root).ok
    chapter.write_text(chapter.read_text().replace("Second paragraph.", "Second paragraph.\n\nA new one."))
    assert "new: English block 6 of 8 now reads:\n      > A new one." in editions.check(root).report()
    chapter.write_text(CHAPTER.replace("Second paragraph.\n\n", ""))
    report = editions.check(root).report()
    assert "removed: 1 recorded block(s) after English block 4" in report


def test_a_changed_figure_caption_or_glossary_entry_is_reported_alone(tmp_path: Path) -> None:
    root = small_book(tmp_path)
    chapter = root / "book" / "ch.md"
    chapter.write_text(CHAPTER.replace("The curve falls.", "The curve rises.").replace("Another", "A second"))
    report = editions.check(root).report()
    assert "(caption) now reads:\n      > The curve rises." in report
    assert "> term two\n      >   A second definition." in report and "term one" not in report


def test_a_missing_chinese_page_fails_unless_it_is_listed_untranslated(tmp_path: Path) -> None:
    root = small_book(tmp_path, translated=False)
    drift = editions.check(root)
    assert drift.ok and drift.pending == ["book/ch.md"] and "book/ch.md" in drift.report()
    (root / "zh" / editions.UNTRANSLATED_FILE).write_text("\n", encoding="utf-8")
    drift = editions.check(root)
    assert not drift.ok and drift.missing == ["book/ch.md"]


def test_a_chinese_page_with_other_code_fails_the_check(tmp_path: Path) -> None:
    root = small_book(tmp_path)
    chinese = root / "zh" / "book" / "ch.md"
    chinese.write_text(chinese.read_text().replace('"The curve falls."', '"曲线下降。"'))
    drift = editions.check(root)
    assert not drift.ok and "code cell 1 differs" in "\n".join(drift.problems)
    chinese.write_text(chinese.read_text().replace('"曲线下降。"', '"The curve falls."')
                       .replace("{code-cell} ipython3", "{code-cell} ipython3\n:tags: [hide-input]"))
    assert "metadata" in "\n".join(editions.check(root).problems)


def test_a_chinese_page_shows_the_english_pages_source_listings_and_api_from_one_folder_deeper() -> None:
    english = ("Text.\n\n```{literalinclude} ../../src/helpers/scores.py\n:pyobject: dot_scores\n```\n\n"
               "```{eval-rst}\n.. autofunction:: helpers.scores.dot_scores\n```\n")
    chinese = editions.in_chinese_folder(english)
    assert "```{literalinclude} ../../../src/helpers/scores.py" in chinese
    assert editions.in_chinese_folder("```{literalinclude} /abs/x.py\n```") == "```{literalinclude} /abs/x.py\n```"
    assert editions.source_directives(chinese.replace("Text.", "正文。")) == editions.source_directives(chinese)
    assert len(editions.source_directives(english)) == 2


def test_a_chinese_page_that_drops_or_changes_a_source_listing_fails_the_check(tmp_path: Path) -> None:
    root = small_book(tmp_path)
    chapter, chinese = root / "book" / "ch.md", root / "zh" / "book" / "ch.md"
    listing = "\n```{literalinclude} ../src/x.py\n:lines: 1-3\n```\n\n```{eval-rst}\n.. automodule:: x\n```\n"
    chapter.write_text(chapter.read_text() + listing)
    chinese.write_text(chinese.read_text() + editions.in_chinese_folder(listing))
    editions.update(chinese, root)
    assert editions.check(root).ok, editions.check(root).report()
    chinese.write_text(chinese.read_text().replace("../../src/x.py", "../src/x.py"))  # the English page's path
    assert "literalinclude/eval-rst block 1 is not the English page's" in "\n".join(editions.check(root).problems)
    chinese.write_text(chinese.read_text().replace("```{eval-rst}\n.. automodule:: x\n```\n", ""))
    assert "1 literalinclude/eval-rst blocks instead of 2" in "\n".join(editions.check(root).problems)


def test_start_gives_a_new_chinese_page_the_include_paths_of_its_folder(tmp_path: Path) -> None:
    root = small_book(tmp_path, translated=False)
    chapter = root / "book" / "ch.md"
    chapter.write_text(chapter.read_text() + "\n```{literalinclude} ../src/x.py\n```\n")
    chinese = editions.start("book/ch.md", root)
    assert "```{literalinclude} ../../src/x.py" in chinese.read_text() and not editions.directive_differences(
        chapter, chinese)


def test_sync_code_gives_a_chinese_page_the_english_code_and_keeps_its_prose(tmp_path: Path) -> None:
    root = small_book(tmp_path)
    english, chinese = root / "book" / "ch.md", root / "zh" / "book" / "ch.md"
    new_cell = "```{code-cell} ipython3\nprint('added')\n```"
    english.write_text(CHAPTER.replace('"The curve falls."', '"The curve drops."').replace(
        "Second paragraph.", f"{new_cell}\n\nSecond paragraph."))
    assert editions.code_differences(english, chinese)
    assert editions.sync_code(chinese, root) == 2
    assert editions.code_differences(english, chinese) == []
    text = chinese.read_text()
    assert "第一段，讲注意力。" in text and "# 一章" in text and text.index("added") < text.index("Second paragraph.")
    english.write_text(CHAPTER.replace('```{code-cell} ipython3\nviz.captioned(fig, "The curve falls.", '
                                       'alt="A line falling from 1 to 0.")\n```\n', ""))
    assert editions.sync_code(chinese, root) == 2 and editions.code_cells(chinese) == []
    assert "第一段，讲注意力。" in chinese.read_text()
    lab_en, lab_zh = root / "notebooks" / "lab.ipynb", root / "zh" / "notebooks" / "lab.ipynb"
    lab_zh.parent.mkdir(parents=True)
    lab_en.parent.mkdir()
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "Intro"},
             {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None}]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    lab_en.write_text(json.dumps(notebook))
    cells[0]["source"] = "引言"
    lab_zh.write_text(json.dumps(notebook))
    notebook["cells"][1]["source"] = "x = 2"
    notebook["cells"][0]["source"] = "Intro"
    lab_en.write_text(json.dumps(notebook))
    assert editions.sync_code(lab_zh, root) == 1
    synced = json.loads(lab_zh.read_text())["cells"]
    assert [c["source"] for c in synced] == ["引言", "x = 2"]


def test_start_copies_a_page_records_it_and_takes_it_off_the_untranslated_list(tmp_path: Path) -> None:
    root = small_book(tmp_path, translated=False)
    chinese = editions.start("book/ch.md", root)
    assert chinese.read_text().endswith(CHAPTER.split("---\n", 2)[2])
    assert editions.untranslated(root) == []
    assert set(editions.read_record(chinese)) == {"book/ch.md"}
    with pytest.raises(ValueError, match="english: book/ch.md already has a Chinese page"):
        editions.start("book/ch.md", root)
    with pytest.raises(ValueError, match="not a page of the English toc"):
        editions.start("book/other.md", root)


def test_a_record_is_written_into_the_front_matter_leaving_the_rest_alone(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("---\nglue_text:\n  a: b\ntranslation:\n  old.md: >-\n    abc\nkernelspec: {name: python3}\n---\n"
                    "# Title\n\nText.\n", encoding="utf-8")
    editions.write_record(page, {"book/x.md": ["0123456789ab"] * 10})
    text = page.read_text()
    assert text.endswith("---\n# Title\n\nText.\n") and "old.md" not in text
    assert editions.read_record(page) == {"book/x.md": ["0123456789ab"] * 10}
    front = editions.split_front_matter(text)[0]
    assert "glue_text:\n  a: b\nkernelspec: {name: python3}\n" in front
    bare = tmp_path / "bare.md"
    bare.write_text("# Title\n", encoding="utf-8")
    editions.write_record(bare, {"a.md": []})
    assert editions.read_record(bare) == {"a.md": []} and bare.read_text().endswith("---\n# Title\n")
    notebook = tmp_path / "lab.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {"kernelspec": {}}, "nbformat": 4, "nbformat_minor": 5}))
    editions.write_record(notebook, {"notebooks/lab.ipynb": ["a", "b"]})
    assert editions.read_record(notebook) == {"notebooks/lab.ipynb": ["a", "b"]}
    assert json.loads(notebook.read_text())["metadata"]["kernelspec"] == {}


def test_copied_english_paragraphs_are_found(tmp_path: Path) -> None:
    root = small_book(tmp_path)
    chinese = root / "zh" / "book" / "ch.md"
    assert editions.copied_paragraphs(root / "book" / "ch.md", chinese) == []
    english = "This paragraph was left in English by a translator in a hurry."
    (root / "book" / "ch.md").write_text(CHAPTER + f"\n{english}\n")
    chinese.write_text(chinese.read_text() + f"\n{english}\n")
    assert editions.copied_paragraphs(root / "book" / "ch.md", chinese) == [english]


# --- build-time pieces -------------------------------------------------------------------------------------


def test_the_language_switch_is_a_relative_link_to_the_same_page_or_the_other_editions_first_page() -> None:
    zh_pages = ["book/intro", "book/00-start/index", "genindex"]
    assert editions.switch_target("book/00-start/index", "en", zh_pages, "book/intro") == (
        "../../zh/book/00-start/index.html", False)
    assert editions.switch_target("book/03-scaling/index", "en", zh_pages, "book/intro") == (
        "../../zh/book/intro.html", True)
    assert editions.switch_target("genindex", "en", zh_pages, "book/intro") == ("zh/genindex.html", False)
    assert editions.switch_target("book/00-start/index", "zh", ["book/00-start/index"], "book/intro") == (
        "../../../book/00-start/index.html", False)
    assert editions.switch_target("search", "zh", ["search"], "book/intro") == ("../search.html", False)


def test_a_figures_caption_and_text_alternative_are_replaced() -> None:
    import plotly.graph_objects as go

    import helpers.viz as viz

    markup = viz.captioned(go.Figure(go.Scatter(y=[1, 0]), layout={"title": "T"}), "The curve <falls>.",
                           alt="A line & a point.")._site_html()
    new = editions.translate_figure(markup, "曲线下降。", "一条从 1 降到 0 的线。")
    assert "<figcaption>曲线下降。</figcaption>" in new and "一条从 1 降到 0 的线。" in new
    assert "falls" not in new and html.escape("A line & a point.") not in new
    assert editions.translate_figure("<div>no figure</div>", "a", "b") is None


def test_a_number_typed_into_a_chinese_figure_text_is_caught_once_the_run_changes_it() -> None:
    import plotly.graph_objects as go

    import editions_zh
    import helpers.viz as viz

    markup = viz.captioned(go.Figure(go.Scatter(y=[1, 0])), "Zero-mean entries: the loss ends at 0.41.",
                           alt="A line from 3 to 1,000 steps; 0.41 at the end.")._site_html()
    english = editions_zh.english_figure_text(markup)
    assert "0.41" in english and "1,000" in english
    assert editions_zh.numbers_not_in("均值为 0：损失最终为 0.41，共 1000 步，从 3 开始。", english) == []
    # a number planted in the Chinese text, or one the run has since changed, is reported
    assert editions_zh.numbers_not_in("损失最终为 0.42（种子 0.07–0.48）。", english) == ["0.42", "0.07", "0.48"]
    # the way out: the value glued by the page's code, written as in the prose
    glued = {"final_loss": "0.4123", "steps": "1000"}
    chinese = editions_zh.paste_glued("损失最终为 {glue:text}`final_loss:.2f`，共 {glue:text}`steps` 步。",
                                      glued.__getitem__)
    assert chinese == "损失最终为 0.41，共 1000 步。" and editions_zh.numbers_not_in(chinese, english) == []
    with pytest.raises(KeyError):
        editions_zh.paste_glued("{glue:text}`missing:.2f`", glued.__getitem__)


def test_a_quiz_shows_the_chinese_questions_and_buttons() -> None:
    from helpers.viz.quiz import quiz

    english = quiz(ROOT / "book/quizzes/ch00.json")._repr_html_()
    chinese = json.loads((ROOT / "zh/book/quizzes/ch00.json").read_text(encoding="utf-8"))
    new = editions.translate_quiz(english, chinese)
    assert json.dumps(chinese[0]["question"])[1:-1] in new and "'核对'" in new and "'Check'" not in new
    assert "Queries have shape" not in new
    # a numeric question's label comes from jupyterquiz's own script (chapter 0 has one)
    assert any(q["type"] == "numeric" for q in chinese) and "Type numeric answer here" not in new
    assert "输入数值答案" in new and "Type numeric answer here" in english
    with pytest.raises(ValueError, match="questions: 1 questions for a quiz of 5"):
        editions.translate_quiz(english, chinese[:1])


def test_glued_english_phrases_are_translated_by_pattern() -> None:
    phrases = {"none of them": "一个也没有", "{n} of them": "有 {n} 个"}
    assert editions.translate_glued("none of them", phrases) == "一个也没有"
    assert editions.translate_glued("3 of them", phrases) == "有 3 个"
    assert editions.translate_glued("all of them", {}) is None
    # Sphinx's smartquotes turn the glued text's apostrophe typographic; the pattern is written straight
    assert editions.translate_glued("the kernel\u2019s", {"the kernel's": "内核的"}) == "内核的"
    phrases = {"this chapter's model": "本章的模型"}
    assert editions.translate_output_text("this chapter\u2019s model", set(), phrases) == "本章的模型"


def test_printed_tables_are_translated_whole_and_names_stay() -> None:
    names, phrases = {"float16", "NaN"}, {"key": "键", "steps to 90%: mean": "达到 90% 的步数：均值",
                                          "c = {c}; uniform weight {w}.": "c = {c}；均匀权重 {w}。"}
    assert editions.translate_output_text(" key ", names, phrases) == " 键 "  # the spaces around are kept
    assert editions.translate_output_text("steps to 90%: mean", names, phrases) == "达到 90% 的步数：均值"
    assert editions.translate_output_text("c = 100; uniform weight 20%.", names, phrases) == "c = 100；均匀权重 20%。"
    assert editions.translate_output_text("float16", names, phrases) == "float16"  # a name stays English
    assert editions.translate_output_text(" no ", names, {"no": "否"}) == " 否 "  # a short word, by its entry
    # no English word (a unit is not one), or Chinese already
    for as_is in ("0.83", "n = 16", "64.1%", "k1", "×", "键", "0.5 GiB", "512 KiB"):
        assert editions.translate_output_text(as_is, names, phrases) == as_is
    assert editions.translate_output_text("keys", names, phrases) is None  # nothing covers it: the build warns
    assert editions.translate_output_text("float32", names, phrases) is None
    # the Chinese edition's file is well formed, and it translates every text entry into Chinese
    names, phrases = editions.load_output_text(Path(__file__).resolve().parents[1] / "zh")
    assert all(isinstance(name, str) for name in names)
    untranslated = [english for english, chinese in phrases.items()
                    if not any("\u3400" <= ch <= "\u9fff" for ch in chinese)]
    assert not untranslated, untranslated


# --- the checkers' messages in two languages ----------------------------------------------------------------


def split(x, h):
    b, length, d = x.shape
    return x.view(b, length, h, d // h).transpose(1, 2)


def merge(x):
    b, h, length, e = x.shape
    return x.transpose(1, 2).reshape(b, length, h * e)


@pytest.fixture
def no_language(monkeypatch: pytest.MonkeyPatch):
    """A session with no language chosen in any way (restored afterwards)."""
    monkeypatch.delenv("HELPERS_LANGUAGE", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(ROOT)
    set_language(None)
    yield monkeypatch
    set_language(None)


def test_checkers_speak_english_by_default_and_chinese_when_asked(no_language) -> None:
    wrong = lambda x: x.reshape(x.shape[0], x.shape[2], -1)  # noqa: E731 (the classic missing transpose)
    english = ch04.check_merge_heads(wrong)
    assert get_language() == "en" and english.message.startswith("you reshaped (B, H, L, E) straight to (B, L, D)")
    assert str(english).startswith("❌ Not yet: ")
    chinese = ch04.check_merge_heads(wrong, language="zh")
    assert chinese.message.startswith("你把 (B, H, L, E) 直接 reshape 成了 (B, L, D)")
    assert str(chinese).startswith("❌ 还不对：") and not chinese.passed
    assert chinese.in_language("en").message == english.message and chinese.in_language("en") == english
    with pytest.raises(ValueError, match="language must be one of"):
        ch04.check_merge_heads(merge, language="fr")


def test_the_language_comes_from_set_language_the_environment_or_the_notebooks_folder(no_language,
                                                                                      tmp_path: Path) -> None:
    no_language.setenv("JPY_SESSION_NAME", "/home/reader/book/zh/notebooks/04-multihead-lab.ipynb")
    assert get_language() == "zh" and str(ch04.check_merge_heads(merge)).startswith("✅ 正确：")
    no_language.setenv("JPY_SESSION_NAME", "/home/zh/notes/04-multihead-lab.ipynb")
    assert get_language() == "en"
    no_language.delenv("JPY_SESSION_NAME")
    (tmp_path / "zh" / "notebooks").mkdir(parents=True)
    no_language.chdir(tmp_path / "zh" / "notebooks")  # a kernel starts in its notebook's folder
    assert get_language() == "zh"
    no_language.chdir(tmp_path)
    no_language.setenv("HELPERS_LANGUAGE", "zh")
    assert get_language() == "zh"
    set_language("en")
    assert get_language() == "en"
    no_language.setenv("HELPERS_LANGUAGE", "xx")
    set_language(None)
    with pytest.raises(ValueError, match="HELPERS_LANGUAGE must be one of"):
        get_language()


def test_shared_messages_follow_the_checkers_language(no_language) -> None:
    stub = ch04.check_split_heads(lambda x, h: None, language="zh")
    assert stub.message == "你的函数返回了 None：请返回切分后的头（形状 (B, H, L, E)）（是不是忘了写 `return`？）"
    assert "returned None: return the heads, shape (B, H, L, E)" in ch04.check_split_heads(lambda x, h: None).message
    delegated = ch04.check_multihead_attention(lambda x, layer: layer(x)[0], language="zh")
    assert "你的答案调用了 helpers.MultiHeadAttention" in delegated.message


def test_a_stored_verdict_is_rendered_again_in_either_language(no_language) -> None:
    verdict = ch04.check_split_heads(split)
    stored = verdict._repr_html_()
    assert "data-check=" in stored and html.escape(str(verdict)) in stored
    chinese = editions.localise_verdicts(f"<div>{stored}</div>", "zh")
    assert html.escape(str(verdict.in_language("zh"))) in chinese and "✅ 正确：" in chinese
    assert editions.localise_verdicts(chinese, "en") == f"<div>{stored}</div>"
    plain = CheckResult(False, "written inline")  # a message not from the catalogue stays as it is
    assert editions.localise_verdicts(plain._repr_html_(), "zh") == plain._repr_html_()


def test_every_catalogue_message_has_chinese_that_uses_only_its_fields() -> None:
    def fields(template: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}

    import helpers.exercises

    modules = pkgutil.iter_modules(helpers.exercises.__path__)
    chapters = sorted(info.name for info in modules if info.name.startswith("ch"))
    assert len(chapters) >= 7  # ch01 ... ch06_training: every chapter's checkers
    for name in chapters:  # every checker module writes its verdicts from the catalogue
        module = importlib.import_module(f"helpers.exercises.{name}")
        assert getattr(module, "MESSAGES", None), f"exercises.{name} has no MESSAGES (zh/TRANSLATING.md, step 8)"
        assert all(key.startswith(f"{name}.") for key in module.MESSAGES), name
    keys = list(messages.CATALOGUE)
    assert {key.split(".")[0] for key in keys} >= {"verdict", "reader", "guard", *chapters}
    for key in keys:
        templates = messages.CATALOGUE[key]
        assert "zh" in templates, f"{key} has no Chinese message"
        assert fields(templates["zh"]) <= fields(templates["en"]), key  # (Chinese has no plural "s")
        assert len(fields(templates["en"]) - fields(templates["zh"])) <= 1, key
    with pytest.raises(ValueError, match="has no 'en' template"):
        messages.register({"x.y": {"zh": "只有中文"}})


def test_a_generated_text_alternative_is_chinese_in_the_chinese_edition() -> None:
    import plotly.graph_objects as go

    from editions_switch import localise_generated_alts
    from helpers.viz.renderer import describe_figure, figure_html

    fig = go.Figure([go.Scatter(x=[1, 2], y=[3, 4], name="a"), go.Scatter(x=[1, 2], y=[4, 3], name="b")])
    fig.update_layout(xaxis_title="step", yaxis_title="loss")
    untitled, titled = figure_html(fig), figure_html(go.Figure(fig).update_layout(title="Loss"))
    for markup in (untitled, titled):
        chinese, english = localise_generated_alts(markup, "zh"), localise_generated_alts(markup, "en")
        assert "data-alt-zh" not in chinese + english and "data-label-zh" not in chinese + english
        assert html.escape(describe_figure(fig, "zh")) in chinese and describe_figure(fig) not in chinese
        assert describe_figure(fig) in english and describe_figure(fig, "zh") not in english
    assert f'aria-label="{html.escape(describe_figure(fig, "zh"))}"' in localise_generated_alts(untitled, "zh")
    assert 'aria-label="Loss"' in localise_generated_alts(titled, "zh")  # a title stays the figure's own


# --- the Chinese edition's figures and search ---------------------------------------------------------------


def test_a_figures_own_text_is_translated_from_the_table_and_what_stays_english_is_named() -> None:
    import plotly.graph_objects as go

    import editions_figures as ef
    from helpers.viz.renderer import describe_figure, figure_html

    fig = go.Figure([go.Scatter(x=[1, 2], y=[3, 4], name="GRU + attention", hovertemplate="step %{x}<br>loss %{y:.2f}"),
                     go.Scatter(x=[1, 2], y=[4, 3], name="GRU, no attention")])
    fig.update_layout(title="Figure 1.1 Reversal: accuracy against length (3 seeds)", xaxis_title="source length",
                      yaxis_title="accuracy", annotations=[{"text": "chance", "x": 1, "y": 0, "showarrow": False}])
    fig.frames = [go.Frame(name="seed 0", layout={"title": {"text": "seed 0"}})]
    fig.update_layout(sliders=[{"currentvalue": {"prefix": "seed: "},
                                "steps": [{"label": "seed 0", "method": "animate", "args": [["seed 0"]]}]}],
                      updatemenus=[{"buttons": [{"label": "log scale", "method": "relayout",
                                                 "args": [{"yaxis.type": "log", "yaxis.title.text": "accuracy"}]}]}])
    table = ef.FigureTable(names={"GRU"}, text={
        "Figure {n} Reversal: accuracy against length ({k} seeds)": "图 {n} 反转任务：准确率随长度的变化（{k} 个种子）",
        "source length": "源序列长度", "accuracy": "准确率", "chance": "随机水平", "seed {s}": "种子 {s}",
        "seed: ": "种子：", "log scale": "对数坐标", "GRU + attention": "GRU + 注意力", "step %{x}": "第 %{x} 步",
        "loss %{y:.2f}": "损失 %{y:.2f}"})
    markup = figure_html(fig)
    new, reports = ef.translate_figure_html(markup, table)
    spec = ef.figure_specs(new)[0]
    layout = spec["layout"]
    assert layout["title"]["text"] == "图 1.1 反转任务：准确率随长度的变化（3 个种子）"
    assert layout["xaxis"]["title"]["text"] == "源序列长度" and layout["annotations"][0]["text"] == "随机水平"
    assert spec["data"][0]["name"] == "GRU + 注意力"
    assert spec["data"][0]["hovertemplate"] == "第 %{x} 步<br>损失 %{y:.2f}"
    slider = layout["sliders"][0]
    assert slider["steps"][0]["label"] == "种子 0" and slider["currentvalue"]["prefix"] == "种子："
    assert slider["steps"][0]["args"] == [["seed 0"]] and spec["frames"][0]["name"] == "seed 0"  # ids stay
    assert spec["frames"][0]["layout"]["title"]["text"] == "种子 0"
    assert layout["updatemenus"][0]["buttons"][0]["args"][0] == {"yaxis.type": "log", "yaxis.title.text": "准确率"}
    # the accessible name is the Chinese title; the generated description is made from the Chinese figure
    assert 'aria-label="图 1.1 反转任务：准确率随长度的变化（3 个种子）"' in new and "Reversal" not in new
    described = re.search(r'data-alt-zh="([^"]*)"', new).group(1)
    assert described == html.escape(ef._describe(spec)) and "准确率" in described and "accuracy" not in described
    assert "调节 种子 的滑块" in described and describe_figure(spec, "zh") != ef._describe(spec)  # not "种子："
    # what the table lacks is one report for the figure, every string of it, ready for the table
    assert reports == [("Figure 1.1 Reversal: accuracy against length (3 seeds)", ["GRU, no attention"])]
    assert ef.missing_yaml(reports[0][1]) == '  "GRU, no attention": ""'
    assert ef.translate_figure_html("<p>no figure</p>", table) == ("<p>no figure</p>", [])


def test_what_counts_as_english_in_a_figure() -> None:
    import editions_figures as ef

    assert ef.english_words("accuracy against length") == ["accuracy", "against", "length"]
    assert ef.english_words("q·k / √d_k, scaled_dot, torch.float16, W_q, 10x, L6, 12 ms, 3 KiB, lr 0.1") == []
    assert ef.english_words("<b>%{y:.2f}</b> 头 3") == []
    assert ef.english_words("all-MiniLM-L6-v2 on one sentence", ["all-MiniLM-L6-v2"]) == ["on", "one", "sentence"]
    assert ef.english_words("GRU vs attention", ["GRU"]) == ["vs", "attention"]
    table = ef.FigureTable(names={"GRU", "softmax"}, text={"layer {n}": "第 {n} 层", "head": "头"})
    assert table.translate("layer 3") == "第 3 层" and table.translate("GRU") == "GRU"
    assert table.translate("softmax<br>layer 2") == "softmax<br>第 2 层"  # line by line
    assert table.translate("layer two") is None
    assert table.missing("head<br>layer two<br>query") == ["layer two", "query"]
    assert table.translate("the", strict=False) == "the"  # a category (a token) is changed only by an entry
    # the Chinese edition's table is well formed and every entry has Chinese in it
    real = ef.load_figure_text(ROOT / "zh")
    assert not [english for english, chinese in real.text.items() if not re.search("[\u3400-\u9fff]", chinese)]


def test_the_glossarys_terms_are_indexed_whole_wherever_they_appear() -> None:
    import editions_search as es

    terms = es.glossary_terms(ROOT / "zh")
    assert {"自注意力", "键值缓存", "因果掩码", "多头注意力", "查询", "键", "值", "打分函数"} <= set(terms)
    language = es.SearchChineseBook({})
    try:
        es.SearchChineseBook.terms = tuple(t for t in terms if re.search("[\u4e00-\u9fff]", t))
        words = language.split("解码时的键值缓存与因果掩码")
        assert {"键值缓存", "因果掩码", "键"} <= set(words)
        assert language.word_filter("键") and not language.word_filter("的")
    finally:
        es.SearchChineseBook.terms = ()
    assert "splitQuery" in es.SPLIT_QUERY_JS and es.SearchChineseBook.js_splitter_code == es.SPLIT_QUERY_JS


def test_a_failed_chinese_build_stops_loudly_and_says_what_it_leaves(tmp_path: Path) -> None:
    import os
    import subprocess

    out = tmp_path / "out"
    (out / "_build" / "html").mkdir(parents=True)
    (out / "_build" / "html" / "objects.inv").write_bytes(b"")
    fake = tmp_path / "bin"
    fake.mkdir()
    # a stand-in for python: the vendored scripts succeed, the Chinese build writes a page or nothing, then fails
    (fake / "python").write_text(
        '#!/usr/bin/env bash\ncase "$*" in *sitebuild.vendor*) exit 0 ;; esac\n'
        'stage=""; while [ $# -gt 0 ]; do [ "$1" = --path-output ] && stage="$2"; shift; done\n'
        '[ -n "$WRITE" ] && mkdir -p "$stage/_build/html" && echo page > "$stage/_build/html/index.html"\nexit 2\n')
    (fake / "python").chmod(0o755)
    for write in ("", "1"):
        env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": "x", "WRITE": write}
        result = subprocess.run(["bash", str(ROOT / "scripts" / "build-zh.sh"), "--path-output", str(out)],
                                capture_output=True, text=True, env=env, check=False)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "THE CHINESE EDITION FAILED" in result.stderr and "_build/html/zh" in result.stderr
        assert (out / "_build" / "html" / "zh" / "index.html").is_file() == bool(write)  # what it wrote, in place


def test_a_widgets_labels_and_readouts_are_translated_and_the_readers_input_is_not() -> None:
    import editions_figures as ef

    state = {"state": {"a": {"model_name": "IntSliderModel", "state": {"description": "heads", "value": 4}},
                       "b": {"model_name": "HTMLModel", "state": {"value": "<b>max weight</b>"}},
                       "c": {"model_name": "TextModel", "state": {"value": "The cat sat", "description": "sentence"}},
                       "d": {"model_name": "DropdownModel", "state": {"_options_labels": ["scaled", "unscaled"]}}}}
    page = f'<p>x</p><script type="application/vnd.jupyter.widget-state+json">{json.dumps(state)}</script>'
    table = ef.FigureTable(text={"heads": "头数", "sentence": "句子", "scaled": "缩放", "unscaled": "不缩放"})
    new, missing = ef.translate_widget_state(page, table)
    models = json.loads(re.search(r"json\">(.*)</script>", new).group(1))["state"]
    assert models["a"]["state"]["description"] == "头数" and models["c"]["state"]["description"] == "句子"
    assert models["c"]["state"]["value"] == "The cat sat"  # what the reader typed is data
    assert models["d"]["state"]["_options_labels"] == ["缩放", "不缩放"]
    assert missing == ["<b>max weight</b>"] and new.startswith("<p>x</p>")
