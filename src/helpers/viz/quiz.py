"""Self-check quizzes that work on the static site: multiple choice and numeric, no kernel needed.

Each chapter ends with a quiz whose questions live in ``book/quizzes/chNN.json`` (jupyterquiz's
format, checked by :func:`quiz_problems`). :func:`quiz` turns a file into one HTML output that
jupyterquiz renders in the browser: in JupyterLab, on Colab and in the book's static pages alike.

What this adds to jupyterquiz's own output, and why:

- **No request off the site.** jupyterquiz inlines its JavaScript and CSS (nothing to serve), but
  when it finds a MathJax 3 that has not finished loading it throws, or loads MathJax from a CDN.
  The quiz is therefore shown only once the page's MathJax is ready (or at once where there is
  none, as in JupyterLab), and the CDN fallback is replaced by an empty ``data:`` script.
- **Readable and usable for everyone.** A palette safe for colour-blind readers (blue for right,
  vermillion for wrong, and every feedback says in words whether the answer is right), readable
  in dark mode, labelled numeric inputs with a "Check" button (Enter works too), feedback
  announced to screen readers, and a visible keyboard focus.
- **A page that cannot go stale.** The notebook cache re-executes a page only when its code
  changes, not when a JSON file it reads does; a page passes the file's :func:`quiz_digest`, so
  that editing a quiz means editing the page's cell too (``tests/test_quizzes.py`` checks it).
- **Feedback that states a result takes it from the run.** A question, answer or feedback may
  write a measured number as the prose does, ``{glue:text}`key:format```; the page passes the
  values (``quiz(..., glued={"key": value})``) and :func:`helpers.viz.fill_glued` formats them in. The values
  travel with the quiz's HTML, so the Chinese edition fills its own questions with the same run's
  numbers.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["Quiz", "quiz", "quiz_digest", "quiz_problems", "fill_glued", "glued_keys"]

PALETTE = {
    "--jq-multiple-choice-bg": "#25406b",
    "--jq-numeric-bg": "#25406b",
    "--jq-mc-button-bg": "#f8f9fa",
    "--jq-mc-button-border": "#8a939c",
    "--jq-mc-button-inset-shadow": "#555555",
    "--jq-numeric-input-bg": "#ffffff",
    "--jq-numeric-input-label": "#212529",
    "--jq-numeric-input-shadow": "#999999",
    "--jq-correct-color": "#005a9c",  # Okabe–Ito blue, darkened: white text on it and it on white, >= 4.5:1
    "--jq-incorrect-color": "#a63d00",  # Okabe–Ito vermillion, darkened likewise
    "--jq-text-color": "#ffffff",
    "--jq-link-color": "#cfe2ff",
}
"""jupyterquiz's colours in light mode (its CSS variables)."""

DARK_PALETTE = {
    "--jq-multiple-choice-bg": "#2c4f86",
    "--jq-numeric-bg": "#2c4f86",
    "--jq-mc-button-bg": "#2a2f36",
    "--jq-mc-button-border": "#6c757d",
    "--jq-numeric-input-bg": "#1e2227",
    "--jq-numeric-input-label": "#e3e6ea",
}
"""The colours that change in the site's dark mode (``html[data-theme="dark"]``)."""

_CDN_MATHJAX = re.compile(r"""(['"])https?://[^'"]*mathjax[^'"]*\1""", re.IGNORECASE)
_DIV = re.compile(r'^<div id="([A-Za-z]+)" ')

