"""Checkers for the exercises of chapter 2, "Why a dot product" (``notebooks/02-dot-product-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a transpose, a sign, a missing normalisation, a scale.

- :func:`check_dot_scores`: dot-product scores as one batched matrix product.
- :func:`check_dot_flops`: the operation count of ``Q K^T``.
- :func:`check_euclidean_scores`: Euclidean distance turned into a usable score.
- :func:`check_vectorised_cosine`: a looped cosine similarity, vectorised.
- :func:`check_why_additive_is_slower`: reading the measured cost table.
- :func:`check_cosine_bound`: predict, before a run, the most weight cosine scores can give one slot.
- :func:`check_temperature_ablation`: design the run that tells whether the cosine's trouble is
  its bounded range or its division by lengths.

A checker that compares the reader's code with a function of the package runs the reader's
code with that function switched off (:func:`helpers.exercises.guard.package_disabled`): an
answer that calls it fails, naming the function.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import fields
from typing import Any, Callable

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.guard import package_disabled
from helpers.exercises.reader import allclose, as_tensor, call_reader_function, reader_globals
from helpers.experiments import score_cost, score_learning
from helpers.experiments.recall import RecallConfig, train_recall
from helpers.scores import cosine_scores, dot_scores, neg_euclidean_scores, scaled_dot_scores
from helpers.train import num_threads

__all__ = [
    "check_dot_scores",
    "check_dot_flops",
    "check_euclidean_scores",
    "check_vectorised_cosine",
    "ADDITIVE_OPTIONS",
    "check_why_additive_is_slower",
    "looped_cosine_scores",
    "check_cosine_bound",
    "check_temperature_ablation",
]


def _inputs(*shapes: tuple[int, ...], seed: int = 0) -> list[Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=gen, dtype=torch.float64) for shape in shapes]





def _call_without(targets: tuple[Any, ...], fn: Any, *args: Any) -> tuple[Any, CheckResult | None]:
    """:func:`call_reader_function` with the package's own ``targets`` switched off: an answer that
    calls one of them gets a verdict naming it."""
    with package_disabled(*targets, namespaces=reader_globals(fn)):
        return call_reader_function(fn, *args)


_DOT = (dot_scores, scaled_dot_scores)
_FLOPS = (score_cost.score_flops, score_cost.flops_table)
_EUCLIDEAN = (neg_euclidean_scores,)
_COSINE = (cosine_scores,)
_BOUND = (score_learning.cosine_weight_bound,)


def _max_error(a: Tensor, b: Tensor) -> float:
    return float((a.double() - b.double()).abs().max())


# --------------------------------------------------------------------------------------------
# Exercise 1: dot-product scores as one batched matrix product
# --------------------------------------------------------------------------------------------


def check_dot_scores(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(query, key) -> scores``: every query against every key, ``q_i . k_j``.

    Tried on ``(B, H, L, E)`` queries and ``(B, H, S, E)`` keys with ``L != S``, then on plain
    ``(L, E)``/``(S, E)`` matrices (the same line of code must work for any number of leading
    dimensions). Compared with :func:`helpers.scores.dot_scores`, which the answer may not call
    (nor :func:`~helpers.scores.scaled_dot_scores`).

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (transposed result, wrong transpose, scale, batch mix-up).
    """
    query, key = _inputs((2, 3, 5, 8), (2, 3, 7, 8))
    expected = dot_scores(query, key)  # (2, 3, 5, 7)
    q2, k2 = _inputs((4, 6), (9, 6), seed=1)
    expected2 = dot_scores(q2, k2)  # (4, 9); the references first: the reader's code runs without them
    result, failure = _call_without(_DOT, fn, query, key)
    if failure is not None:
        text = failure.message
        if "size mismatch" in text or "must match" in text or "shapes cannot" in text or "dimension" in text:
            text += (". With (B, H, L, E) queries and (B, H, S, E) keys, transpose only the last two dimensions of "
                     "the key: key.transpose(-2, -1) is (B, H, E, S). key.T (or .t()) reverses every dimension.")
        return CheckResult(False, text)
    result, failure = as_tensor(result, "scores")
    if failure is not None:
        return failure
    if result.shape == expected.transpose(-2, -1).shape and allclose(result, expected.transpose(-2, -1)):
        return CheckResult(False, f"your scores have shape {tuple(result.shape)} = (B, H, S, L): you computed K Qᵀ. "
                                  "Rows must be queries and columns keys: query @ key.transpose(-2, -1).")
    if result.shape != expected.shape:
        return CheckResult(False, f"for query (2, 3, 5, 8) and key (2, 3, 7, 8) the scores must have shape "
                                  f"(B, H, L, S) = (2, 3, 5, 7), got {tuple(result.shape)}. Multiply query "
                                  "(..., L, E) by key.transpose(-2, -1) (..., E, S).")
    if allclose(result, expected / math.sqrt(query.size(-1))):
        return CheckResult(False, "your scores are divided by √E: that is the scaled dot product of chapter 3. "
                                  "Here we want the plain dot product q·k.")
    if not allclose(result, expected):
        mixed = query @ key.flip(0).transpose(-2, -1)
        if allclose(result, mixed) or allclose(result, query @ key.flip(1).transpose(-2, -1)):
            return CheckResult(False, "the scores pair queries with the keys of another batch element or head: "
                                      "keep the batch dimensions aligned (matmul broadcasts them for you).")
        return CheckResult(False, f"the shape is right but the values are not q·k (largest error "
                                  f"{_max_error(result, expected):.3g}). Each score is the sum over E of "
                                  "query[..., i, :] * key[..., j, :].")
    result2, failure = _call_without(_DOT, fn, q2, k2)
    if failure is not None:
        return CheckResult(False, "right on 4-D inputs, but on plain (L, E) and (S, E) matrices " + failure.message +
                                  ". Use key.transpose(-2, -1), which works for any number of leading dimensions.")
    result2, failure = as_tensor(result2, "scores")
    if failure is not None:
        return failure
    if not allclose(result2, expected2):
        return CheckResult(False, "right on (B, H, L, E) inputs but wrong on plain (L, E) matrices (shape "
                                  f"{tuple(result2.shape)}): the transpose must act on the last two dimensions "
                                  "only, whatever comes before them.")
    return CheckResult(True, "query @ key.transpose(-2, -1) gives all L×S scores of every batch element and head "
                             "in one matrix product.")


