"""Checkers for the long-context exercises of chapter 6 ("Long context in practice"), in
``notebooks/06-memory-position-lab.ipynb`` (exercises 7 to 9).

Like :mod:`helpers.exercises.ch06_memory`, each checker runs the reader's function under
:func:`helpers.exercises.reader.call_watched` (every function of the package is refused, by whatever
route, except the few an exercise names; so is transformers), draws its inputs afresh at every call
(:func:`helpers.exercises.reader.fresh_generator`), computes its reference outside the watch, and
names the typical mistakes.

- :func:`check_position_interpolation`: RoPE with position interpolation (Chen et al., 2023,
  section 2.3, Eq. 4: position ``m`` rotated as ``m L / L'``), against the rotation with the
  frequencies of :func:`helpers.rope_scaling.position_interpolation`; names the factor inverted,
  only some pairs scaled, the cosines and sines scaled instead of the angle, positions off by one,
  the lengths off by one, positions rounded to integers, no scaling at all.
- :func:`check_sink_prediction`: which caches keep a small RoPE model working past its window
  (full, window only, window + sinks), recorded with :func:`predict` before the run of
  :func:`helpers.experiments.attention_sinks.sink_runs`; one of the runs is trained again, then the
  measured answer is compared with the prediction and explained.
- :func:`check_rolling_cache`: the memory of a rolling (sliding-window) KV cache in GiB, on
  Mistral 7B's shape and on shapes drawn afresh; names the missing factor 2, the missing layers,
  query heads instead of key/value heads, a cache not capped at the window (or always at it),
  bytes, MiB, GB or bits instead of GiB, a fixed element size.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from ``helpers.exercises.catalogue.ch06_long_context``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.catalogue.ch06_long_context import MESSAGES  # noqa: F401 (registers its messages)
from helpers.exercises.guard import TRANSFORMERS
from helpers.exercises.messages import phrase
from helpers.exercises.predictions import predict, recorded, reveal
from helpers.exercises.reader import (
    as_tensor,
    call_watched,
    checker,
    fresh_generator,
    fresh_int,
)
from helpers.positional import apply_rotary_pos_emb, rotate_half

__all__ = ["check_position_interpolation", "check_sink_prediction", "check_rolling_cache", "predict",
           "SINK_CACHES", "CACHE_CHOICES", "WORKING_DROP", "MISTRAL_7B"]

SINK_CACHES = "ch06_long_context.sink_caches"
"""The key under which exercise 8's prediction is recorded — ``lc.predict(lc.SINK_CACHES, [...])``."""

CACHE_CHOICES = ("full", "window", "sinks")
"""The caches of exercise 8 — the full cache, the window only, the window with 4 sinks (``"sinks=4"``)."""

WORKING_DROP = 0.1
"""A cache "keeps the model working" past the window when its accuracy on the predictable tokens, once
the cache is full, is at most this much below the model's accuracy inside its training length."""

MISTRAL_7B = dict(num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128, window=4096, seq_len=32768,
                  bytes_per_value=2)
"""Mistral 7B's shape at 32k tokens in 16-bit values.

Jiang et al. (2023), "Mistral 7B", section 2 and Table 1 — 32 layers, 32 query heads, 8 key/value heads, head
dimension 128, a sliding window of 4096 tokens."""


# ----------------------------------------------------------------------------------------------
# Exercise 7: position interpolation
# ----------------------------------------------------------------------------------------------

_PI_TOL = 2e-3
"""Float32 angles of positions up to ~2000 are off by ~1e-4 rad: the tolerance of exercise 7."""

_PI_ALLOWED = (rotate_half, apply_rotary_pos_emb)
"""What a PI rotation may call: the rotation of pairs by given cosines and sines (exercise 3's part),
not the package's frequencies (``helpers.rope_scaling``) nor its rotary modules."""


