"""Tests of helpers.exercises.ch02: each checker accepts the reference solution and honest answers in
other styles, refuses every route to the package's own version (and PyTorch's, where it has one),
refuses a table of answers for fixed inputs, and names each mistake, without raising."""

import math
import time
from dataclasses import dataclass, replace

import pytest
import torch
import torch.nn.functional as F

import helpers.scores as scores
from exercise_routes import delegating_routes
from helpers.exercises import CheckResult, ch02
from helpers.exercises.dot_product import additive_choice
from helpers.experiments import cosine_runs, score_cost, score_learning
from helpers.experiments.recall import RecallConfig, RecallRun
from helpers.scores import cosine_scores, dot_scores, neg_euclidean_scores
from helpers.train import TrainingHistory


def _stub(*args):
    raise NotImplementedError


def _rejects(result: CheckResult, *words: str) -> None:
    assert isinstance(result, CheckResult)
    assert not result.passed, result.message
    for word in words:
        assert word in result.message, (word, result.message)


def _recorded(check, answer):
    """Run ``check`` once on ``answer`` while recording every input it was given and what it returned."""
    seen = []

    def recording(*args):
        out = answer(*args)
        seen.append((args, out))
        return out
    assert check(recording).passed
    return seen


def _table_of(check, answer):
    """A 'table' answer: what ``answer`` returned in one run of ``check``, looked up by the inputs'
    shapes (or values, for numbers) in the next run."""
    table = {}
    for args, out in _recorded(check, answer):
        table[tuple(a.shape if isinstance(a, torch.Tensor) else a for a in args)] = out

    def lookup(*args):
        return table[tuple(a.shape if isinstance(a, torch.Tensor) else a for a in args)]
    return lookup


def _table_is_refused(check, answer, *words: str) -> None:
    for _ in range(3):  # a fresh draw may repeat a shape; the values never repeat
        result = check(_table_of(check, answer))
        _rejects(result, *words)


def test_checkers_try_named_seeded_cases_then_a_fresh_one_at_every_call():
    first = _recorded(ch02.check_dot_scores, lambda q, k: q @ k.transpose(-2, -1))
    second = _recorded(ch02.check_dot_scores, lambda q, k: q @ k.transpose(-2, -1))
    assert torch.equal(first[0][0][0], second[0][0][0])  # a named case: the same inputs every time
    assert not torch.equal(first[-1][0][0].flatten()[:3], second[-1][0][0].flatten()[:3])  # the fresh one
    sizes = {args for args, _ in _recorded(ch02.check_dot_flops, lambda L, S, E: 2 * L * S * E)}
    sizes |= {args for args, _ in _recorded(ch02.check_dot_flops, lambda L, S, E: 2 * L * S * E)}
    assert len(sizes) > 3
    bound = lambda S: math.e / (math.e + (S - 1) / math.e)  # noqa: E731
    drawn = {args for args, _ in _recorded(ch02.check_cosine_bound, bound)}
    drawn |= {args for args, _ in _recorded(ch02.check_cosine_bound, bound)}
    assert len(drawn) > 5


# --------------------------------------------------------------------------------------------
# Exercise 1: dot-product scores
# --------------------------------------------------------------------------------------------


def _looped_dot(q, k):  # honest, in another style: a loop over every pair, any leading dimensions
    lead = q.shape[:-2]
    qf, kf = q.reshape(-1, *q.shape[-2:]), k.reshape(-1, *k.shape[-2:])
    out = torch.stack([torch.stack([torch.stack([(a * b).sum() for b in kk]) for a in qq])
                       for qq, kk in zip(qf, kf)])
    return out.reshape(*lead, q.shape[-2], k.shape[-2])


def test_dot_scores_accepts_one_batched_matmul_and_other_styles():
    assert ch02.check_dot_scores(lambda q, k: q @ k.transpose(-2, -1)).passed
    assert ch02.check_dot_scores(lambda q, k: torch.matmul(q, k.mT)).passed
    assert ch02.check_dot_scores(lambda q, k: torch.einsum("...le,...se->...ls", q, k)).passed
    assert ch02.check_dot_scores(lambda q, k: (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1)).passed
    assert ch02.check_dot_scores(_looped_dot).passed


def test_dot_scores_names_the_transpose_mistakes():
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.T), "transpose(-2, -1)")
    _rejects(ch02.check_dot_scores(lambda q, k: k @ q.transpose(-2, -1)), "K Qᵀ", "Rows must be queries")
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.transpose(2, 3)), "plain (L, E)")


