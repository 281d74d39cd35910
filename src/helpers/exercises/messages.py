"""The checkers' messages in every language of the book: one catalogue, keyed by message and language.

A checker never writes its sentences inline: it names a message of the catalogue and the values to
put in it (``CheckResult.of(False, "ch04.split.not_moved", language, shape=(2, 5, 3, 4))``), and
the catalogue renders the sentence in the reader's language. A verdict keeps its key and values,
so it can be rendered again in another language (:meth:`helpers.exercises.CheckResult.in_language`);
the Chinese edition of the site does that to the verdicts stored in the notebook cache, whose
outputs are shared by both editions (``book/_ext/editions.py``).

Languages are ``"en"`` (the default: English callers see exactly the messages they always did)
and ``"zh"`` (Simplified Chinese). Which one a checker uses, first match wins:

1. its ``language`` argument, which the decorator :func:`helpers.exercises.reader.checker` puts in
   force for everything the checker renders (:func:`.speaking`): no checker passes it on by hand;
2. :func:`.set_language` (e.g. ``helpers.exercises.set_language("zh")`` in a notebook);
3. the environment variable ``HELPERS_LANGUAGE``;
4. the notebook the kernel runs: a notebook of the Chinese edition (under ``zh/notebooks/`` or
   ``zh/book/``) is read in Chinese. Jupyter Server tells a kernel its notebook's path
   (``JPY_SESSION_NAME``); a kernel also starts in its notebook's folder (the working directory);
5. ``"en"``.

Messages of a chapter's checkers live in ``helpers.exercises.catalogue`` (``MESSAGES`` of
``catalogue/chNN.py``, registered with :func:`.register` when the checker module imports it); the
messages every checker shares (the verdict's prefix, the reader's function failing, an answer
that calls the package) live here. A message missing in a language falls back
to English, and ``tests/test_editions.py`` lists the keys a language still lacks.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..language import LANGUAGES, get_language, resolve_language, set_language

__all__ = ["LANGUAGES", "CATALOGUE", "register", "phrase", "text", "joined", "quoted", "speaking", "resolve_language",
           "set_language", "get_language", "portable_fields"]

_SPEAKING: ContextVar[str | None] = ContextVar("helpers_exercises_language", default=None)
"""The language of the checker that is running (:func:`.speaking`), if any."""


@contextmanager
def speaking(language: str | None) -> Iterator[str]:
    """Within the block, a message rendered without a language is rendered in ``language``.

    Args:
        language: ``"en"``, ``"zh"``, or ``None`` for :func:`.get_language`.

    Yields:
        The language in force.

    Raises:
        ValueError: ``language`` is not one of :data:`.LANGUAGES`.
    """
    token = _SPEAKING.set(resolve_language(language))
    try:
        yield _SPEAKING.get() or LANGUAGES[0]
    finally:
        _SPEAKING.reset(token)


def _language(language: str | None) -> str:
    """``language`` if given, else the running checker's (:func:`.speaking`), else :func:`.get_language`."""
    return resolve_language(_SPEAKING.get() if language is None else language)


CATALOGUE: dict[str, dict[str, str]] = {}
"""``key -> {language — template}``; a template is a ``str.format`` string with named fields."""

def register(messages: Mapping[str, Mapping[str, str]]) -> None:
    """Adds a module's messages to the catalogue.

    Args:
        messages: ``{key: {language: template}}``; every key has an English template and its
            prefix names the module that registers it (``"ch04.split.not_moved"`` comes from
            :mod:`helpers.exercises.ch04`), so that a key can be found from a stored verdict.

    Raises:
        ValueError: A message has no English template, or names a language not in
            :data:`~helpers.language.LANGUAGES`.
    """
    for key, templates in messages.items():
        if LANGUAGES[0] not in templates:
            raise ValueError(f"messages: {key!r} has no {LANGUAGES[0]!r} template")
        unknown = set(templates) - set(LANGUAGES)
        if unknown:
            raise ValueError(f"messages: {key!r} names unknown languages {sorted(unknown)}; known: {LANGUAGES}")
        CATALOGUE[key] = dict(templates)


