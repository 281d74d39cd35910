"""The chapters' self-check quizzes (book/quizzes/*.json, shown by helpers.viz.quiz): every file is a
valid quiz, every numeric answer is what the package (or the closed form the chapter derives)
computes, every chapter page shows its quiz with the file's current digest, and the HTML a quiz
becomes is self-contained. The browser side is tests/book/test_quiz_browser.py."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from helpers.diagnostics import softmax_jacobian
from helpers.experiments import dot_variance, score_cost, score_learning
from helpers.experiments import efficient_cost as ec
from helpers.experiments import heads_training as ht
from helpers.experiments.llm_cache import bytes_per_token
from helpers.llama import LlamaConfig
from helpers.masks import causal_mask
from helpers.memory import kv_cache_bytes
from helpers.multihead import MultiHeadAttention
from helpers.viz import Quiz, quiz
from helpers.viz.quiz import fill_glued, glued_keys, quiz_digest, quiz_problems

ROOT = Path(__file__).resolve().parents[1]
QUIZZES = ROOT / "book" / "quizzes"
PAGES = {  # quiz -> (the chapter's last page, the heading the quiz stands before)
    "ch00": ("book/00-start/index.md", "## Glossary"),
    "ch01": ("book/01-bottleneck/index.md", "## Takeaways"),
    "ch02": ("book/02-dot-product/index.md", "## Takeaways"),
    "ch03": ("book/03-scaling/index.md", "## Takeaways"),
    "ch04": ("book/04-multihead/index.md", "## Takeaways"),
    "ch05": ("book/05-variants/04-vision.md", "## Takeaways"),
    "ch06": ("book/06-pitfalls/06-long-context.md", "## Takeaways"),
    "ch07": ("book/07-llm/index.md", "## Takeaways"),
}
QUIZ_CELL = re.compile(r'```\{code-cell\} ipython3\n(?::tags: \[[^\]]*\]\n)?\n'
                       r'from helpers\.viz import quiz\n\n'
                       r'quiz\("(?P<path>[^"]+)", digest="(?P<digest>[0-9a-f]{12})"'
                       r'(?:, glued=\{(?P<glued>[^`]*?)\})?\)\n```')


def load(name: str) -> list[dict[str, Any]]:
    return json.loads((QUIZZES / f"{name}.json").read_text(encoding="utf-8"))


def kv_gib(num_kv_heads: int, bytes_per_number: int = 2) -> float:
    """The KV cache of the 70B question (80 layers, head size 128, 4096 tokens), in GiB."""
    dtype = {2: torch.bfloat16, 4: torch.float32}[bytes_per_number]
    return kv_cache_bytes(80, num_kv_heads, 128, 4096, 1, dtype) / 2**30


def dot_flops(name: str) -> float:
    return next(r["flops"] for r in score_cost.flops_table(512, 512, 64, 64) if r["name"] == name) / 1e6


def mha_parameters(heads: int) -> int:
    return sum(p.numel() for p in MultiHeadAttention(64, heads).parameters())


def random_filters(count: int, size: int) -> torch.Tensor:
    return torch.randn(count, size, size, generator=torch.Generator().manual_seed(0))  # (m, d, d)


def fewest_exact_heads(filters: torch.Tensor) -> int:
    """The fewest position-only heads whose ceiling (chapter 4, section 3) reaches 1 for these filters."""
    return next(h for h in range(1, len(filters) + 1) if ht.filter_ceiling(filters, h) > 1 - 1e-9)


def reorder_ratio(n: int, d: int) -> float:
    check = ec.reordering_check(n=n, d=d)
    return check["flops_left"] / check["flops_right"]


# Every numeric question, by id: the answer, and the mistakes its feedback names (each must fall in
# the range or value that explains it). Computed with the package wherever it has the quantity.
NUMERIC: dict[str, tuple[Callable[[], float], dict[str, Callable[[], float]]]] = {
    "causal-count": (lambda: float(causal_mask(6).sum()),
                     {"every entry": lambda: 36.0, "no diagonal": lambda: float(causal_mask(6).tril(-1).sum())}),
    "bottleneck-bits": (lambda: math.floor(2 * 16 * 32 / math.log2(10)),
                        {"the bits themselves": lambda: 2 * 16 * 32, "10 bits a symbol": lambda: 2 * 16 * 32 / 10}),
    "gradient-decay": (lambda: 0.8 ** 20, {"0.8 times 20": lambda: 0.8 * 20, "1 - 0.8": lambda: 1 - 0.8}),
    "cosine-bound": (lambda: score_learning.cosine_weight_bound(10),
                     {"others at cosine 0": lambda: math.e / (math.e + 9), "uniform": lambda: 1 / 10}),
    "dot-flops": (lambda: dot_flops("dot"),
                  {"multiply-adds once": lambda: dot_flops("dot") / 2, "scores only": lambda: 512 * 512 / 1e6}),
    "dot-std": (lambda: math.sqrt(64), {"the variance": lambda: 64.0, "the scaled score's": lambda: 1.0}),
    "uniform-jacobian": (lambda: float(torch.linalg.matrix_norm(softmax_jacobian(torch.zeros(16)))),
                         {"one-hot": lambda: float(torch.linalg.matrix_norm(softmax_jacobian(
                             torch.tensor([1e4] + [0.0] * 15)))),
                          "one entry": lambda: 1 / 16}),
    "scale-bug": (lambda: (512 / 8) / 512, {"the std's factor": lambda: 1 / math.sqrt(8), "grows": lambda: 8.0}),
    "mha-params": (lambda: float(mha_parameters(8)),
                   {"no biases": lambda: 4 * 64 * 64, "a layer per head": lambda: 8 * mha_parameters(8),
                    "divided by heads": lambda: mha_parameters(8) / 8}),
    "transfer-offsets": (lambda: float(fewest_exact_heads(random_filters(4, 8))),
                         {"one head": lambda: 1.0, "one head too few": lambda: 3.0, "the matrix size": lambda: 8.0}),
    "linear-flops": (lambda: reorder_ratio(512, 32), {"same cost": lambda: 1.0, "squared": lambda: (512 / 32) ** 2}),
    "kv-cache": (lambda: kv_gib(8), {"all 64 heads": lambda: kv_gib(64), "keys only": lambda: kv_gib(8) / 2,
                                      "float32": lambda: kv_gib(8, 4)}),
    "smollm2-cache": (lambda: bytes_per_token(LlamaConfig()) / 1024,  # the defaults are SmolLM2-135M's
                      {"9 heads": lambda: bytes_per_token(LlamaConfig(), num_kv_heads=9) / 1024,
                       "keys only": lambda: bytes_per_token(LlamaConfig()) / 2048,
                       "one layer": lambda: bytes_per_token(LlamaConfig()) / 30 / 1024}),
}


def numeric_questions() -> list[tuple[str, dict[str, Any]]]:
    return [(name, q) for name in PAGES for q in load(name) if q["type"] == "numeric"]


def contains(answer: dict[str, Any], x: float) -> bool:
    if "range" in answer:
        return answer["range"][0] <= x < answer["range"][1]
    return math.isclose(answer["value"], x, rel_tol=1e-9)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_quiz_file_is_a_valid_quiz(name: str) -> None:
    questions = load(name)
    assert quiz_problems(questions) == []
    assert 4 <= len(questions) <= 8 and any(q["type"] == "numeric" for q in questions)


def test_every_quiz_file_belongs_to_a_chapter() -> None:
    assert sorted(path.stem for path in QUIZZES.glob("*.json")) == sorted(PAGES)


@pytest.mark.parametrize(("name", "question"), numeric_questions(), ids=lambda v: v["id"] if isinstance(v, dict) else v)
def test_numeric_answers_are_what_the_package_computes(name: str, question: dict[str, Any]) -> None:
    assert question["id"] in NUMERIC, f"{name}: numeric question {question['id']!r} has no recomputation here"
    compute, mistakes = NUMERIC[question["id"]]
    value = compute()
    right = next(a for a in question["answers"] if a.get("correct"))
    low, high = right["range"]
    assert low <= value < high, f"{name} {question['id']}: the key {right['range']} misses the computed {value}"
    # The tolerance: at most 5 %, or "the nearest whole number" for a whole-number answer.
    tolerance = 0.5 if float(value).is_integer() else 0.05 * abs(value)
    assert (high - low) / 2 <= tolerance, f"{name} {question['id']}: tolerance {right['range']} is too wide"
    wrong = [a for a in question["answers"] if not a.get("correct") and a.get("type") != "default"]
    assert not any(contains(a, value) for a in wrong), "a mistake's feedback would catch the right answer"
    for mistake, computed in mistakes.items():
        explained = [a for a in wrong if contains(a, computed())]
        assert len(explained) == 1, f"{name} {question['id']}: the mistake '{mistake}' ({computed()}) has no feedback"


def test_the_closed_forms_agree_with_the_measurements_they_stand_for() -> None:
    # The dot-std question's Var(q·k) = d_k, measured as chapter 3 does; the KV cache's formula, by hand.
    measured = dot_variance.dot_product_variance((64,), distribution="gaussian", num_samples=4096).measured[0]
    assert abs(measured / 64 - 1) < 0.1
    assert kv_gib(8) == 2 * 80 * 8 * 4096 * 128 * 2 / 2**30 == 1.25
    assert mha_parameters(1) == mha_parameters(8) == mha_parameters(64) == 4 * (64 * 64 + 64)


def test_every_feedback_says_in_words_whether_the_answer_is_right() -> None:
    """Colour is not the only cue: right answers' feedback starts with "Correct", wrong ones' with "Incorrect"."""
    for name in PAGES:
        for q in load(name):
            for a in q["answers"]:
                word = "Correct" if a.get("correct") else "Incorrect"
                assert a["feedback"].startswith(word), (name, q["id"], a["feedback"][:40])


def test_question_texts_use_only_simple_markup_and_balanced_math() -> None:
    for name in PAGES:
        for q in load(name):
            answers = q["answers"]
            texts = [q["question"], *(a.get("answer", "") for a in answers), *(a["feedback"] for a in answers)]
            for text in texts:
                assert set(re.findall(r"</?([a-zA-Z]+)", text)) <= {"code", "em"}, (name, q["id"], text)
                assert len(re.findall(r"(?<!\\)\$", text)) % 2 == 0, f"{name} {q['id']}: unbalanced $ in {text!r}"
                assert not re.search(r"<(?![/a-zA-Z])", text), f"{name} {q['id']}: a bare '<' in {text!r}"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_chapter_page_shows_its_quiz_with_the_files_digest(name: str) -> None:
    page, heading = PAGES[name]
    text = (ROOT / page).read_text(encoding="utf-8")
    cells = list(QUIZ_CELL.finditer(text))
    assert len(cells) == 1, f"{page}: expected one quiz cell, found {len(cells)}"
    cell = cells[0]
    path = (ROOT / page).parent / cell["path"]
    assert path.resolve() == (QUIZZES / f"{name}.json").resolve(), f"{page} shows {cell['path']}"
    # The notebook cache re-executes a page only when its code changes: the digest ties it to the file.
    assert cell["digest"] == quiz_digest(path), (
        f"{page}: the quiz cell names digest {cell['digest']}, {path.name} now has {quiz_digest(path)}; "
        "write the new digest in the cell")
    # a result stated in the quiz comes from the page's run: the cell passes exactly the values the text names,
    # and the Chinese quiz names the same ones (it is filled with the English quiz's values)
    passed = set(re.findall(r'"(\w+)":', cell["glued"] or ""))
    assert passed == glued_keys(load(name)), f"{page}: the quiz cell passes {sorted(passed)}, the quiz names " \
        f"{sorted(glued_keys(load(name)))}"
    chinese = ROOT / "zh" / "book" / "quizzes" / f"{name}.json"
    if chinese.is_file():
        assert glued_keys(json.loads(chinese.read_text(encoding="utf-8"))) == passed, f"{chinese} names other values"
    before = text[:cell.start()].rstrip()
    after = text[cell.end():].lstrip()
    assert after.startswith(heading + "\n"), f"{page}: the quiz should stand just before '{heading}'"
    last_heading = re.findall(r"^## .*$", before, re.MULTILINE)[-1]
    assert last_heading == "## Check yourself", f"{page}: the quiz's section is '{last_heading}'"


def test_quiz_html_is_one_self_contained_output() -> None:
    shown = quiz(QUIZZES / "ch00.json")  # a quiz with no glued values: one script, nothing else
    html = shown._repr_html_()
    assert not re.search(r"https?://", html), re.findall(r"https?://\S{0,60}", html)
    assert html.count("<script>") == 1 and html.endswith("</script>") and html.count("</script>") == 1
    assert not re.search(r"\bMathJax\.", html.split("(function () {")[0])  # jupyterquiz's calls go to the facade
    quiz_id = re.match(r'<div data-book-quiz="([A-Za-z]+)" class="book-quiz"', html)[1]
    assert f"box.id = '{quiz_id}'" in html and f'html[data-theme="dark"] #{quiz_id}' in html
    for question in load("ch00"):  # the questions are inside, with their feedback
        assert json.dumps(question["question"])[1:-1].replace("</", "<\\/") in html  # "</" is escaped in a script
    assert f"{len(load('ch00'))} questions" in repr(shown)


def test_quiz_refuses_a_stale_digest_a_missing_file_and_bad_json(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="digest"):
        quiz(QUIZZES / "ch00.json", digest="000000000000")
    assert isinstance(quiz(QUIZZES / "ch00.json", digest=quiz_digest(QUIZZES / "ch00.json")), Quiz)
    with pytest.raises(FileNotFoundError, match="path"):
        quiz(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("[{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        quiz(tmp_path / "broken.json")
    (tmp_path / "short.json").write_text(json.dumps(load("ch00")[:2]), encoding="utf-8")
    with pytest.raises(ValueError, match="4 to 8 questions"):
        quiz(tmp_path / "short.json")


def _mc(**change: Any) -> dict[str, Any]:
    q = {"id": "q", "type": "multiple_choice", "question": "Which?",
         "answers": [{"answer": "a", "correct": True, "feedback": "Correct."},
                     {"answer": "b", "correct": False, "feedback": "Incorrect."}]}
    return {**q, **change}


def _numeric(*answers: dict[str, Any]) -> dict[str, Any]:
    return {"id": "n", "type": "numeric", "question": "How many?", "answers": list(answers)}


RIGHT = {"type": "range", "range": [7.5, 8.5], "correct": True, "feedback": "Correct."}
DEFAULT = {"type": "default", "feedback": "Incorrect."}


@pytest.mark.parametrize(("broken", "problem"), [
    (_mc(answers=[{"answer": "a", "correct": True, "feedback": "x"},
                  {"answer": "b", "correct": True, "feedback": "y"}]),
     "exactly one answer must be correct, got 2"),
    (_mc(answers=[{"answer": "a", "correct": True, "feedback": "x"}, {"answer": "b", "correct": False}]),
     "answers [1] have no feedback"),
    (_mc(answers=[{"answer": "a", "correct": True, "feedback": "x"}]), "2 to 5 answers"),
    (_mc(type="string"), "'type' must be"),
    (_mc(question=" "), "non-empty 'question'"),
    (_numeric({"type": "value", "value": 8, "correct": True, "feedback": "x"}, DEFAULT), "needs a 'range'"),
    (_numeric({**RIGHT, "range": [8.5, 7.5]}, DEFAULT), "needs a 'range'"),
    (_numeric(RIGHT), "exactly one 'default'"),
    (_numeric(RIGHT, {"type": "value", "value": 8, "correct": False, "feedback": "x"}, DEFAULT), "wrong value 8"),
    (_numeric(RIGHT, {"type": "range", "range": [8, 9], "correct": False, "feedback": "x"}, DEFAULT), "wrong range"),
])
def test_the_checker_names_what_is_wrong_with_a_question(broken: dict[str, Any], problem: str) -> None:
    good = [_mc(id=f"m{i}") for i in range(3)] + [_numeric(RIGHT, DEFAULT)]
    assert quiz_problems(good) == []
    problems = quiz_problems(good[:3] + [broken])
    assert any(problem in p and p.startswith("question 3") for p in problems), problems


def test_the_checker_counts_questions_and_wants_a_numeric_one() -> None:
    only_choices = [_mc(id=f"m{i}") for i in range(4)]
    assert quiz_problems(only_choices) == ["a quiz needs at least one numeric question"]
    assert any("4 to 8 questions" in p for p in quiz_problems(only_choices[:3]))
    assert any("used more than once" in p for p in quiz_problems([_mc(id="same") for _ in range(3)] + [_numeric(
        RIGHT, DEFAULT)]))
    assert quiz_problems({"questions": []}) == ["a quiz must be a list of questions, got dict"]
    with pytest.raises(ValueError, match="exactly one answer must be correct"):
        Quiz([_mc(id=f"m{i}") for i in range(3)] + [_numeric({**RIGHT, "correct": False}, DEFAULT)])


def test_without_jupyterquiz_the_quiz_shows_its_questions_to_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jupyterquiz", None)  # as if it were not installed
    html = quiz(QUIZZES / "ch00.json")._repr_html_()
    assert "<script" not in html and "pip install jupyterquiz" in html
    for question in load("ch00"):
        assert question["question"] in html
        if question["type"] == "multiple_choice":
            assert all(answer["answer"] in html for answer in question["answers"])


def test_a_quiz_takes_the_results_it_states_from_the_run(tmp_path: Path) -> None:
    questions = [_mc(id=f"m{i}") for i in range(3)] + [_numeric(RIGHT, DEFAULT)]
    questions[0]["answers"][0]["feedback"] = ("Correct. The run reached {glue:text}`acc:.1%` in "
                                              "{glue:text}`steps` steps.")
    path = tmp_path / "glued.json"
    path.write_text(json.dumps(questions), encoding="utf-8")
    shown = quiz(path, glued={"acc": 0.9731, "steps": 140})
    assert shown.questions[0]["answers"][0]["feedback"] == "Correct. The run reached 97.3% in 140 steps."
    html = shown._repr_html_()
    assert "97.3%" in html and "{glue:text}" not in html
    values = re.search(r'<script type="application/json" class="book-quiz-glued">(.*?)</script>', html)
    assert json.loads(values[1]) == {"acc": 0.9731, "steps": 140}  # for the other edition's questions
    with pytest.raises(ValueError, match="glued: the quiz uses \\['acc'\\]"):
        quiz(path, glued={"steps": 140})
    with pytest.raises(ValueError, match="does not use \\['typo'\\]"):
        quiz(path, glued={"acc": 0.97, "steps": 140, "typo": 1})
    with pytest.raises(ValueError, match="does not take the format"):
        quiz(path, glued={"acc": "most", "steps": 140})
    assert fill_glued(["{glue:text}`n`"], {"n": 3}) == ["3"] and glued_keys({"a": ["{glue:text}`x:.2f`"]}) == {"x"}


def test_the_chinese_quiz_is_filled_with_the_english_quizs_values(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from editions_zh import translate_quiz

    questions = [_mc(id=f"m{i}") for i in range(3)] + [_numeric(RIGHT, DEFAULT)]
    questions[0]["answers"][0]["feedback"] = "Correct. {glue:text}`acc:.1%`."
    path = tmp_path / "glued.json"
    path.write_text(json.dumps(questions), encoding="utf-8")
    html = quiz(path, glued={"acc": 0.9731})._repr_html_()
    chinese = json.loads(json.dumps(questions).replace("Correct. ", "正确。"))
    translated = translate_quiz(html, chinese)
    shown = json.JSONDecoder().raw_decode(translated, re.search(r"var questions[A-Za-z]+=", translated).end())[0]
    assert shown[0]["answers"][0]["feedback"] == "正确。97.3%." and "{glue:text}" not in translated