def test_dot_scores_names_scale_batch_and_shape_mistakes():
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))), "√E")
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.flip(0).transpose(-2, -1)), "another batch element")
    _rejects(ch02.check_dot_scores(lambda q, k: q @ k.flip(1).transpose(-2, -1)), "another batch element")
    _rejects(ch02.check_dot_scores(lambda q, k: (q * 2) @ k.transpose(-2, -1)), "largest error")
    _rejects(ch02.check_dot_scores(lambda q, k: (q @ k.transpose(-2, -1)).sum(1)), "must have shape (B, H, L, S)")


def test_dot_scores_reports_stubs_and_non_tensors_without_raising():
    _rejects(ch02.check_dot_scores(_stub), "stub")
    _rejects(ch02.check_dot_scores(lambda q, k: None), "returned None")
    _rejects(ch02.check_dot_scores(lambda q, k: (q @ k.transpose(-2, -1)).tolist()), "torch.Tensor")
    _rejects(ch02.check_dot_scores("q @ k.T"), "expected a function")


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_dot_scores_refuses_every_route_to_the_package(route):
    _rejects(ch02.check_dot_scores(delegating_routes(dot_scores)[route]), "helpers.dot_scores", "yourself")
    rescaled = delegating_routes(scores.scaled_dot_scores, lambda f, q, k: f(q, k) * math.sqrt(q.size(-1)))[route]
    _rejects(ch02.check_dot_scores(rescaled), "scaled_dot_scores", "yourself")


def test_dot_scores_refuses_a_table_of_answers():
    _table_is_refused(ch02.check_dot_scores, lambda q, k: q @ k.transpose(-2, -1))


# --------------------------------------------------------------------------------------------
# Exercise 2: FLOPs of Q K^T
# --------------------------------------------------------------------------------------------


def test_dot_flops_accepts_both_counts_and_a_counting_loop():
    assert ch02.check_dot_flops(lambda L, S, E: 2 * L * S * E).passed
    assert ch02.check_dot_flops(lambda L, S, E: L * S * (2 * E - 1)).passed
    assert ch02.check_dot_flops(lambda L, S, E: sum(2 for _ in range(L) for _ in range(S) for _ in range(E))).passed


def test_dot_flops_sizes_give_every_miscount_a_number_of_its_own():
    from helpers.exercises.dot_product import flops

    # e.g. L E = S makes 2 L S E^2 equal 2 S S E: such sizes are drawn again
    assert flops.flops_counts(2, 6, 3)["e_squared"] & flops.flops_counts(2, 6, 3)["l_and_s"]
    assert all(flops.told_apart(**sizes) for _, sizes in flops.CASES)
    for seed in range(3000):
        assert flops.told_apart(**flops._fresh(torch.Generator().manual_seed(seed))), seed


def test_dot_flops_names_the_mistake():
    _rejects(ch02.check_dot_flops(lambda L, S, E: L * S * E), "multiplications only")
    _rejects(ch02.check_dot_flops(lambda L, S, E: L * S), "counts the scores")
    _rejects(ch02.check_dot_flops(lambda L, S, E: 2 * L * L * E), "L and S are different")
    _rejects(ch02.check_dot_flops(lambda L, S, E: 2 * S * S * E), "L and S are different")
    _rejects(ch02.check_dot_flops(lambda L, S, E: 2 * L * S * E * E), "E²")
    _rejects(ch02.check_dot_flops(lambda L, S, E: 2 * L * S * E + 1), "expected 2·L·S·E")
    _rejects(ch02.check_dot_flops(_stub), "stub")
    _rejects(ch02.check_dot_flops(lambda L, S, E: None), "returned None")
    _rejects(ch02.check_dot_flops(lambda L, S, E: "2LSE"), "return a number")


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_dot_flops_refuses_every_route_to_the_package(route):
    answer = delegating_routes(score_cost.score_flops, lambda f, L, S, E: f("dot", L, S, E)["flops"])[route]
    _rejects(ch02.check_dot_flops(answer), "score_flops", "yourself")


def test_dot_flops_refuses_a_table_of_answers():
    old_cases = {(5, 7, 8): 560, (16, 3, 64): 6144, (1, 10, 4): 80}  # the fixed sizes this checker used
    _rejects(ch02.check_dot_flops(lambda L, S, E: old_cases[(L, S, E)]), "KeyError")
    _table_is_refused(ch02.check_dot_flops, lambda L, S, E: 2 * L * S * E)