def _rotate(x: Tensor, angle: Tensor) -> Tensor:
    """Half-split rotation of ``x`` ``(..., L, E)`` by ``angle`` ``(L, E/2)``, in float64."""
    cos, sin = angle.cos(), angle.sin()  # (L, E/2)
    x1, x2 = x.double().chunk(2, dim=-1)  # (..., L, E/2) each: feature i pairs with i + E/2
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def _theta(head_dim: int) -> Tensor:
    return 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (E/2,)


def _pi_rotation(x: Tensor, positions: Tensor, train_len: int, target_len: int) -> Tensor:
    """Position interpolation in float64: position ``m`` rotated as ``m * train_len / target_len``."""
    return _rotate(x, (positions.double() * train_len / target_len)[:, None] * _theta(x.shape[-1]))


def _pi_mistakes(x: Tensor, positions: Tensor, train_len: int, target_len: int) -> list[tuple[Tensor, str]]:
    """The outputs of the named mistakes, with their message keys (pairs scaled in part are found apart)."""
    theta = _theta(x.shape[-1])
    scale = train_len / target_len
    m = positions.double()
    plain = _rotate(x, m[:, None] * theta)
    return [
        (_rotate(x, (m / scale)[:, None] * theta), "ch06_long_context.pi.inverted"),
        (plain, "ch06_long_context.pi.unscaled"),
        (plain * scale, "ch06_long_context.pi.after_trig"),
        (plain / scale, "ch06_long_context.pi.after_trig"),
        (_rotate(x, ((m + 1) * scale)[:, None] * theta), "ch06_long_context.pi.off_by_one"),
        (_rotate(x, ((m - 1) * scale)[:, None] * theta), "ch06_long_context.pi.off_by_one"),
        (_rotate(x, (m * (train_len - 1) / (target_len - 1))[:, None] * theta), "ch06_long_context.pi.lengths"),
        (_rotate(x, torch.floor(m * scale)[:, None] * theta), "ch06_long_context.pi.rounded"),
        (_rotate(x, torch.round(m * scale)[:, None] * theta), "ch06_long_context.pi.rounded"),
    ]


def _close(a: Tensor, b: Tensor, tol: float) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=1e-4, atol=tol))


def _scaled_pairs(out: Tensor, x: Tensor, positions: Tensor, train_len: int, target_len: int) -> tuple[int, int]:
    """How many pairs are rotated with the interpolated angle and how many with the plain one, when every
    pair is one or the other; ``(0, 0)`` otherwise."""
    half = x.shape[-1] // 2
    right = _pi_rotation(x, positions, train_len, target_len)
    plain = _rotate(x, positions.double()[:, None] * _theta(x.shape[-1]))
    scaled = unscaled = 0
    for i in range(half):
        pick = [i, i + half]
        if _close(out[..., pick], right[..., pick], _PI_TOL):
            scaled += 1
        elif _close(out[..., pick], plain[..., pick], _PI_TOL):
            unscaled += 1
        else:
            return 0, 0
    return scaled, unscaled


