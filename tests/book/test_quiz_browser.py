"""The chapters' self-check quizzes in headless Chromium, with every request off the site blocked:
each chapter page's quiz appears, every question answered wrong shows the feedback that explains
it, then answered right shows the right answer's feedback; numeric answers are typed (Enter, or
the Check button). On a 360-px phone in dark mode the quiz fits, works from the keyboard, and axe
finds no serious or critical problem in it. The quiz files and their keys: tests/test_quizzes.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from browser import PHONE, Visit, in_parallel, unexpected, watch

from helpers.viz import fill_glued

pytestmark = [pytest.mark.book, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
QUIZ_PAGES = {  # quiz -> the built page that shows it (the chapter's last page)
    "ch00": "book/00-start/index.html",
    "ch01": "book/01-bottleneck/index.html",
    "ch02": "book/02-dot-product/index.html",
    "ch03": "book/03-scaling/index.html",
    "ch04": "book/04-multihead/index.html",
    "ch05": "book/05-variants/04-vision.html",
    "ch06": "book/06-pitfalls/06-long-context.html",
    "ch07": "book/07-llm/index.html",
}
READY = "[data-book-quiz-ready=true]"
LOAD_MS = 90_000  # a page with figures on a loaded 2-core machine can take longer than Playwright's 30 s
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": False}  # axe's CSS preload asks for @imports by wrong URLs
QUIZ_BYTES = re.compile(r'<div data-book-quiz="[A-Za-z]+".*?</script>', re.DOTALL)
QUIZ_BUDGET = 150_000
"""Bytes a quiz may add to its page (questions, feedback, the script), its formulas typeset at build
time included: chapter 3's six questions hold 976 MathJax elements (about 100 kB); in the browser,
MathJax itself would be 1.2 MB."""


GLUED = re.compile(r'<script type="application/json" class="book-quiz-glued">(.*?)</script>', re.DOTALL)


def questions(name: str, markup: str | None = None) -> list[dict[str, Any]]:
    """Quiz ``name``'s questions; given the page's HTML, with the run's values it shows filled in
    (``{glue:text}`key:format``` -> the number, :func:`helpers.viz.fill_glued`)."""
    raw = json.loads((ROOT / "book" / "quizzes" / f"{name}.json").read_text(encoding="utf-8"))
    if markup is None:
        return raw
    values = GLUED.search(markup)
    return fill_glued(raw, json.loads(values.group(1)) if values else {})


def plain_start(feedback: str) -> str:
    """The words a feedback starts with, before any math or markup (which the page renders)."""
    return " ".join(re.split(r"[$<]", feedback)[0].split())


def shown(text: str) -> str:
    return " ".join(text.split())


def number(x: float) -> str:
    return f"{x:.6g}"


def open_quiz(chromium: Any, site: Any, name: str, width: int = 1280, height: int = 900, dark: bool = False,
              **options: Any) -> tuple[Any, Any, Visit]:
    """The page of quiz ``name`` in a fresh context (network off the site blocked), its quiz drawn."""
    context = chromium.new_context(viewport={"width": width, "height": height}, **options)
    if dark:  # what the theme's switch stores; the page then opens dark
        context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    page = context.new_page()
    visit = Visit(QUIZ_PAGES[name])
    watch(page, visit, site.url + "/")
    page.goto(f"{site.url}/{QUIZ_PAGES[name]}", wait_until="load", timeout=LOAD_MS)
    page.wait_for_selector(READY, state="attached", timeout=LOAD_MS)
    return context, page, visit


def feedback_after(wrapper: Any) -> tuple[str, str]:
    fb = wrapper.locator(".Feedback")
    return fb.get_attribute("class") or "", shown(fb.inner_text())


def test_exactly_the_chapters_last_pages_hold_a_quiz(pages: list[Path], site: Any, measurements: list[str]) -> None:
    with_quiz = {page.relative_to(site.root).as_posix() for page in pages
                 if QUIZ_BYTES.search(page.read_text(encoding="utf-8"))}
    assert with_quiz == set(QUIZ_PAGES.values())
    for name, page in QUIZ_PAGES.items():
        html = (site.root / page).read_text(encoding="utf-8")
        found = QUIZ_BYTES.findall(html)
        assert len(found) == 1, f"{page}: {len(found)} quizzes"
        size = len(found[0].encode("utf-8"))
        measurements.append(f"quiz: {size / 1e3:5.1f} kB in {page} ({len(questions(name))} questions)")
        assert size < QUIZ_BUDGET, f"{page}: the quiz adds {size} bytes"


def _answer_wrong_then_right(browser: Any, site: Any, name: str) -> AssertionError | None:
    """Every question of quiz ``name`` answered wrong, then right, in ``browser``: ``None``, or what failed."""
    try:
        _answer_every_question(browser, site, name)
    except AssertionError as failure:
        return failure
    return None


@pytest.fixture(scope="module")
def answered(site: Any) -> dict[str, AssertionError | None]:
    """Every quiz answered wrong, then right, in browsers side by side (:func:`browser.in_parallel`), each in a
    context of its own: ``None`` for a quiz that passed, else what failed."""
    names = sorted(QUIZ_PAGES)
    return dict(zip(names, in_parallel(names, lambda browser, name: _answer_wrong_then_right(browser, site, name))))


@pytest.mark.parametrize("name", sorted(QUIZ_PAGES))
def test_every_question_answered_wrong_then_right_explains_itself(name: str,
                                                                  answered: dict[str, AssertionError | None]) -> None:
    """Each quiz on its page: wrong answers get their own feedback, right ones theirs; math typeset, no error, no
    request off the site (the quizzes are answered together, by the ``answered`` fixture; each test reports its own)."""
    if answered[name] is not None:
        raise answered[name]


def _answer_every_question(chromium: Any, site: Any, name: str) -> None:
    context, page, visit = open_quiz(chromium, site, name)
    quiz = page.locator(".book-quiz")
    wrappers = quiz.locator(".Quiz")
    expected = questions(name, page.content())
    assert wrappers.count() == len(expected)
    for index, question in enumerate(expected):
        wrapper = wrappers.nth(index)
        assert shown(wrapper.locator(".MultipleChoiceQn, .NumericQn").inner_text()).startswith(
            plain_start(question["question"])), f"{name} question {index} is not {question['id']}"
        right = next(a for a in question["answers"] if a.get("correct"))
        if question["type"] == "multiple_choice":
            labels = wrapper.locator("label.MCButton")
            assert labels.count() == len(question["answers"])
            wrong = wrapper.locator("label.MCButton[data-correct=false]").first
            wrong_feedback = wrong.get_attribute("data-feedback")
            # (the page holds the feedback with its formulas typeset at build time: compare the words before them)
            assert plain_start(wrong_feedback) in [plain_start(a["feedback"]) for a in question["answers"]
                                                   if not a["correct"]]
            wrong.scroll_into_view_if_needed()
            wrong.click()
            classes, text = feedback_after(wrapper)
            assert "incorrect" in classes.split() and text.startswith(plain_start(wrong_feedback)), (name, text)
            wrapper.locator("label.MCButton[data-correct=true]").click()
        else:
            field = wrapper.locator("input.Input-text")
            field.scroll_into_view_if_needed()
            mistakes = [a for a in question["answers"] if not a.get("correct") and a.get("type") != "default"]
            default = next(a for a in question["answers"] if a.get("type") == "default")
            tries = [(number(sum(m["range"]) / 2) if "range" in m else number(m["value"]), m) for m in mistakes[:1]]
            for typed, meant in [*tries, ("-999", default)]:
                field.fill(typed)
                field.press("Enter")
                classes, text = feedback_after(wrapper)
                assert "incorrect" in classes.split(), (name, question["id"], typed, classes)
                assert text.startswith(plain_start(meant["feedback"])), (name, question["id"], typed, text)
            field.fill(number(sum(right["range"]) / 2))
            wrapper.locator("button.book-quiz-check").click()  # the button, where Enter was used above
        classes, text = feedback_after(wrapper)
        assert "correct" in classes.split() and text.startswith(plain_start(right["feedback"])), (name, text)
    math = page.evaluate("""() => { const box = document.querySelector('.book-quiz');
        return {tex: /\\\\[(\\[]/.test(box.innerText), typeset: box.querySelectorAll('mjx-container').length,
                nested: box.querySelectorAll('mjx-container mjx-container').length}; }""")
    page.wait_for_load_state("networkidle")
    context.close()
    assert not math["tex"] and math["nested"] == 0 and math["typeset"] > 0, f"{name}: math in the quiz: {math}"
    assert not visit.page_errors, visit.page_errors
    assert not unexpected(visit.console_errors), visit.console_errors
    assert not visit.external and not visit.failed, (visit.external, visit.failed)


_CONTRAST = """el => {
  // WCAG contrast of an element's text against the first opaque background behind it.
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = c => { const v = rgb(c).slice(0, 3).map(x => { x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  let bg = null;
  for (let a = el; a && !bg; a = a.parentElement) {
    const c = getComputedStyle(a).backgroundColor;
    if (rgb(c).length === 3 || rgb(c)[3] > 0.99) { bg = c; }
  }
  bg = bg || 'rgb(255, 255, 255)';
  const [l1, l2] = [lum(getComputedStyle(el).color), lum(bg)].sort((x, y) => y - x);
  return (l1 + 0.05) / (l2 + 0.05);
}"""


@pytest.mark.parametrize("name", ["ch02", "ch06"])  # one per kind of page: a chapter, a chapter's last section
def test_a_quiz_on_a_phone_in_dark_mode_fits_reads_and_works_from_the_keyboard(name: str, chromium: Any,
                                                                               site: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    context, page, visit = open_quiz(chromium, site, name, 360, 800, dark=True, **PHONE)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    mc = page.locator(".book-quiz .Quiz:has(label.MCButton)").first
    radio = mc.locator("label.MCButton[data-correct=true] input[type=radio]")
    radio.focus()
    page.keyboard.press("Space")  # a choice is a radio button: the keyboard picks it
    classes, _ = feedback_after(mc)
    field = page.locator(".book-quiz input.Input-text").first
    field.fill("-999")
    field.press("Enter")
    page.wait_for_timeout(1000)  # the answered button's colour is an animation
    contrast = {label: page.locator(selector).first.evaluate(_CONTRAST) for label, selector in {
        "question": ".book-quiz .MultipleChoiceQn", "choice": ".book-quiz label.MCButton:not(.correctButton)",
        "answered choice": ".book-quiz label.correctButton", "right feedback": ".book-quiz .Feedback.correct",
        "wrong feedback": ".book-quiz .Feedback.incorrect", "input label": ".book-quiz .InpLabel",
        "typed number": ".book-quiz input.Input-text", "check button": ".book-quiz button.book-quiz-check"}.items()}
    sizes = page.evaluate("""() => ({page: document.documentElement.scrollWidth, quiz: Math.max(
        ...[...document.querySelectorAll('.book-quiz *')].map(e => e.getBoundingClientRect().right))})""")
    errors = visit.page_errors + unexpected(visit.console_errors) + visit.external + visit.failed  # before axe's own
    violations = Axe().run(page, context=".book-quiz", options=AXE_OPTIONS).response["violations"]
    context.close()
    assert "correct" in classes.split(), f"{name}: Space on the right choice's radio button did not answer"
    assert sizes["page"] == 360 and sizes["quiz"] <= 360, f"{name}: the quiz is wider than the phone: {sizes}"
    low = {label: round(ratio, 2) for label, ratio in contrast.items() if ratio < 4.5}
    assert not low, f"{name}: text below 4.5:1 contrast in dark mode: {low}"
    serious = [(v["id"], v["impact"], len(v["nodes"])) for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, f"{name}: axe in the quiz: {serious}"
    assert not errors, errors


def test_the_light_theme_quiz_has_no_serious_accessibility_problem(chromium: Any, site: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    context, page, visit = open_quiz(chromium, site, "ch03")
    for wrapper in page.locator(".book-quiz .Quiz:has(label.MCButton)").all()[:2]:  # one wrong, one right
        wrapper.locator("label.MCButton[data-correct=false]").first.click()
    page.locator(".book-quiz .Quiz:has(label.MCButton)").nth(1).locator("label[data-correct=true]").click()
    page.wait_for_timeout(1000)
    errors = visit.page_errors + unexpected(visit.console_errors) + visit.external + visit.failed  # before axe's own
    violations = Axe().run(page, context=".book-quiz", options=AXE_OPTIONS).response["violations"]
    context.close()
    serious = [(v["id"], v["impact"], len(v["nodes"])) for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious, f"axe in the quiz: {serious}"
    assert not errors, errors