# --------------------------------------------------------------------------------------------
# Exercise 3: Euclidean distance as a score
# --------------------------------------------------------------------------------------------


def _looped_euclidean(q, k):  # honest, in another style
    return torch.stack([torch.stack([-((a - b) ** 2).sum() for b in k]) for a in q])


def test_euclidean_accepts_the_negated_squared_distance_and_softmax_equivalents():
    assert ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k) ** 2).passed
    assert ch02.check_euclidean_scores(_looped_euclidean).passed
    expanded = lambda q, k: -(q * q).sum(-1, keepdim=True) + 2 * q @ k.T - (k * k).sum(-1)  # noqa: E731
    assert ch02.check_euclidean_scores(expanded).passed
    result = ch02.check_euclidean_scores(lambda q, k: 2 * q @ k.T - (k * k).sum(-1))
    assert result.passed and "constant for each query" in result.message


def test_euclidean_names_sign_square_and_blow_up():
    _rejects(ch02.check_euclidean_scores(lambda q, k: torch.cdist(q, k) ** 2), "sign", "FARTHEST")
    _rejects(ch02.check_euclidean_scores(lambda q, k: torch.cdist(q, k)), "sign")
    _rejects(ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k)), "squared distances")
    _rejects(ch02.check_euclidean_scores(lambda q, k: 1 / torch.cdist(q, k)), "inf or NaN")
    _rejects(ch02.check_euclidean_scores(lambda q, k: -torch.cdist(k, q) ** 2), "(S, L)")
    _rejects(ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k).sum(-1)), "must have shape (L, S)")
    _rejects(ch02.check_euclidean_scores(lambda q, k: -2 * torch.cdist(q, k) ** 2), "largest error")
    _rejects(ch02.check_euclidean_scores(_stub), "stub")


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_euclidean_refuses_every_route_to_the_package(route):
    _rejects(ch02.check_euclidean_scores(delegating_routes(neg_euclidean_scores)[route]), "neg_euclidean_scores",
             "yourself")


def test_euclidean_refuses_a_table_of_answers():
    _table_is_refused(ch02.check_euclidean_scores, lambda q, k: -torch.cdist(q, k) ** 2)


# --------------------------------------------------------------------------------------------
# Exercise 4: vectorised cosine
# --------------------------------------------------------------------------------------------


def _cosine(q, k, eps=1e-8):
    q_unit = q / q.norm(dim=-1, keepdim=True).clamp_min(eps)
    k_unit = k / k.norm(dim=-1, keepdim=True).clamp_min(eps)
    return q_unit @ k_unit.transpose(-2, -1)


def _pair_loop(q, k, eps=1e-8):  # the test's own loop over pairs (the package's loop is refused as delegation)
    out = torch.empty(q.size(0), k.size(0), dtype=q.dtype)
    for i in range(q.size(0)):
        for j in range(k.size(0)):
            out[i, j] = (q[i] * k[j]).sum() / (max(float(q[i].norm()), eps) * max(float(k[j].norm()), eps))
    return out


def _row_loop(q, k, eps=1e-8):  # a loop over queries, one matrix-vector product each
    k_unit = k / k.norm(dim=-1, keepdim=True).clamp_min(eps)
    return torch.stack([k_unit @ (row / row.norm().clamp_min(eps)) for row in q])


def test_looped_reference_equals_the_helper():
    q, k = torch.randn(4, 3), torch.randn(5, 3)
    q[1] = 0
    torch.testing.assert_close(ch02.looped_cosine_scores(q, k), cosine_scores(q, k))
    torch.testing.assert_close(_pair_loop(q, k), cosine_scores(q, k))


def test_vectorised_cosine_accepts_vectorised_forms_in_any_style():
    for _ in range(5):  # fresh sizes every time: a right answer passes at every draw
        result = ch02.check_vectorised_cosine(_cosine)
        assert result.passed and "faster" in result.message, result.message
    assert ch02.check_vectorised_cosine(lambda q, k: F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).T).passed
    by_einsum = lambda q, k: torch.einsum("le,se->ls", q, k) / torch.outer(  # noqa: E731
        q.square().sum(-1).sqrt().clamp_min(1e-8), k.square().sum(-1).sqrt().clamp_min(1e-8))
    assert ch02.check_vectorised_cosine(by_einsum).passed