def _pi_cases(gen: torch.Generator) -> list[tuple[Tensor, Tensor, int, int]]:
    """Fresh (x, positions, train_len, target_len): an integer factor, then a fractional one; positions in
    any order up to the target length, the last one and 0 always among them."""
    cases = []
    for kind in ("integer", "fraction"):
        train_len = fresh_int(16, 256, gen)
        target_len = train_len * fresh_int(2, 8, gen) if kind == "integer" else \
            train_len + fresh_int(train_len // 3, 3 * train_len, gen)
        length = fresh_int(4, 9, gen)
        positions = torch.randint(0, target_len, (length,), generator=gen)
        last, zero = torch.randperm(length, generator=gen)[:2].tolist()
        positions[last] = target_len - 1
        # position 0 too: every rule rotates it by nothing, an off-by-one does not, so integer division or
        # rounding is never mistaken for an off-by-one (drawn positions that all leave the same remainder
        # by an integer factor made floor(m / k) equal (m - 1) / k at every one of them)
        positions[zero] = 0
        shape = (fresh_int(1, 2, gen), fresh_int(1, 3, gen), length, 2 * fresh_int(4, 16, gen))
        cases.append((torch.randn(*shape, generator=gen), positions, train_len, target_len))
    return cases


@checker
def check_position_interpolation(fn: Callable[[Tensor, Tensor, int, int], Tensor], *,
                                 language: str | None = None) -> CheckResult:
    """Check ``fn(x, positions, train_len, target_len)``: RoPE (half-split, base 10000) with position interpolation.

    Position interpolation (Chen et al., 2023, section 2.3, Eq. 4) rotates the token at position ``m``
    as plain RoPE rotates position ``m * train_len / target_len``: every angle of the longer context
    stays inside the trained range. ``x`` is ``(B, H, L, E)``, ``positions`` an integer tensor
    ``(L,)`` up to ``target_len - 1``; head dims, lengths, factors (integer and fractional) and
    positions are drawn afresh at every call. The reference is the rotation, in float64, by the
    frequencies of :func:`helpers.rope_scaling.position_interpolation` (the same numbers: tested).
    While ``fn`` runs the package is refused (``helpers.rope_scaling`` and the rotary modules among
    it) except ``rotate_half`` and ``apply_rotary_pos_emb``, and so is transformers (its
    ``ROPE_INIT_FUNCTIONS`` and rotary classes).

    Args:
        fn: The reader's interpolated rotation.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake, e.g. the factor inverted, only some pairs scaled, the
        cosines and sines scaled instead of the angle, a position off by one, rounded positions.
    """
    gen = fresh_generator()
    for x, positions, train_len, target_len in _pi_cases(gen):
        result = call_watched(fn, x.clone(), positions.clone(), train_len, target_len, allowed=_PI_ALLOWED,
                              forbidden=TRANSFORMERS, language=language)
        out = as_tensor(result, phrase("ch06_long_context.what.rotated"), language).detach()
        right = _pi_rotation(x, positions, train_len, target_len)
        if _close(out, right, _PI_TOL):
            continue
        where = phrase("ch06_long_context.pi.where", e=x.shape[-1], train_len=train_len, target_len=target_len)
        if out.shape != right.shape:
            return CheckResult.of(False, "ch06_long_context.pi.shape", language, where=where,
                                  expected=tuple(right.shape), got=tuple(out.shape))
        for wrong, key in _pi_mistakes(x, positions, train_len, target_len):
            if _close(out, wrong, _PI_TOL):
                return CheckResult.of(False, key, language, where=where, train_len=train_len,
                                      target_len=target_len)
        scaled, unscaled = _scaled_pairs(out, x, positions, train_len, target_len)
        if scaled and unscaled:
            return CheckResult.of(False, "ch06_long_context.pi.some_pairs", language, where=where, scaled=scaled,
                                  pairs=scaled + unscaled)
        return CheckResult.of(False, "ch06_long_context.pi.differs", language, where=where,
                              diff=(out.double() - right).abs().max().item())
    return CheckResult.of(True, "ch06_long_context.pi.passed", language)


# ----------------------------------------------------------------------------------------------
# Exercise 8: which cache keeps the model working past the window (attention sinks)
# ----------------------------------------------------------------------------------------------

_KIND = {"full": "full", "window": "window", "sinks": "sinks=4"}
"""The run's cache kind (:data:`helpers.experiments.attention_sinks.KINDS`) behind each choice."""


_RERUNS: dict[tuple[Any, int], Any] = {}
"""The checker's own runs of exercise 8, by (config, seed): what the reader's runs are compared with."""


def _working(run: Any) -> dict[str, bool]:
    inside = run.in_length_accuracy["full"]
    return {choice: run.mean_accuracy[kind] >= inside - WORKING_DROP for choice, kind in _KIND.items()}


def _same_run(a: Any, b: Any) -> bool:
    def close(u: Sequence[float], v: Sequence[float]) -> bool:
        return len(u) == len(v) and all(
            (math.isnan(p) and math.isnan(q)) or abs(p - q) <= 1e-6 for p, q in zip(u, v))

    try:
        return (a.bins == b.bins and close(a.sink_weight, b.sink_weight)
                and all(close(a.accuracy[k], b.accuracy[k]) and close(a.loss[k], b.loss[k])
                        and close([a.mean_accuracy[k], a.mean_loss[k], a.in_length_accuracy[k]],
                                  [b.mean_accuracy[k], b.mean_loss[k], b.in_length_accuracy[k]])
                        for k in b.mean_accuracy))
    except (AttributeError, KeyError, TypeError):
        return False


@checker
def check_sink_prediction(runs: list[Any], config: Any, *, language: str | None = None) -> CheckResult:
    """Compare the recorded prediction of which caches keep the model working past the window with the run.

    The prediction is the list recorded with ``predict(SINK_CACHES, [...])`` before this call: the
    names of :data:`CACHE_CHOICES` (``"full"``, ``"window"``, ``"sinks"``: the window with 4 sinks) the
    reader expects to keep working, possibly none. Without one the checker refuses and shows nothing; a
    prediction recorded after the result was shown is refused as such. ``runs`` is what
    ``helpers.experiments.attention_sinks.sink_runs(config, seeds=...)`` returned: one of them, drawn
    afresh, is trained and decoded again with ``config`` (once per setting and seed in a session) and must
    come out the same (runs that training did not produce are refused). A cache keeps the model working
    when its accuracy on the predictable tokens, once the cache is full, is at most :data:`WORKING_DROP`
    below the full cache's accuracy inside the training length, in the re-run. The settings must decode
    past the training length (``decode_factor >= 2``) with a cache smaller than it, and the model must
    have learned the task inside its length (accuracy at least 0.8).

    Args:
        runs: The :class:`~helpers.experiments.attention_sinks.SinkRun` list.
        config: The :class:`~helpers.experiments.attention_sinks.SinkConfig` it was made with.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        Passes when the prediction was recorded in time and is right; the message shows the measured
        accuracies and losses and explains each cache's outcome.
    """
    from helpers.experiments import attention_sinks as sinks

    if not isinstance(runs, list) or not runs or not all(isinstance(r, sinks.SinkRun) for r in runs):
        return CheckResult.of(False, "ch06_long_context.sinks.not_runs", language, got=type(runs).__name__)
    if not isinstance(config, sinks.SinkConfig):
        return CheckResult.of(False, "ch06_long_context.sinks.not_config", language, got=type(config).__name__)
    if config.decode_factor < 2 or config.cache_size >= config.train_length:
        return CheckResult.of(False, "ch06_long_context.sinks.unfair", language, decode_factor=config.decode_factor,
                              cache_size=config.cache_size, train_length=config.train_length)
    prediction = recorded(SINK_CACHES)
    if prediction is None:
        return CheckResult.of(False, "ch06_long_context.sinks.no_prediction", language,
                              choices=str(list(CACHE_CHOICES)))
    predicted = prediction.value
    if (not isinstance(predicted, (list, tuple, set, frozenset)) or not all(isinstance(p, str) for p in predicted)
            or not set(predicted) <= set(CACHE_CHOICES) or len(set(predicted)) != len(list(predicted))):
        return CheckResult.of(False, "ch06_long_context.sinks.bad_prediction", language,
                              choices=str(list(CACHE_CHOICES)), got=repr(predicted))
    gen = fresh_generator()
    run = runs[fresh_int(0, len(runs) - 1, gen)]
    key = (config, run.seed)
    if key not in _RERUNS:  # trained once per setting and seed in a session: checking again costs nothing
        try:
            _RERUNS[key] = sinks.sink_runs(config, seeds=(run.seed,))[0]
        except (TypeError, ValueError) as error:
            return CheckResult.of(False, "ch06_long_context.sinks.not_config", language, got=f"{config!r}: {error}")
    again = _RERUNS[key]
    if not _same_run(run, again):
        return CheckResult.of(False, "ch06_long_context.sinks.not_reproduced", language, seed=run.seed)
    inside = again.in_length_accuracy["full"]
    if inside < 0.8:
        return CheckResult.of(False, "ch06_long_context.sinks.untrained", language, accuracy=inside,
                              steps=config.steps)
    reveal(SINK_CACHES)
    works = _working(again)
    measured = [c for c in CACHE_CHOICES if works[c]]
    acc = {c: again.mean_accuracy[_KIND[c]] for c in CACHE_CHOICES}
    loss = {c: again.mean_loss[_KIND[c]] for c in CACHE_CHOICES}
    parts = [phrase("ch06_long_context.sinks.sink_weight", weight=again.sink_weight[0])]
    parts += [phrase(f"ch06_long_context.sinks.{c}_{'works' if works[c] else 'fails'}", accuracy=acc[c],
                    inside=inside, train_length=config.train_length, cache_size=config.cache_size)
             for c in CACHE_CHOICES]
    if works["window"] and works["sinks"]:
        parts.append(phrase("ch06_long_context.sinks.loss_lower" if loss["sinks"] < loss["window"]
                            else "ch06_long_context.sinks.loss_not_lower",
                            window=loss["window"], sinks=loss["sinks"]))
    explanation = {lang: ("" if lang == "zh" else " ").join(p[lang] for p in parts) for lang in parts[0]}
    fields = dict(predicted=str(sorted(predicted, key=CACHE_CHOICES.index)), measured=str(measured),
                  explanation=explanation, seed=run.seed, cache_size=config.cache_size,
                  length=config.decode_factor * config.train_length, drop=WORKING_DROP)
    if prediction.late:
        return CheckResult.of(False, "ch06_long_context.sinks.late", language, **fields)
    if set(predicted) == set(measured):
        return CheckResult.of(True, "ch06_long_context.sinks.right", language, **fields)
    return CheckResult.of(False, "ch06_long_context.sinks.wrong", language, **fields)


# ----------------------------------------------------------------------------------------------
# Exercise 9: the memory of a rolling cache
# ----------------------------------------------------------------------------------------------

_GIB = 2**30


def _rolling_formula(num_layers: int, num_heads: int, num_kv_heads: int, head_dim: int, window: int,
                     seq_len: int, bytes_per_value: int) -> float:
    return 2 * num_layers * num_kv_heads * head_dim * min(seq_len, window) * bytes_per_value / _GIB


def _rolling_configs(gen: torch.Generator) -> list[dict[str, int]]:
    """Mistral 7B's shape, then made-up models: fresh layers, heads (the key/value heads divide them),
    head dims, windows, lengths (shorter and longer than the window) and element sizes (1 and 4 bytes among them)."""
    configs = [dict(MISTRAL_7B)]
    # 1 and 4 bytes among the made-up models: with 2 bytes everywhere (Mistral's), a fixed 2 would pass
    sizes = [(1, 4, (1, 2, 4)[fresh_int(0, 2, gen)], (1, 2, 4)[fresh_int(0, 2, gen)])[i]
             for i in torch.randperm(4, generator=gen).tolist()]
    for longer, size in zip((True, False, True, True), sizes):
        kv_heads = fresh_int(1, 16, gen)
        window = fresh_int(2, 16_384, gen)
        seq_len = window + fresh_int(1, 100_000, gen) if longer else fresh_int(1, window - 1, gen)
        configs.append(dict(num_layers=fresh_int(2, 96, gen), num_heads=kv_heads * fresh_int(2, 8, gen),
                            num_kv_heads=kv_heads, head_dim=16 * fresh_int(1, 16, gen), window=window,
                            seq_len=seq_len, bytes_per_value=size))
    return configs


_ROLLING_MISTAKES: tuple[tuple[Callable[[float, dict[str, int]], float], str], ...] = (
    (lambda r, c: r / 2, "one_of_two"),
    (lambda r, c: r / c["num_layers"], "one_layer"),
    (lambda r, c: r * c["num_heads"] / c["num_kv_heads"], "query_heads"),
    (lambda r, c: r * c["seq_len"] / min(c["seq_len"], c["window"]), "not_capped"),
    (lambda r, c: r * c["window"] / min(c["seq_len"], c["window"]), "always_window"),
    (lambda r, c: r * _GIB, "bytes"),
    (lambda r, c: r * 1024, "mib"),
    (lambda r, c: r * _GIB / 1e9, "gb"),
    (lambda r, c: r * 8, "bits"),
    (lambda r, c: r / c["bytes_per_value"] * 2, "fixed_bytes"),
    (lambda r, c: r / c["bytes_per_value"], "elements"),
)


@checker
def check_rolling_cache(fn: Callable[[int, int, int, int, int, int, int], float], *,
                        language: str | None = None) -> CheckResult:
    """Check ``fn(num_layers, num_heads, num_kv_heads, head_dim, window, seq_len, bytes_per_value) -> GiB``.

    The memory, in GiB (2**30 bytes), of the keys and values held by a rolling cache of ``window``
    slots (Mistral 7B's rolling buffer: token ``i`` in slot ``i mod window``) after ``seq_len`` tokens of
    one sequence. Compared with the checker's own formula on Mistral 7B's shape at 32k tokens
    (:data:`MISTRAL_7B`) and on made-up shapes drawn afresh at every call, texts shorter and longer
    than the window among them; the package is refused while ``fn`` runs.

    Args:
        fn: The reader's formula.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names the mistake (keys or values only, one layer, query heads, not capped at
        the window, always the whole window, bytes / MiB / GB / bits instead of GiB, a fixed element size)
        and, when right, gives Mistral 7B's rolling and full cache at 32k tokens.
    """
    configs = _rolling_configs(fresh_generator())
    right = [_rolling_formula(**c) for c in configs]
    got = []
    for config in configs:
        result = call_watched(fn, *config.values(), language=language)
        if isinstance(result, Tensor) and result.numel() == 1:
            result = result.item()
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return CheckResult.of(False, "ch06_long_context.rolling.not_number", language,
                                  type=type(result).__name__, value=repr(result))
        got.append(float(result))
    if all(math.isclose(g, r, rel_tol=1e-6) for g, r in zip(got, right)):
        full = _rolling_formula(**dict(MISTRAL_7B, window=MISTRAL_7B["seq_len"]))
        return CheckResult.of(True, "ch06_long_context.rolling.passed", language, rolling=right[0], full=full,
                              ratio=full / right[0], seq_len=MISTRAL_7B["seq_len"], window=MISTRAL_7B["window"])
    for wrong, mistake in _ROLLING_MISTAKES:
        if all(math.isclose(g, wrong(r, c), rel_tol=1e-6) for g, r, c in zip(got, right, configs)):
            return CheckResult.of(False, f"ch06_long_context.rolling.{mistake}", language)
    if math.isclose(got[0], right[0], rel_tol=1e-6):
        return CheckResult.of(False, "ch06_long_context.rolling.table", language)
    for g, r, c in zip(got, right, configs):
        if not math.isclose(g, r, rel_tol=1e-6):
            return CheckResult.of(False, "ch06_long_context.rolling.wrong", language, expected=r, got=g,
                                  config=", ".join(f"{k}={v}" for k, v in c.items()))
    raise AssertionError("unreachable")  # pragma: no cover