# --------------------------------------------------------------------------------------------
# Exercise 2: the operation count of Q K^T
# --------------------------------------------------------------------------------------------


def check_dot_flops(fn: Callable[[int, int, int], int]) -> CheckResult:
    """Check ``fn(L, S, E) -> int``: floating-point operations of ``Q K^T`` (one multiply and one
    add per term, so ``2 L S E``; the exact ``L S (2E - 1)`` is accepted too). The answer may not
    call :func:`helpers.experiments.score_cost.score_flops` or ``flops_table``.

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (multiplies only, L and S confused, E forgotten).
    """
    cases = [(5, 7, 8), (16, 3, 64), (1, 10, 4)]
    for L, S, E in cases:
        result, failure = _call_without(_FLOPS, fn, L, S, E)
        if failure is not None:
            return failure
        if result is None:
            return CheckResult(False, "your function returned None: return the number of operations")
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return CheckResult(False, f"return a number (int), got {type(result).__name__}")
        right = {2 * L * S * E, L * S * (2 * E - 1)}
        if result in right:
            continue
        if result == L * S * E:
            return CheckResult(False, f"for L={L}, S={S}, E={E} you counted {result} = L·S·E: the multiplications "
                                      "only. Each of the E terms of a dot product is a multiply and an add: 2·L·S·E.")
        if result == L * S:
            return CheckResult(False, f"{result} = L·S counts the scores, not the work: each score is a dot product "
                                      "of length E (E multiplies and E adds).")
        if result in (2 * L * L * E, 2 * S * S * E, L * L * E, S * S * E):
            return CheckResult(False, f"for L={L}, S={S} you got {result}: L and S are different here (queries "
                                      "against keys); the count is 2·L·S·E.")
        if result in (2 * L * S * E * E, L * S * E * E):
            return CheckResult(False, f"{result} has E² in it: one dot product of length E costs E multiplies and "
                                      "E adds, not E².")
        return CheckResult(False, f"for L={L}, S={S}, E={E} you got {result}, expected 2·L·S·E = {2 * L * S * E}.")
    return CheckResult(True, "2·L·S·E: L·S dot products of length E, one multiply and one add per term.")


# --------------------------------------------------------------------------------------------
# Exercise 3: make Euclidean distance usable as a score
# --------------------------------------------------------------------------------------------