def test_vectorised_cosine_names_the_missing_normalisation():
    _rejects(ch02.check_vectorised_cosine(lambda q, k: q @ k.T), "plain dot products")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: (q / q.norm(dim=-1, keepdim=True)) @ k.T),
             "normalised the queries but not the keys")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: q @ (k / k.norm(dim=-1, keepdim=True)).T),
             "normalised the keys but not the queries")
    _rejects(ch02.check_vectorised_cosine(
        lambda q, k: (q @ k.T) / ((q * q).sum(-1, keepdim=True) * (k * k).sum(-1))), "squared norms")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: _cosine(q, k) * 0.9), "not the cosine similarities")


def test_vectorised_cosine_names_zero_vector_mistakes():
    unclamped = lambda q, k: (q / q.norm(dim=-1, keepdim=True)) @ (k / k.norm(dim=-1, keepdim=True)).T  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(unclamped), "NaN", "clamp")
    ones = lambda q, k: torch.nan_to_num(unclamped(q, k), nan=1.0)  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(ones), "zero vectors", "must be 0")
    _rejects(ch02.check_vectorised_cosine(lambda q, k: _cosine(k, q)), "(S, L)")


def test_vectorised_cosine_names_loops_and_slowness():
    _rejects(ch02.check_vectorised_cosine(_pair_loop, speed_size=48), "number of calls grows", "loops")
    _rejects(ch02.check_vectorised_cosine(_row_loop, speed_size=48), "number of calls grows", "loops")
    slow = lambda q, k: (time.sleep(0.25), _cosine(q, k))[1]  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(slow, speed_size=48), "still looping over pairs")


def test_vectorised_cosine_refuses_an_answer_right_only_on_small_inputs():
    small_only = lambda q, k: _cosine(q, k) if q.size(0) < 20 else q @ k.T  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(small_only), "wrong on longer ones")


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_vectorised_cosine_refuses_every_route_to_the_package(route):
    _rejects(ch02.check_vectorised_cosine(delegating_routes(cosine_scores)[route]), "helpers.cosine_scores",
             "yourself")
    _rejects(ch02.check_vectorised_cosine(delegating_routes(ch02.looped_cosine_scores)[route]),
             "looped_cosine_scores", "yourself")


def test_vectorised_cosine_refuses_pytorch_cosine_similarity():
    pairs = lambda q, k: F.cosine_similarity(q.unsqueeze(1), k.unsqueeze(0), dim=-1)  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(pairs), "cosine_similarity", "yourself")
    module = lambda q, k: torch.nn.CosineSimilarity(dim=-1)(q[:, None], k[None])  # noqa: E731
    _rejects(ch02.check_vectorised_cosine(module), "cosine_similarity", "yourself")
    for route in delegating_routes(torch.cosine_similarity, lambda f, q, k: f(q[:, None], k[None], dim=-1)).values():
        _rejects(ch02.check_vectorised_cosine(route), "cosine_similarity", "yourself")


def test_vectorised_cosine_refuses_a_table_of_answers():
    _table_is_refused(ch02.check_vectorised_cosine, _cosine)


def test_vectorised_cosine_refuses_a_bad_speed_size():
    with pytest.raises(ValueError, match="speed_size"):
        ch02.check_vectorised_cosine(_cosine, speed_size=8)


# --------------------------------------------------------------------------------------------
# Exercise 5: why additive is slower (a choice among stated mechanisms, feedback for each)
# --------------------------------------------------------------------------------------------


def test_why_additive_accepts_b_in_any_spelling():
    for answer in ("b", "B", " (b) "):
        assert ch02.check_why_additive_is_slower(answer).passed


def test_why_additive_reports_where_the_time_goes_timed_by_the_checker():
    result = ch02.check_why_additive_is_slower("b")
    shares = [result.fields[key] for key in ("add", "tanh", "reduce", "proj")]
    assert result.passed and sum(shares) == pytest.approx(1.0) and all(0 <= x <= 1 for x in shares)
    assert result.fields["add"] + result.fields["tanh"] > 0.5  # the (L, S, A) tensor: written, then tanh over it
    assert f"L = S = {additive_choice.BREAKDOWN_SIZE}" in result.message
    assert f"{result.fields['tanh']:.0%}" in result.message