_CSS = """<style>
html[data-theme="dark"] body .bd-content div.cell_output div.text_html:has(> .book-quiz)
  {background-color: transparent; color: inherit; padding: 0;}  /* not the light panel of HTML outputs */
.book-quiz {margin: 1rem 0 1.5rem;}
.book-quiz .Quiz {font-size: 1.05rem; line-height: 1.45; max-width: 100%%;}
.book-quiz .MCButton {font-size: 1rem; line-height: 1.35; justify-content: flex-start; text-align: left;}
.book-quiz .MCButton:focus-within {outline: 3px solid #0a58ca; outline-offset: 2px;}
.book-quiz .Feedback {font-size: 1rem; line-height: 1.45; text-align: left; margin: 0.25rem 0 1.25rem;}
.book-quiz .Feedback.correct {color: %(correct)s;}
.book-quiz .Feedback.incorrect {color: %(incorrect)s;}
.book-quiz .InpLabel {float: none; display: block; font-size: 1rem; line-height: 1.4; margin: 0.5rem 0 0;}
.book-quiz .Input-text {color: #212529; border: 1px solid #6c757d; max-width: 100%%; box-sizing: border-box;
  margin: 0.5rem 0; font-size: 1.1rem;}
.book-quiz .Input-text.correctButton, .book-quiz .Input-text.incorrectButton {color: #ffffff;}
.book-quiz .sr-only {position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0, 0, 0, 0); white-space: nowrap; border: 0;}
.book-quiz .book-quiz-check {font: inherit; font-size: 1rem; padding: 0.3rem 1.1rem; margin: 0 0 0.5rem;
  border-radius: 0.25rem; border: 1px solid #25406b; background: #25406b; color: #ffffff; cursor: pointer;}
.book-quiz .book-quiz-check:focus-visible {outline: 3px solid #0a58ca; outline-offset: 2px;}
html[data-theme="dark"] .book-quiz .MCButton {color: #e3e6ea;}
html[data-theme="dark"] .book-quiz .MCButton.correctButton,
html[data-theme="dark"] .book-quiz .MCButton.incorrectButton {color: #ffffff;}
html[data-theme="dark"] .book-quiz .Input-text {color: #e3e6ea; border-color: #8a939c;}
html[data-theme="dark"] .book-quiz .Input-text.correctButton,
html[data-theme="dark"] .book-quiz .Input-text.incorrectButton {color: #ffffff;}
html[data-theme="dark"] .book-quiz .Feedback.correct {color: #8cc8ff;}
html[data-theme="dark"] .book-quiz .Feedback.incorrect {color: #ffab7a;}
html[data-theme="dark"] .book-quiz .MCButton:focus-within,
html[data-theme="dark"] .book-quiz .book-quiz-check:focus-visible {outline-color: #8cc8ff;}
html[data-theme="dark"] #%(id)s {%(dark)s}
@media print {.book-quiz .book-quiz-check {display: none;}}
</style>"""