def _templates(key: str) -> dict[str, str]:
    if key not in CATALOGUE and "." in key:  # a stored verdict's key: its module registers it on import
        try:
            importlib.import_module(f"{__package__}.{key.split('.', 1)[0]}")
        except ImportError:
            pass
    if key not in CATALOGUE:
        raise KeyError(f"key: no message {key!r} in the checkers' catalogue")
    return CATALOGUE[key]


def _localised(value: Any, language: str) -> Any:
    """A field's value in ``language``: a phrase given as ``{language: text}`` is picked, the rest kept."""
    if isinstance(value, Mapping) and LANGUAGES[0] in value:
        return value.get(language, value[LANGUAGES[0]])
    return value


def portable_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a message as JSON can store them (what a rendered verdict carries in its HTML).

    Args:
        fields: The values of a message's fields.

    Returns:
        The same fields with numbers, strings, booleans, ``None`` and phrases (``{language: text}``)
        kept, and anything else (a shape, a tensor size, a type) replaced by its ``str()``.
    """
    def portable(value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, Mapping) and LANGUAGES[0] in value:
            return {str(k): str(v) for k, v in value.items()}
        return str(value)

    return {name: portable(value) for name, value in fields.items()}


def phrase(key: str, /, **fields: Any) -> dict[str, str]:
    """A message rendered in every language, ``{language: sentence}``: a field of another message,
    which :func:`.text` then renders in that message's language (e.g. what a checker expected, "the
    heads, shape (B, H, L, E)", inside "returned None: return {what}").

    Args:
        key: The message's key.
        **fields: The values of its template's named fields.

    Returns:
        ``{language: sentence}`` for every language of :data:`~helpers.language.LANGUAGES`.
    """
    return {language: text(key, language, **fields) for language in LANGUAGES}


def text(key: str, language: str | None = None, /, **fields: Any) -> str:
    """A message of the catalogue, rendered in ``language``.

    Args:
        key: The message's key, e.g. ``"reader.returned_none"``.
        language: ``"en"``, ``"zh"``, or ``None``: the running checker's (:func:`.speaking`), else
            :func:`.get_language`.
        **fields: The values of the template's named fields; a value given as
            ``{"en": ..., "zh": ...}`` (a phrase) is rendered in ``language`` too.

    Returns:
        The sentence (the English one where the language has no template for ``key``).

    Raises:
        KeyError: ``key`` is not in the catalogue.
        ValueError: ``language`` is not one of :data:`~helpers.language.LANGUAGES`.
    """
    language = _language(language)
    templates = _templates(key)
    template = templates.get(language, templates[LANGUAGES[0]])
    return template.format(**{name: _localised(value, language) for name, value in fields.items()})


_SEPARATORS = {"clauses": {"en": "; ", "zh": "；"}, "list": {"en": ", ", "zh": "，"}}


def joined(parts: Sequence[tuple[str, Mapping[str, Any]]], separator: str = "clauses") -> dict[str, str]:
    """Several messages ``(key, fields)`` joined into one phrase, in every language.

    Args:
        parts: The messages.
        separator: ``"clauses"`` (``"; "``) or ``"list"`` (``", "``), each in its language's punctuation.

    Returns:
        ``{language: text}``.
    """
    return {language: _SEPARATORS[separator][language].join(text(key, language, **fields) for key, fields in parts)
            for language in LANGUAGES}


def quoted(verdict: Any) -> dict[str, str]:
    """A verdict's message in every language, to quote inside another message (a Chinese one without its
    final full stop, which the sentence around it supplies).

    Args:
        verdict: A :class:`~helpers.exercises.CheckResult`.

    Returns:
        ``{language: text}``.
    """
    return {language: verdict.in_language(language).message.rstrip("" if language == LANGUAGES[0] else "。")
            for language in LANGUAGES}


register({
    # The verdict's prefix (CheckResult.__str__).
    "verdict.passed": {"en": "✅ Correct: ", "zh": "✅ 正确："},
    "verdict.failed": {"en": "❌ Not yet: ", "zh": "❌ 还不对："},
    # helpers.exercises.reader: the reader's function failed, or returned the wrong kind of thing.
    "reader.not_callable": {
        "en": "expected a function, got {type}: pass the function itself, e.g. check(my_function), not "
              "check(my_function(...))",
        "zh": "这里要的是一个函数，收到的却是 {type}：请把函数本身传进来，例如 check(my_function)，"
              "而不是 check(my_function(...))"},
    "reader.stub": {
        "en": "{name} is still the stub (it raises NotImplementedError): write your answer in its body",
        "zh": "{name} 还是原来的空壳（它抛出 NotImplementedError）：请在函数体里写下你的答案"},
    "reader.stub_called": {
        "en": "your function calls {name}, which is still the stub (it raises NotImplementedError): write {name} "
              "first (its own exercise), then check this one again",
        "zh": "你的函数调用了 {name}，而它还是原来的空壳（抛出 NotImplementedError）：先写好 {name}"
              "（它有自己的练习），再检查这一题"},
    "reader.time_limit": {
        "en": "your function ran for more than {seconds:g} s and was stopped: look for a loop that never ends "
              "(the next check starts afresh)",
        "zh": "你的函数运行超过了 {seconds:g} 秒，已被停止：看看有没有永远不会结束的循环（下一次检查会重新开始）"},
    "reader.time_limit_stuck": {
        "en": "your function ran for more than {seconds:g} s and could not be stopped (does it catch every "
              "exception in a loop?): it goes on in the background; the next check starts afresh, but restart the "
              "kernel to free the processor",
        "zh": "你的函数运行超过了 {seconds:g} 秒，而且无法停止（它是不是在循环里捕获了所有异常？）：它仍在后台运行；"
              "下一次检查会重新开始，但请重启内核以释放处理器"},
    "cases.fresh": {
        "en": "right on the checker's named cases, but not on a fresh one (seed {seed}, drawn now, so that no table "
              "of answers passes): {verdict}",
        "zh": "在检查器的固定用例上正确，但在一个新抽取的用例上不对（种子 {seed}，现抽现用，"
              "使预先算好的答案表无法通过）：{verdict}"},
    "reader.raised": {
        "en": "your function raised {type}: {error}{hint}",
        "zh": "你的函数抛出了 {type}：{error}{hint}"},
    "reader.returned_none": {
        "en": "your function returned None: return the {what} (did you forget `return`?)",
        "zh": "你的函数返回了 None：请返回{what}（是不是忘了写 `return`？）"},
    "reader.not_a_tensor": {
        "en": "your function returned a {type}; return the {what} as a torch.Tensor",
        "zh": "你的函数返回的是 {type}；应返回 torch.Tensor 类型的{what}"},
    # helpers.exercises.guard: the answer calls the package's own version of what it should write.
    "guard.delegates": {
        "en": "your answer calls {name}, which this exercise asks you to write yourself: the checker compares "
              "your code with it, so calling it proves nothing.",
        "zh": "你的答案调用了 {name}，而这道练习要你自己写出它：检查器正是拿你的代码和它比较，调用它什么也证明不了。"},
    "guard.peeks": {
        "en": "your answer reads the checker's own frames or objects (sys._getframe, inspect.stack, "
              "gc.get_objects): the checker's expected result lies there; compute the answer instead.",
        "zh": "你的答案读取了检查器自己的栈帧或对象（sys._getframe、inspect.stack、gc.get_objects）："
              "检查器的期望结果就在那里；请自己算出答案。"},
    "reader.tensor_subclass": {
        "en": "your function returned a {type}, a subclass of torch.Tensor; return the {what} as a plain "
              "torch.Tensor (a subclass can change what comparing it means)",
        "zh": "你的函数返回的是 {type}，torch.Tensor 的子类；请以普通 torch.Tensor 返回{what}"
              "（子类可以改变比较的含义）"},
    "guard.tampers": {
        "en": "your answer switches off the checker's watch on the calls it makes (sys.settrace, sys.setprofile "
              "or threading.settrace): write the exercise instead.",
        "zh": "你的答案关掉了检查器对其调用的监视（sys.settrace、sys.setprofile 或 threading.settrace）："
              "请直接完成练习。"},
})