def test_why_additive_explains_each_wrong_option():
    _rejects(ch02.check_why_additive_is_slower("a"), "do not depend on L or S")
    _rejects(ch02.check_why_additive_is_slower("c"), "no Python loop")
    _rejects(ch02.check_why_additive_is_slower("d"), "(L, S, A) tensor")
    _rejects(ch02.check_why_additive_is_slower("?"), "one letter")
    _rejects(ch02.check_why_additive_is_slower(2), "one letter")
    _rejects(ch02.check_why_additive_is_slower("the (L, S, A) tensor"), "one letter")  # no free text
    assert set(ch02.ADDITIVE_OPTIONS) == {"a", "b", "c", "d"}
    messages = {ch02.check_why_additive_is_slower(letter).message for letter in "abcd"}
    assert len(messages) == 4  # each choice has its own feedback
    assert ch02.additive_options("en") == ch02.ADDITIVE_OPTIONS
    chinese = ch02.additive_options("zh")
    assert set(chinese) == set(ch02.ADDITIVE_OPTIONS) and "(L, S, A)" in chinese["b"]
    assert all(chinese[letter] != ch02.ADDITIVE_OPTIONS[letter] for letter in chinese)


# --------------------------------------------------------------------------------------------
# Exercise 6: the cosine's bound, predicted
# --------------------------------------------------------------------------------------------


def test_cosine_bound_accepts_the_closed_form_in_any_style():
    e = math.e
    assert ch02.check_cosine_bound(lambda S: e / (e + (S - 1) / e)).passed
    assert ch02.check_cosine_bound(lambda S: torch.tensor(e * e / (e * e + S - 1))).passed
    by_softmax = lambda S: float(torch.softmax(torch.tensor([1.0] + [-1.0] * (S - 1), dtype=torch.float64), 0)[0])  # noqa: E731
    assert ch02.check_cosine_bound(by_softmax).passed


@pytest.mark.slow
def test_cosine_bound_runs_the_experiment_once_the_prediction_is_right():
    result = ch02.check_cosine_bound(lambda S: math.e / (math.e + (S - 1) / math.e))
    assert result.passed, result.message
    # the run the checker trained never beats the bound the reader predicted, and cannot focus
    assert 0 < result.fields["measured"] <= result.fields["bound_24"] + 1e-6
    assert result.fields["accuracy"] < 0.5
    assert f"{result.fields['measured']:.1%}" in result.message and "trained by the checker" in result.message


def test_cosine_bound_names_the_mistakes():
    e = math.e
    _rejects(ch02.check_cosine_bound(lambda S: e / (e + S - 1)), "perpendicular", "−1")
    _rejects(ch02.check_cosine_bound(lambda S: e / (e + S / e)), "S − 1 others")
    _rejects(ch02.check_cosine_bound(lambda S: 1.0), "does not get all the weight")
    _rejects(ch02.check_cosine_bound(lambda S: 1 / S), "equal scores")
    _rejects(ch02.check_cosine_bound(lambda S: "24%"), "return a number")
    _rejects(ch02.check_cosine_bound(lambda S: 0.5), "expected")
    _rejects(ch02.check_cosine_bound(_stub), "stub")


@pytest.mark.parametrize("route", ["default argument", "closure", "partial", "dict"])
def test_cosine_bound_refuses_every_route_to_the_package(route):
    _rejects(ch02.check_cosine_bound(delegating_routes(score_learning.cosine_weight_bound)[route]),
             "cosine_weight_bound", "yourself")


def test_cosine_bound_refuses_a_table_of_answers():
    old_sizes = {S: score_learning.cosine_weight_bound(S) for S in (24, 2, 100, 1)}  # the fixed sizes it used
    _rejects(ch02.check_cosine_bound(lambda S: old_sizes[S]), "KeyError")
    _table_is_refused(ch02.check_cosine_bound, lambda S: math.e / (math.e + (S - 1) / math.e))


# --------------------------------------------------------------------------------------------
# Exercise 7: the temperature ablation, designed (the checker trains the run and its control)
# --------------------------------------------------------------------------------------------