_SCRIPT = r"""
(function () {
  // jupyterquiz's script talks to "BookQuizMathJax" (renamed from "MathJax"), defined here once the
  // page's MathJax (if any) is ready. With a MathJax 3 still loading, jupyterquiz would throw or
  // fetch MathJax from a CDN; with a ready one, it typesets each question twice, and MathJax's
  // MathML input then renders the first rendering's hidden MathML again, nested inside it.
  var box = document.querySelector('[data-book-quiz="%(id)s"]');
  var questions = %(count)d;
  function facade(mj) {
    if (!mj || mj.version[0] === '2') { return mj; }
    var book = {version: mj.version, pending: (mj.startup && mj.startup.promise) || Promise.resolve()};
    book.typeset = function (elements) {
      // Typeset only what still holds TeX delimiters, one typeset at a time.
      var todo = (elements || []).filter(function (e) { return /\\[(\[]/.test(e.textContent); });
      if (todo.length) { book.pending = book.pending.then(function () { return mj.typesetPromise(todo); }); }
    };
    return book;
  }
  function whenReady(go, waited) {
    var mj = window.MathJax;
    if (!mj) { go(undefined); return; }
    if (mj.version && mj.version[0] === '2' && mj.Hub) { go(mj); return; }
    if (mj.version && typeof mj.typesetPromise === 'function') {
      if (mj.startup && mj.startup.promise) { mj.startup.promise.then(function () { go(mj); }); } else { go(mj); }
      return;
    }
    // Only MathJax's configuration, and no MathJax after 10 s: show the questions without typesetting.
    if (waited > 10000) { go(undefined); return; }
    setTimeout(function () { whenReady(go, waited + 50); }, 50);
  }
  function finish(tries) {
    // Once jupyterquiz has drawn the questions: label the numeric inputs, add a Check button
    // (Enter works too), and have screen readers announce the feedback.
    if (box.querySelectorAll('.Quiz').length < questions) {
      if (tries > 0) { setTimeout(function () { finish(tries - 1); }, 50); }
      return;
    }
    box.querySelectorAll('.Feedback').forEach(function (fb) { fb.setAttribute('aria-live', 'polite'); });
    // A choice that is only a formula ("$(B, H, L, S)$") names its radio button by the formula's
    // MathML (typeset math hides its drawing from screen readers): say it in so many words.
    box.querySelectorAll('label.MCButton > input[type=radio]').forEach(function (input) {
      var name = input.parentElement.textContent.replace(/\s+/g, ' ').trim();
      if (name && !input.hasAttribute('aria-label')) { input.setAttribute('aria-label', name); }
    });
    box.querySelectorAll('input.Input-text').forEach(function (input) {
      var label = input.previousElementSibling;
      if (label && label.tagName === 'LABEL' && !label.htmlFor) { label.htmlFor = input.id; }
      var check = document.createElement('button');
      check.type = 'button';
      check.className = 'book-quiz-check';
      check.textContent = 'Check';
      check.addEventListener('click', function () {
        if (input.onkeypress) { input.onkeypress.call(input, {which: 13, keyCode: 13}); }
      });
      input.insertAdjacentElement('afterend', check);
    });
    var math = window.BookQuizMathJax;
    Promise.resolve(math && math.pending).then(function () { box.dataset.bookQuizReady = 'true'; });
  }
  if (box) {
    whenReady(function (mj) {
      if (typeof window.BookQuizMathJax === 'undefined' && mj) { window.BookQuizMathJax = facade(mj); }
      box.id = '%(id)s';  // jupyterquiz waits for its container's id: it starts now
      finish(400);
    }, 0);
  }
})();
"""


def quiz_digest(path: str | Path) -> str:
    """The short digest a page passes to :func:`quiz` for a quiz file.

    Args:
        path: A quiz file (JSON).

    Returns:
        The first 12 hexadecimal digits of the SHA-256 of the file's bytes.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


_GLUED = re.compile(r"\{glue:text\}`([A-Za-z0-9_]+)(?::([^`]*))?`")
"""A glued value in a quiz's text, written as in the prose — ``{glue:text}`key:.1%```."""


def glued_keys(questions: Any) -> set[str]:
    """The keys of every ``{glue:text}`key:format``` in a quiz's strings.

    Args:
        questions: The parsed JSON of a quiz file.

    Returns:
        The keys.
    """
    if isinstance(questions, str):
        return {m.group(1) for m in _GLUED.finditer(questions)}
    if isinstance(questions, list):
        return set().union(*(glued_keys(q) for q in questions))
    if isinstance(questions, dict):
        return set().union(*(glued_keys(v) for v in questions.values()))
    return set()


def fill_glued(questions: Any, glued: dict[str, Any]) -> Any:
    """A quiz with every ``{glue:text}`key:format``` replaced by ``format(glued[key], format)``.

    Args:
        questions: The parsed JSON of a quiz file (or any part of it).
        glued: The run's values, key -> number or text; every key the quiz uses and no other.

    Returns:
        A copy of ``questions`` with the values formatted in.

    Raises:
        ValueError: If the quiz uses a key that ``glued`` lacks, or ``glued`` has a key the quiz
            does not use, or a value does not take its format.
    """
    used = glued_keys(questions)
    missing, unused = sorted(used - set(glued)), sorted(set(glued) - used)
    if missing or unused:
        raise ValueError(f"glued: the quiz uses {missing or 'no other'} keys not given, and does not use "
                         f"{unused or 'none'} of those given; pass exactly the values its text names")

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return _GLUED.sub(lambda m: _formatted(m.group(1), glued[m.group(1)], m.group(2) or ""), value)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    return fill(questions)