def _reader_scores(fn: Any, query: Tensor, key: Tensor,
                   disabled: tuple[Any, ...]) -> tuple[Tensor | None, CheckResult | None]:
    """The reader's ``(L, S)`` scores for 2-D ``query``/``key`` (computed with the package's
    ``disabled`` functions switched off), or the verdict on why there are none."""
    result, failure = _call_without(disabled, fn, query, key)
    if failure is not None:
        return None, failure
    result, failure = as_tensor(result, "scores")
    if failure is not None:
        return None, failure
    (L, E), S = query.shape, key.size(0)
    if result.shape == (S, L):
        return None, CheckResult(False, f"your scores have shape (S, L) = ({S}, {L}): rows must be queries, columns "
                                        "keys.")
    if result.shape != (L, S):
        return None, CheckResult(False, f"for query ({L}, {E}) and key ({S}, {E}) the scores must have shape (L, S) = "
                                        f"({L}, {S}), got {tuple(result.shape)}.")
    return result, None


def check_euclidean_scores(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(query, key) -> scores`` built from Euclidean distance, to be fed to softmax.

    The reference is :func:`helpers.scores.neg_euclidean_scores`, ``-|q_i - k_j|^2``: larger
    for nearer keys, 0 for a key equal to the query. Scores that differ from it by a constant
    per query (e.g. ``2 q.k - |k|^2``) give the same softmax weights and are accepted, with a note.
    The answer may not call :func:`~helpers.scores.neg_euclidean_scores`.

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (sign, square root, reciprocal, transposed).
    """
    query, key = _inputs((4, 3), (6, 3), seed=2)
    key[2] = query[1]  # one key equals a query: distance 0
    expected = neg_euclidean_scores(query, key)  # (4, 6)
    distance_sq = -expected
    result, failure = _reader_scores(fn, query, key, _EUCLIDEAN)
    if failure is not None:
        return failure
    result = result.double()
    if allclose(result, distance_sq) or allclose(result, distance_sq.sqrt()):
        return CheckResult(False, "sign: your scores grow with the distance, so softmax gives the most weight to the "
                                  "FARTHEST key. Softmax favours large scores: negate the distance.")
    if allclose(result, -distance_sq.sqrt()):
        return CheckResult(False, "the order is right (nearer key, higher score), but these are minus the distances "
                                  "‖q−k‖, not the squared distances: the reference (and its fast expansion "
                                  "‖q‖² − 2q·k + ‖k‖²) uses −‖q−k‖².")
    if not torch.isfinite(result).all():
        return CheckResult(False, "some scores are inf or NaN, where a key equals the query (distance 0): 1/d "
                                  "blows up there. Use −‖q−k‖², which is 0 for an identical key.")
    if allclose(result, expected):
        return CheckResult(True, "−‖q−k‖²: larger for nearer keys, 0 for an identical key; softmax now puts the most "
                                 "weight on the nearest key.")
    shift = result - expected  # constant along each row <=> same softmax
    if torch.allclose(shift, shift[:, :1].expand_as(shift), rtol=1e-5, atol=1e-6):
        return CheckResult(True, "your scores differ from −‖q−k‖² by a constant for each query (like 2q·k − ‖k‖², "
                                 "which drops −‖q‖²): softmax ignores that constant, so the weights are the same.")
    return CheckResult(False, f"the values are not −‖q−k‖² (largest error {_max_error(result, expected):.3g}): for "
                              "each query i and key j, sum the squared differences over the features, then negate.")


# --------------------------------------------------------------------------------------------
# Exercise 4: vectorise a looped cosine similarity
# --------------------------------------------------------------------------------------------


def looped_cosine_scores(query: Tensor, key: Tensor, eps: float = 1e-8) -> Tensor:
    """Cosine similarity of every query with every key, one pair at a time (the slow reference).

    A vector whose norm is below ``eps`` is divided by ``eps`` instead (so a zero vector scores 0),
    as in :func:`helpers.scores.cosine_scores`.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    L, S = query.size(0), key.size(0)
    scores = torch.empty(L, S, dtype=query.dtype)
    for i in range(L):
        for j in range(S):
            q_norm = max(float(query[i].norm()), eps)
            k_norm = max(float(key[j].norm()), eps)
            scores[i, j] = torch.dot(query[i], key[j]) / (q_norm * k_norm)
    return scores


def _best_of(fn: Callable[[], Any], repeats: int = 3) -> float:
    """Fastest of ``repeats`` calls on one PyTorch thread (threads fighting over a shared CPU
    can make a microsecond product take milliseconds)."""
    best = math.inf
    with num_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    return best


def check_vectorised_cosine(fn: Callable[[Tensor, Tensor], Tensor], *, speed_size: int = 64) -> CheckResult:
    """Check ``fn(query, key) -> scores``, a vectorised :func:`looped_cosine_scores`.

    Compared with :func:`helpers.scores.cosine_scores` on ``(L, E)``/``(S, E)`` inputs that
    include a zero vector (which must score 0, not NaN), then timed against the pair loop at
    ``L = S = speed_size``: it must be at least 10 times faster. The answer may not call
    :func:`~helpers.scores.cosine_scores`.

    Args:
        fn: The reader's function.
        speed_size: Size of the timing test.

    Returns:
        The verdict, naming the mistake (missing normalisation, squared norms, NaN, still a loop).
    """
    query, key = _inputs((5, 4), (7, 4), seed=3)
    expected = cosine_scores(query, key)
    zero_query = torch.cat([query, torch.zeros(1, 4, dtype=query.dtype)])  # (6, 4): the last query is zero
    expected_zero = cosine_scores(zero_query, key)  # the references first: the reader's code runs without them
    result, failure = _reader_scores(fn, query, key, _COSINE)
    if failure is not None:
        return failure
    q_norm = query.norm(dim=-1, keepdim=True)  # (L, 1)
    k_norm = key.norm(dim=-1)  # (S,)
    dots = query @ key.T  # (L, S)
    if allclose(result, dots):
        return CheckResult(False, "these are plain dot products: divide each score by ‖q_i‖·‖k_j‖.")
    if allclose(result, dots / q_norm):
        return CheckResult(False, "you normalised the queries but not the keys: also divide by ‖k_j‖ (a row vector "
                                  "of key norms, shape (1, S), broadcasts along the rows).")
    if allclose(result, dots / k_norm):
        return CheckResult(False, "you normalised the keys but not the queries: also divide by ‖q_i‖ (a column of "
                                  "query norms, shape (L, 1)).")
    if allclose(result, dots / (q_norm**2 * k_norm**2)):
        return CheckResult(False, "you divided by the squared norms (q·q and k·k): divide by the norms, their square "
                                  "roots.")
    if not allclose(result, expected):
        return CheckResult(False, f"the values are not the cosine similarities (largest error "
                                  f"{_max_error(result, expected):.3g}). Check that the norms are taken over the "
                                  "feature dimension (dim=-1) and broadcast as (L, 1) for queries and (1, S) for keys.")
    result_zero, failure = _call_without(_COSINE, fn, zero_query, key)
    if failure is not None:
        return CheckResult(False, "right on ordinary vectors, but with a zero query vector " + failure.message)
    result_zero, failure = as_tensor(result_zero, "scores")
    if failure is not None:
        return failure
    if not torch.isfinite(result_zero).all():
        return CheckResult(False, "a zero vector gives NaN (0/0): clamp each norm from below, "
                                  "norm.clamp_min(eps), as the loop does with max(norm, eps).")
    if not allclose(result_zero, expected_zero):
        return CheckResult(False, "with a zero query vector the scores must be 0 (the loop divides 0 by eps); got "
                                  f"{result_zero[-1].tolist()}.")
    big_q, big_k = _inputs((speed_size, 32), (speed_size, 32), seed=4)
    result_big, failure = _call_without(_COSINE, fn, big_q, big_k)
    if failure is not None:
        return failure
    loop_time = _best_of(lambda: looped_cosine_scores(big_q, big_k), repeats=1)
    with package_disabled(*_COSINE, namespaces=reader_globals(fn)):
        your_time = _best_of(lambda: fn(big_q, big_k), repeats=5)
    if your_time * 10 > loop_time:
        return CheckResult(False, f"the values are right, but at L = S = {speed_size} your function takes "
                                  f"{your_time * 1e3:.2f} ms against {loop_time * 1e3:.2f} ms for the pair loop: is it "
                                  "still looping over pairs? Compute all norms at once, then one matrix product.")
    return CheckResult(True, f"right, zero-safe, and {loop_time / max(your_time, 1e-9):.0f}× faster than the pair "
                             f"loop at L = S = {speed_size}.")


# --------------------------------------------------------------------------------------------
# Exercise 5: why additive scoring is slower
# --------------------------------------------------------------------------------------------

ADDITIVE_OPTIONS: dict[str, str] = {
    "a": "It has more parameters (W_q, W_k and v) to multiply with.",
    "b": "It forms an (L, S, A) tensor: A numbers for every query-key pair, written to memory, passed through tanh "
         "and read back, where the dot product produces one number per pair from a single matrix product.",
    "c": "Its implementation loops over the query-key pairs in Python.",
    "d": "tanh is an expensive function; nothing else differs.",
}
"""The choices of the last exercise (why is additive scoring slower than the dot product?)."""

_ADDITIVE_FEEDBACK: dict[str, tuple[bool, str]] = {
    "a": (False, "its parameters, 2·E·A + A numbers, do not depend on L or S, yet its time grows like the dot "
                 "product's, with L·S, only much steeper in constant. What grows with L·S is the (L, S, A) tensor."),
    "b": (True, "the dot product turns each pair into one number inside one matrix product; additive scoring builds "
                "A numbers per pair (L·S·A in all), so its memory traffic and its tanh calls are A times the "
                "number of scores, and the last step (· v) is a matrix-vector product that cannot use the fast "
                "matrix-multiply kernels."),
    "c": (False, "helpers.scores.additive_scores has no Python loop: it broadcasts (L, 1, A) + (1, S, A). The table "
                 "shows the difference: the loop over pairs is slower still, and grows with L·S times Python's "
                 "per-call overhead."),
    "d": (False, "partly: tanh is costlier than a multiply-add, but it is applied L·S·A times only because of the "
                 "(L, S, A) tensor; that tensor, its memory and its traffic, is the root cause."),
}


def check_why_additive_is_slower(choice: str) -> CheckResult:
    """Check the answer to "why is additive scoring slower than the dot product?" (a, b, c or d).

    Args:
        choice: One of the keys of :data:`ADDITIVE_OPTIONS`.

    Returns:
        The verdict, with why each wrong option is wrong.
    """
    if not isinstance(choice, str) or choice.strip().lower().strip("()") not in _ADDITIVE_FEEDBACK:
        return CheckResult(False, f"answer with one letter, one of {', '.join(sorted(ADDITIVE_OPTIONS))}; got "
                                  f"{choice!r}.")
    passed, message = _ADDITIVE_FEEDBACK[choice.strip().lower().strip("()")]
    return CheckResult(passed, message)


# --------------------------------------------------------------------------------------------
# Exercise 6: predict, before a run, the most weight cosine scores can give one slot
# --------------------------------------------------------------------------------------------


def check_cosine_bound(fn: Callable[[int], float]) -> CheckResult:
    """Check ``fn(S) -> float``: the largest softmax weight that scores in ``[-1, 1]`` (cosines) can
    give one of ``S`` slots, ``e / (e + (S - 1) / e)`` (the match at +1, every other slot at -1).

    Tried at several S. The answer may not call
    :func:`helpers.experiments.score_learning.cosine_weight_bound`.

    Args:
        fn: The reader's function.

    Returns:
        The verdict, naming the mistake (others at 0 instead of -1, S instead of S - 1, no bound).
    """
    e = math.e
    sizes = (24, 2, 100, 1)
    expected = {S: score_learning.cosine_weight_bound(S) for S in sizes}  # before the reference is switched off
    for S in sizes:
        result, failure = _call_without(_BOUND, fn, S)
        if failure is not None:
            return failure
        if isinstance(result, Tensor) and result.numel() == 1:
            result = float(result)
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return CheckResult(False, f"return a number (the weight, between 0 and 1), got {type(result).__name__}")
        result = float(result)
        if math.isclose(result, expected[S], rel_tol=1e-6):
            continue
        if S > 1 and math.isclose(result, e / (e + S - 1), rel_tol=1e-6):
            return CheckResult(False, f"for S = {S} you got e/(e + {S - 1}) = {result:.1%}: the other slots at "
                                      "cosine 0 (perpendicular). That is not the best case: they can go down to "
                                      "cosine −1, e^(−1) each in the denominator.")
        if math.isclose(result, e / (e + S / e), rel_tol=1e-6):
            return CheckResult(False, f"for S = {S}: the matching slot is one of the S slots, so there are S − 1 "
                                      "others, not S.")
        if S > 1 and math.isclose(result, 1.0):
            return CheckResult(False, "a perfect match does not get all the weight: its score is at most 1 and the "
                                      "others' at least −1, so e^1 competes with (S − 1)·e^(−1).")
        if S > 1 and math.isclose(result, 1 / S):
            return CheckResult(False, f"1/S = {1 / S:.1%} is the weight of equal scores, the worst case: the question "
                                      "asks for the best the bounded scores allow.")
        return CheckResult(False, f"for S = {S} you got {result:.4g}, expected {expected[S]:.4g}: the best case puts "
                                  "the match at cosine 1 and every other slot at −1.")
    return CheckResult(True, f"e / (e + (S − 1)/e): {expected[24]:.1%} for 24 slots, {expected[100]:.1%} for 100. "
                             "However well it learns, a plain cosine cannot focus: it needs a temperature.")


# --------------------------------------------------------------------------------------------
# Exercise 7: design the run that separates the cosine's bound from its division by lengths
# --------------------------------------------------------------------------------------------

_ABLATION_MAX_STEPS = 600


def check_temperature_ablation(config: Any, *, seed: int = 0, target: float = 0.9) -> CheckResult:
    """Check the reader's ablation: one :class:`~helpers.experiments.recall.RecallConfig` that differs
    from the chapter's plain-cosine run (``score_learning.score_config("cosine")``) only by a fixed
    factor on the scores, big enough that the bound no longer caps the weight under ``target``;
    then train it (seed ``seed``) and check that it learns (held-out accuracy at least ``target``).

    A run that learns shows that dividing by the lengths was not the problem: the bound was.

    Args:
        config: The reader's settings.
        seed: Seed of the check's training run.
        target: Held-out accuracy the run must reach.

    Returns:
        The verdict, which names what the design changes besides the factor, why the factor cannot
        tell, or what the run measured.
    """
    base = score_learning.score_config("cosine")
    if not isinstance(config, RecallConfig):
        return CheckResult(False, "give a RecallConfig (start from score_learning.score_config('cosine') and "
                                  f"dataclasses.replace one field), got {type(config).__name__}")
    changed = [f.name for f in fields(RecallConfig) if getattr(config, f.name) != getattr(base, f.name)]
    if config.score != "cosine":
        return CheckResult(False, f"your run uses score={config.score!r}: the question is about the cosine, so keep "
                                  "it; another score function changes the division and the bound at once.")
    if not changed:
        return CheckResult(False, "this is the chapter's plain-cosine run, which we know fails: change one thing, the "
                                  "one the question is about.")
    if config.learned_scale:
        return CheckResult(False, "a learned scale is the chapter's own run, and it mixes two things (the factor, and "
                                  "how fast it is learned). Fix the factor (scale=..., learned_scale=False): one "
                                  "number, chosen by you, tests the bound alone.")
    if changed != ["scale"]:
        others = [name for name in changed if name != "scale"]
        return CheckResult(False, f"your run changes {', '.join(others)}: change only the factor on the scores "
                                  "(scale), or you will not know which change did it. More steps or fewer slots do not "
                                  "lift the bound of scores in [−1, 1].")
    if config.steps > _ABLATION_MAX_STEPS:
        return CheckResult(False, f"keep steps ≤ {_ABLATION_MAX_STEPS}, so that the check runs in seconds.")
    factor = float(config.scale)
    slots = 2 * config.num_pairs if config.slots == "tokens" else config.num_pairs
    best = math.exp(2 * factor) / (math.exp(2 * factor) + slots - 1)  # match at +factor, the others at -factor
    if best < target:
        return CheckResult(False, f"with the factor {factor:g} the scores span [−{factor:g}, {factor:g}] and the best "
                                  f"one slot of {slots} can get is {best:.1%}, under {target:.0%}: still bounded too "
                                  "low to tell. Pick a factor whose bound is above the target (exercise 6, with "
                                  "e^factor for e).")
    run = train_recall(config, seed=seed, label="cosine, fixed factor")
    accuracy = run.final_test_accuracy
    if accuracy < target:
        return CheckResult(False, f"a clean design (only the factor changes, bound {best:.1%}), but the run reached "
                                  f"{accuracy:.1%} held-out accuracy after {config.steps} steps: with a factor this "
                                  "large the softmax saturates and learns slowly. Try a smaller one whose bound is "
                                  "still above the target.")
    return CheckResult(True, f"cosine × {factor:g}: {accuracy:.1%} held-out accuracy after {config.steps} steps, where "
                             "the plain cosine stays under 40%. Only the bound changed, not the division by the "
                             "lengths: the bound was the problem.")