def test_temperature_ablation_rejects_designs_that_cannot_answer_without_training():
    plain = score_learning.score_config("cosine")
    _rejects(ch02.check_temperature_ablation(None), "RecallConfig")
    _rejects(ch02.check_temperature_ablation(0.95), "RecallConfig")
    _rejects(ch02.check_temperature_ablation(plain), "plain-cosine run")
    _rejects(ch02.check_temperature_ablation(score_learning.score_config("dot")), "keep it")
    _rejects(ch02.check_temperature_ablation(score_learning.score_config("cosine_learned_scale")), "Fix the factor")
    _rejects(ch02.check_temperature_ablation(replace(plain, scale=4.0, steps=400)), "changes steps")
    _rejects(ch02.check_temperature_ablation(replace(plain, scale=4.0, steps=100)), "changes steps")
    _rejects(ch02.check_temperature_ablation(replace(plain, num_pairs=4)), "changes num_pairs")
    _rejects(ch02.check_temperature_ablation(replace(plain, scale=4.0, data_seed=7)), "changes data_seed")
    _rejects(ch02.check_temperature_ablation(replace(plain, scale=1.2)), "32.4%", "still binds")
    for bad in (-4.0, 0.0, math.inf, math.nan, "4", True):
        _rejects(ch02.check_temperature_ablation(replace(plain, scale=bad)), "finite number above 0")


def test_temperature_ablation_refuses_a_result_and_a_config_that_is_not_one():
    plain = score_learning.score_config("cosine")
    history = TrainingHistory()
    history.accuracy = [1.0] * 300
    fabricated = RecallRun(label="cosine, fixed factor", config=replace(plain, scale=4.0), seed=0, history=history,
                           num_parameters=0)
    _rejects(ch02.check_temperature_ablation(fabricated), "a result, not a design", "trains your run itself")

    @dataclass(frozen=True)
    class EasyConfig(RecallConfig):  # a subclass can change how the run is made
        pass
    easy = EasyConfig(**{name: getattr(replace(plain, scale=4.0), name) for name in RecallConfig.__dataclass_fields__})
    _rejects(ch02.check_temperature_ablation(easy), "give a RecallConfig", "EasyConfig")


@pytest.mark.slow
def test_temperature_ablation_trains_a_clean_design_and_its_control():
    result = ch02.check_temperature_ablation(replace(score_learning.score_config("cosine"), scale=4.0))
    assert result.passed, result.message
    assert result.fields["accuracy"] >= 0.9 > result.fields["control"]  # both measured by the checker
    assert result.fields["control"] == cosine_runs.plain_cosine_run(0)[0]
    assert result.fields["step_control"] < 0.9  # the second control, steps as large, the plain bound: measured
    assert result.fields["spread"] == pytest.approx(4 * result.fields["spread_plain"], rel=1e-4)
    assert "step size alone" in result.message and "three things" in result.message
    saturated = ch02.check_temperature_ablation(replace(score_learning.score_config("cosine"), scale=1e4))
    _rejects(saturated, "under the target", "plain-cosine control")


@pytest.mark.slow
def test_temperature_ablation_says_when_the_control_learned_too(monkeypatch):
    monkeypatch.setattr(cosine_runs, "plain_cosine_run", lambda seed: (0.95, 0.1))
    result = ch02.check_temperature_ablation(replace(score_learning.score_config("cosine"), scale=4.0))
    _rejects(result, "cannot be told apart", "95.0%")


@pytest.mark.slow
def test_temperature_ablation_says_when_bigger_steps_alone_learned(monkeypatch):
    monkeypatch.setattr(cosine_runs, "step_size_control", lambda seed, factor: 0.93)
    result = ch02.check_temperature_ablation(replace(score_learning.score_config("cosine"), scale=4.0))
    _rejects(result, "bigger steps alone", "93.0%", "cannot name the bound")


# --------------------------------------------------------------------------------------------
# The student's answers (shared/reviews/labs-student.md)
# --------------------------------------------------------------------------------------------


def test_minus_the_distance_is_told_that_the_exercise_asks_for_the_squared_distance():
    result = ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k))
    _rejects(result, "asks for minus the squared distances", "neg_euclidean_scores")
    assert "平方距离" in ch02.check_euclidean_scores(lambda q, k: -torch.cdist(q, k), language="zh").message


def test_a_count_returned_as_a_float_is_accepted():
    assert ch02.check_dot_flops(lambda L, S, E: 2.0 * L * S * E).passed


def test_the_speed_bar_is_ten_times_the_loop_timed_the_same_way():
    assert ch02.SPEEDUP_REQUIRED >= 10
    result = ch02.check_vectorised_cosine(_cosine)
    assert result.passed and result.fields["speedup"] >= 3 * ch02.SPEEDUP_REQUIRED, result.message