def _formatted(key: str, value: Any, spec: str) -> str:
    try:
        return format(value, spec)
    except (TypeError, ValueError) as error:
        raise ValueError(f"glued: the value of {key!r}, {value!r}, does not take the format {spec!r} "
                         f"({error})") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def quiz_problems(questions: Any) -> list[str]:
    """What is wrong with a list of quiz questions; empty when it is a valid book quiz.

    A valid quiz is a list of 4 to 8 questions with at least one numeric question. Every question
    has a non-empty ``question`` text, a ``type`` and a unique ``id``. A ``multiple_choice``
    question has 2 to 5 ``answers``, exactly one of them ``correct``, each with its own
    ``feedback``. A ``numeric`` question has exactly one correct answer, a ``range`` ``[low, high]``
    with ``low < high`` (the tolerance), a ``default`` answer for anything else, and feedback on
    every answer; its other answers (a ``value`` or a ``range``, ``correct: false``) explain common
    mistakes and must not overlap the correct range.

    Args:
        questions: The parsed JSON of a quiz file.

    Returns:
        One line per problem, naming the question (by index and id) and what is wrong.
    """
    if not isinstance(questions, list):
        return [f"a quiz must be a list of questions, got {type(questions).__name__}"]
    problems = []
    if not 4 <= len(questions) <= 8:
        problems.append(f"a quiz has 4 to 8 questions, this one has {len(questions)}")
    ids = [q.get("id") for q in questions if isinstance(q, dict)]
    problems += [f"id {i!r} is used more than once" for i in sorted({i for i in ids if ids.count(i) > 1}, key=str)]
    if not any(isinstance(q, dict) and q.get("type") == "numeric" for q in questions):
        problems.append("a quiz needs at least one numeric question")
    for index, q in enumerate(questions):
        where = f"question {index} ({q.get('id') if isinstance(q, dict) else '?'})"
        if not isinstance(q, dict):
            problems.append(f"{where}: must be an object, got {type(q).__name__}")
            continue
        if not isinstance(q.get("id"), str) or not q["id"]:
            problems.append(f"{where}: needs an 'id' (a non-empty string)")
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            problems.append(f"{where}: needs a non-empty 'question' text")
        answers = q.get("answers")
        if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
            problems.append(f"{where}: 'answers' must be a list of objects")
            continue
        silent = [i for i, a in enumerate(answers)
                  if not isinstance(a.get("feedback"), str) or not a["feedback"].strip()]
        if silent:
            problems.append(f"{where}: answers {silent} have no feedback")
        correct = [a for a in answers if a.get("correct") is True]
        if q.get("type") == "multiple_choice":
            if not 2 <= len(answers) <= 5:
                problems.append(f"{where}: a multiple-choice question has 2 to 5 answers, got {len(answers)}")
            if len(correct) != 1:
                problems.append(f"{where}: exactly one answer must be correct, got {len(correct)}")
            texts = [a.get("answer") for a in answers]
            if not all(isinstance(t, str) and t.strip() for t in texts):
                problems.append(f"{where}: every answer needs a non-empty 'answer' text")
            elif len(set(texts)) != len(texts):
                problems.append(f"{where}: two answers have the same text")
        elif q.get("type") == "numeric":
            problems += _numeric_problems(where, answers, correct)
        else:
            problems.append(f"{where}: 'type' must be 'multiple_choice' or 'numeric', got {q.get('type')!r}")
    return problems


def _numeric_problems(where: str, answers: list[dict[str, Any]], correct: list[dict[str, Any]]) -> list[str]:
    problems = []
    if len(correct) != 1:
        return [f"{where}: exactly one answer must be correct, got {len(correct)}"]
    right = correct[0].get("range")
    if not (isinstance(right, list) and len(right) == 2 and all(_is_number(v) for v in right) and right[0] < right[1]):
        return [f"{where}: the correct answer needs a 'range' [low, high] with low < high (the tolerance), "
                f"got {right!r}"]
    if sum(a.get("type") == "default" for a in answers) != 1:
        problems.append(f"{where}: needs exactly one 'default' answer (the feedback for anything else)")
    for a in answers:
        if a is correct[0] or a.get("type") == "default":
            continue
        if "value" in a:
            if not _is_number(a["value"]) or right[0] <= a["value"] < right[1]:
                problems.append(f"{where}: the wrong value {a['value']!r} must be a number outside {right}")
        elif "range" in a:
            low, high = (a["range"] + [None, None])[:2] if isinstance(a["range"], list) else (None, None)
            if not (_is_number(low) and _is_number(high) and low < high) or (low < right[1] and right[0] < high):
                problems.append(f"{where}: the wrong range {a['range']!r} must be [low, high] outside {right}")
        else:
            problems.append(f"{where}: an answer must be a 'value', a 'range' or the 'default', got {sorted(a)}")
    return problems


def _jupyterquiz_parts(questions: list[dict[str, Any]], shuffle_answers: bool) -> tuple[str, str]:
    """jupyterquiz's own HTML (container and styles) and JavaScript for ``questions``."""
    try:
        from jupyterquiz import display_quiz
    except ImportError as error:  # an optional dependency: the book's extra
        raise ImportError("helpers.viz.quiz needs jupyterquiz: pip install jupyterquiz "
                          "(it is in the package's 'book' extra)") from error
    module = sys.modules[display_quiz.__module__]
    shown: list[Any] = []
    original = getattr(module, "display", None)
    if original is None:
        raise RuntimeError(f"this jupyterquiz ({module.__name__}) no longer shows its output with "
                           "IPython's display(): helpers.viz.quiz needs updating")
    module.display = lambda *objects, **_: shown.extend(objects)  # collect instead of showing
    try:
        display_quiz(questions, shuffle_answers=shuffle_answers, colors=dict(PALETTE))
    finally:
        module.display = original
    if len(shown) != 2 or not all(isinstance(getattr(o, "data", None), str) for o in shown):
        raise RuntimeError(f"jupyterquiz showed {len(shown)} outputs instead of its HTML and its script: "
                           "helpers.viz.quiz needs updating")
    return shown[0].data, shown[1].data


class Quiz:
    """A self-check quiz, displayed as one HTML output (its scripts and styles inline).

    Attributes:
        questions: The questions, in jupyterquiz's format (see :func:`quiz_problems`), with the
            glued values formatted in (:func:`helpers.viz.fill_glued`).
        shuffle_answers: Whether each visit shows the choices of a question in a new order.
        glued: The run's values the questions name, key -> value.
    """

    def __init__(self, questions: list[dict[str, Any]], shuffle_answers: bool = True, *,
                 glued: dict[str, Any] | None = None) -> None:
        self.glued = dict(glued or {})
        questions = fill_glued(questions, self.glued)
        problems = quiz_problems(questions)
        if problems:
            raise ValueError("questions is not a valid quiz:\n" + "\n".join(problems))
        self.questions = questions
        self.shuffle_answers = shuffle_answers

    def _repr_html_(self) -> str:
        try:
            container, script = _jupyterquiz_parts(self.questions, self.shuffle_answers)
        except ImportError:  # without jupyterquiz (a bare install of the package): the questions, to read
            return self._static_html()
        match = _DIV.match(container)
        if match is None:
            raise RuntimeError("jupyterquiz's container is not the <div id=...> helpers.viz.quiz expects")
        quiz_id = match.group(1)
        # The container gets its id (and jupyterquiz starts) only when the page's MathJax is ready.
        container = f'<div data-book-quiz="{quiz_id}" class="book-quiz" ' + container[match.end():]
        script = _CDN_MATHJAX.sub("'data:text/javascript,'", script)  # never reached (see _SCRIPT)
        script = re.sub(r"\bMathJax\b", "BookQuizMathJax", script)  # jupyterquiz's MathJax: see _SCRIPT
        script += _SCRIPT % {"id": quiz_id, "count": len(self.questions)}
        dark = " ".join(f"{name}: {value};" for name, value in DARK_PALETTE.items())
        css = _CSS % {"id": quiz_id, "dark": dark, "correct": PALETTE["--jq-correct-color"],
                      "incorrect": PALETTE["--jq-incorrect-color"]}
        script = script.replace("</", "<\\/")  # nothing in it may end the <script> element early
        values = ""
        if self.glued:  # the run's values, for an edition that shows its own questions (book/_ext/editions_zh.py)
            blob = json.dumps(self.glued, sort_keys=True,  # NumPy scalars as Python numbers
                              default=lambda v: v.item() if hasattr(v, "item") else str(v)).replace("</", "<\\/")
            values = f'<script type="application/json" class="book-quiz-glued">{blob}</script>'
        return f"{container}</div>{css}<script>{script}</script>{values}"

    def _static_html(self) -> str:
        items = "".join(f"<li><p>{q['question']}</p>"
                        + ("<ul>" + "".join(f"<li>{a['answer']}</li>" for a in q["answers"]) + "</ul>"
                           if q["type"] == "multiple_choice" else "<p><em>(a number)</em></p>") + "</li>"
                        for q in self.questions)
        return (f'<div class="book-quiz-static"><ol>{items}</ol><p>To answer these here and see why each answer '
                "is right or wrong, install jupyterquiz (<code>pip install jupyterquiz</code>) and run the cell "
                "again, or take the quiz on the book's site.</p></div>")

    def __repr__(self) -> str:
        lines = [f"Quiz: {len(self.questions)} questions (shown in a notebook or on the book's site)"]
        lines += [f"{i + 1}. {html.unescape(re.sub(r'<[^>]+>', '', q['question']))}"
                  for i, q in enumerate(self.questions)]
        return "\n".join(lines)


def quiz(path: str | Path, digest: str | None = None, *, glued: dict[str, Any] | None = None,
         shuffle_answers: bool = True) -> Quiz:
    """A chapter's self-check quiz, read from its JSON file, for display in a notebook or page.

    Multiple-choice and numeric questions with feedback on every answer, answered in the browser
    without a kernel (rendered by jupyterquiz). Every chapter of the book ends with one; see the
    module's docstring for what this adds to jupyterquiz (a self-contained page, a palette for
    colour-blind readers and dark mode, labelled inputs).

    Args:
        path: The quiz file, e.g. ``"../quizzes/ch03.json"`` from a chapter's folder.
        digest: The file's :func:`quiz_digest`, as written in the page. A page that names it
            re-executes when the quiz changes (the notebook cache only sees the page's code).
        glued: The run's values that the quiz's text names as ``{glue:text}`key:format```
            (:func:`helpers.viz.fill_glued`): a result stated in a feedback comes from the page's own run.
        shuffle_answers: Whether each visit shows the choices in a new order.

    Returns:
        A :class:`Quiz`; left last in a cell, it shows the questions (where jupyterquiz is not
        installed, as a list to read, with a note on how to answer them).

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ValueError: If the file is not a valid quiz (see :func:`quiz_problems`), its digest is
            not ``digest``, or ``glued`` does not give exactly the values it names.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no quiz file at {path} (from {Path.cwd()}); the quizzes are in the book's "
                                "repository (book/quizzes), and on the book's site")
    if digest is not None and quiz_digest(path) != digest:
        raise ValueError(f"digest: {path} has digest {quiz_digest(path)!r}, the page names {digest!r}; "
                         "write the new digest in the page's quiz cell")
    try:
        questions = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"path: {path} is not valid JSON ({error})") from None
    problems = quiz_problems(fill_glued(questions, dict(glued or {})))
    if problems:
        raise ValueError(f"path: {path} is not a valid quiz:\n" + "\n".join(problems))
    return Quiz(questions, shuffle_answers=shuffle_answers, glued=glued)
