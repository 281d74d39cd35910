"""Chapter 3's exercise checkers: accept the reference solutions (and honest answers in another style),
refuse every route to the package's own version and its third-party equivalents, refuse made-up
results, and name each distinct mistake. Inputs are fresh at each call, so these tests exercise the
checkers on inputs no answer could know."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from exercise_routes import delegating_routes
from helpers.diagnostics import softmax_jacobian
from helpers.exercises import CheckResult, ch03
from helpers.exercises.predictions import _forget as forget
from helpers.exercises.predictions import predict, recorded, reveal
from helpers.exercises.scaling import attention_scale, learning_rates, multihead_fix
from helpers.experiments import dot_variance, scale_training
from helpers.experiments.logit_scale import logit_scale_of
from helpers.experiments.scale_training import LearningRateSweep
from helpers.multihead import MultiHeadAttention


@pytest.fixture(autouse=True)
def _no_predictions():
    forget()
    yield
    forget()


def _refused_by_name(result: CheckResult, name: str) -> None:
    assert not result.passed
    assert name in result.message and "write yourself" in result.message, result.message


# --------------------------------------------------------------------------------------------
# Exercise 1: predict Var(q . k)
# --------------------------------------------------------------------------------------------


def test_predicted_variance_refuses_a_missing_prediction_and_shows_nothing():
    for before in (lambda: None, lambda: predict(ch03.VARIANCE_KEY, ...)):
        before()
        result = ch03.check_predicted_variance(d_k=64, sigma=0.5)
        assert not result.passed and "first record your prediction" in result.message
        assert "4" not in result.message and "measured" not in result.message  # d_k σ⁴ = 4 is not given away
    predict(ch03.VARIANCE_KEY, 4.0)
    assert not recorded(ch03.VARIANCE_KEY).late  # the refusal revealed nothing


def test_predicted_variance_accepts_d_k_sigma_to_the_fourth_and_shows_a_fresh_measurement():
    predict(ch03.VARIANCE_KEY, 64 * 0.5**4)
    result = ch03.check_predicted_variance(d_k=64, sigma=0.5)
    assert isinstance(result, CheckResult) and result.passed and "prediction was right" in result.message
    measured = float(result.fields["measured"])
    assert measured == pytest.approx(4.0, rel=0.05)  # Var over 20,000 fresh pairs: standard error about 1%
    assert ch03.check_predicted_variance(d_k=64, sigma=0.5).fields["measured"] == measured  # seeded samples
    predict(ch03.VARIANCE_KEY, torch.tensor(10 * 2.0**4))
    assert ch03.check_predicted_variance(d_k=10, sigma=2.0).passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (math.sqrt(64 * 0.5**4), "standard deviation"),
        (64 * 0.25, "counts σ² once"),
        (64.0, "unit-variance"),
        (0.5**4, "one product"),
        (64**2 * 0.5**4, "d_k²"),
        (64 * 0.5, "uses the standard deviation where a variance belongs"),
        (7.0, "is not it"),
    ],
)
def test_predicted_variance_names_the_mistake_and_only_then_shows_the_value(answer, words):
    predict(ch03.VARIANCE_KEY, answer)
    result = ch03.check_predicted_variance(d_k=64, sigma=0.5)
    assert not result.passed
    assert "prediction was wrong" in result.message and words in result.message
    assert "d_k σ⁴ = 4" in result.message  # shown after the prediction was recorded, not before


def test_a_prediction_recorded_after_the_result_is_marked_late():
    predict(ch03.VARIANCE_KEY, 16.0)
    assert not ch03.check_predicted_variance(d_k=64, sigma=0.5).passed  # shows the result
    predict(ch03.VARIANCE_KEY, 4.0)
    late = ch03.check_predicted_variance(d_k=64, sigma=0.5)
    assert late.passed and "not a prediction" in late.message and "was right" not in late.message


def test_no_public_call_of_the_predictions_module_makes_a_late_prediction_count_as_on_time():
    import helpers.exercises as ex
    from helpers.exercises import predictions

    predict(ch03.VARIANCE_KEY, 16.0)
    assert not ch03.check_predicted_variance(d_k=64, sigma=0.5).passed  # shows the result
    for name in predictions.__all__:  # what a reader is offered: none of it forgets a shown result
        assert name in {"Prediction", "predict", "recorded", "reveal"}, name
    assert not hasattr(ex, "forget") and not hasattr(predictions, "forget")
    predict(ch03.VARIANCE_KEY, 4.0)
    predict(ch03.VARIANCE_KEY, 4.0)  # predicting again does not wash it either
    late = ch03.check_predicted_variance(d_k=64, sigma=0.5)
    assert late.passed and "not a prediction" in late.message and "was right" not in late.message


@pytest.mark.parametrize("answer", ["4", float("nan"), [4.0]])
def test_predicted_variance_rejects_non_numbers_without_raising(answer):
    predict(ch03.VARIANCE_KEY, answer)
    result = ch03.check_predicted_variance()
    assert not result.passed and ("number" in result.message or "finite" in result.message)


# --------------------------------------------------------------------------------------------
# Exercise 2: the spread the softmax sees
# --------------------------------------------------------------------------------------------


def _row_spread(queries, keys):
    scores = (queries.unsqueeze(1) * keys).sum(-1)  # (N, S): each query against its own keys
    return scores.var(dim=-1).mean().item()


def _row_spread_loops(queries, keys):  # another style: one row at a time, population variance
    total = 0.0
    for q, k in zip(queries, keys):
        scores = torch.einsum("se,e->s", k, q)
        total += float(((scores - scores.mean()) ** 2).mean())
    return total / len(queries)


def _row_spread_float32(queries, keys):  # another style: in float32, through a batched matrix product
    scores = torch.bmm(keys.float(), queries.float().unsqueeze(-1)).squeeze(-1)  # (N, S, E) x (N, E, 1) -> (N, S)
    return float(scores.var(dim=-1).mean())


@pytest.mark.parametrize("answer", [_row_spread, _row_spread_loops, _row_spread_float32])
def test_row_spread_accepts_a_within_row_measurement_and_judges_the_prediction(answer):
    predict(ch03.ROW_SPREAD_KEY, "smaller")
    result = ch03.check_row_spread(answer)
    assert result.passed and "right" in result.message
    d_k = result.fields["d_k"]
    assert float(result.fields["measured"]) == pytest.approx(2 * d_k, rel=0.35)  # |q|² ~ 2 d_k, a few hundred rows
    predict(ch03.ROW_SPREAD_KEY, "same")  # after the result: late
    late = ch03.check_row_spread(answer)
    assert late.passed and "does not count" in late.message


def test_row_spread_tells_a_wrong_prediction_it_is_wrong():
    predict(ch03.ROW_SPREAD_KEY, "larger")
    result = ch03.check_row_spread(_row_spread)
    assert result.passed and "You predicted 'larger': it is smaller." in result.message


def test_row_spread_refuses_a_missing_or_unknown_prediction_and_shows_nothing():
    missing = ch03.check_row_spread(_row_spread)
    assert not missing.passed and "first record your prediction" in missing.message and "2 d_k" not in missing.message
    predict(ch03.ROW_SPREAD_KEY, "less")
    unknown = ch03.check_row_spread(_row_spread)
    assert not unknown.passed and "'smaller', 'same', 'larger'" in unknown.message


def _scores(q, k):
    return (q.unsqueeze(1) * k).sum(-1)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda q, k: _scores(q, k).flatten().var().item(), "across all (query, key) pairs"),
        (lambda q, k: _scores(q, k).var().item(), "across all (query, key) pairs"),
        (lambda q, k: _scores(q, k).var(dim=0).mean().item(), "over the queries (dim=0)"),
        (lambda q, k: (q @ k.reshape(-1, k.shape[-1]).T).var(-1).mean().item(), "every key of the batch"),
        (lambda q, k: _scores(q - 1, k - 1).var(-1).mean().item(), "mean 1 is removed"),
        (lambda q, k: _scores(q, k).pow(2).mean().item(), "second moment"),
        (lambda q, k: _scores(q, k).std(-1).mean().item(), "is a standard deviation"),
        (lambda q, k: _row_spread(q, k) ** 0.5, "is a standard deviation"),
        (lambda q, k: _scores(q, k).flatten().std().item(), "across all pairs"),
        (lambda q, k: 2.0 * q.shape[-1], "formula of d_k"),
        (lambda q, k: 2.0 * q.shape[-1] * 1.01, "not the mean within-row variance"),  # a made-up "measurement"
        (lambda q, k: _row_spread(q, k) * 1.001, "not the mean within-row variance"),
    ],
)
def test_row_spread_names_the_mistake(answer, words):
    predict(ch03.ROW_SPREAD_KEY, "smaller")
    result = ch03.check_row_spread(answer)
    assert not result.passed and words in result.message, result.message


def test_row_spread_names_a_mistake_only_when_a_second_draw_shows_it():
    # a made-up number can land within 1e-4 of a mistake by chance: here the first call returns the
    # variance over every key (as if by chance), the next ones a number near no candidate
    calls = []

    def once_all_keys(q, k):
        calls.append(q.shape[-1])
        if len(calls) == 1:
            return (q @ k.reshape(-1, k.shape[-1]).T).var(-1).mean().item()
        return -1.0

    predict(ch03.ROW_SPREAD_KEY, "smaller")
    result = ch03.check_row_spread(once_all_keys)
    assert not result.passed and len(calls) == 3, (calls, result.message)  # the three named cases
    assert "not the mean within-row variance" in result.message and "every key" not in result.message
    assert f"d_k = {calls[0]}" in result.message  # the first draw's numbers, the one that was wrong


def test_row_spread_inputs_are_fresh_so_a_table_of_answers_fails():
    seen = {}

    def recorder(q, k):
        seen["answer"] = _row_spread(q, k)
        seen["shape"] = (tuple(q.shape), tuple(k.shape))
        return seen["answer"]

    predict(ch03.ROW_SPREAD_KEY, "smaller")
    assert ch03.check_row_spread(recorder).passed
    first = dict(seen)
    result = ch03.check_row_spread(lambda q, k: seen.update(shape=(tuple(q.shape), tuple(k.shape))) or first["answer"])
    assert not result.passed and first["shape"] != seen["shape"]


def test_row_spread_refuses_the_package_measurement_by_every_route():
    def package_measurement(f, q, k):
        return f((q.shape[-1],), distribution="shifted", seed=0).within_row[0]

    predict(ch03.ROW_SPREAD_KEY, "smaller")
    for answer in delegating_routes(dot_variance.within_row_variance, package_measurement).values():
        _refused_by_name(ch03.check_row_spread(answer), "within_row_variance")
    _refused_by_name(ch03.check_row_spread(lambda q, k: dot_variance.theoretical_row_variance("shifted", q.shape[-1])),
                     "theoretical_row_variance")


def test_row_spread_reports_the_stub():
    predict(ch03.ROW_SPREAD_KEY, "smaller")
    assert "stub" in ch03.check_row_spread(lambda q, k: (_ for _ in ()).throw(NotImplementedError)).message


# --------------------------------------------------------------------------------------------
# Exercise 3: the softmax Jacobian
# --------------------------------------------------------------------------------------------


def _jacobian(z):
    p = torch.softmax(z, dim=-1)
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


def _jacobian_loops(z):  # another style: entry by entry from p_i (delta_ij - p_j)
    p = torch.softmax(z, dim=-1)
    size = z.shape[-1]
    out = torch.zeros(*z.shape, size, dtype=z.dtype)
    for i in range(size):
        for j in range(size):
            out[..., i, j] = p[..., i] * ((1.0 if i == j else 0.0) - p[..., j])
    return out


@pytest.mark.parametrize("answer", [_jacobian, _jacobian_loops])
def test_softmax_jacobian_accepts_the_formula_in_any_style(answer):
    assert ch03.check_softmax_jacobian(answer).passed


def test_the_checkers_logits_are_fresh_and_include_a_saturated_and_a_uniform_row():
    shapes, saturated = set(), []

    def spy(z):
        shapes.add(tuple(z.shape))
        saturated.append(bool((z.abs() == 1000).all(-1).any()))
        return _jacobian(z)

    for _ in range(6):
        assert ch03.check_softmax_jacobian(spy).passed
    assert len(shapes) > 1 and all(saturated)


def test_softmax_jacobian_refuses_autograd_and_the_package_by_every_route():
    torch.vmap(torch.func.jacrev(torch.sin))(torch.zeros(1, 2))  # loads torch.func outside the watch (slow under it)
    def by_autograd(z):
        rows = z.reshape(-1, z.shape[-1])
        jac = torch.stack([torch.autograd.functional.jacobian(lambda r: torch.softmax(r, 0), row) for row in rows])
        return jac.reshape(*z.shape, z.shape[-1])

    def by_grad(z):
        rows = []
        for row in z.reshape(-1, z.shape[-1]):
            row = row.clone().requires_grad_(True)
            p = torch.softmax(row, 0)
            rows.append(torch.stack([torch.autograd.grad(p[i], row, retain_graph=True)[0] for i in range(len(p))]))
        return torch.stack(rows).reshape(*z.shape, z.shape[-1])

    _refused_by_name(ch03.check_softmax_jacobian(by_autograd), "torch.autograd")
    _refused_by_name(ch03.check_softmax_jacobian(by_grad), "torch.autograd")
    def jacrev(z):
        rows = z.reshape(-1, z.shape[-1])
        return torch.vmap(torch.func.jacrev(lambda r: torch.softmax(r, -1)))(rows).reshape(*z.shape, z.shape[-1])

    _refused_by_name(ch03.check_softmax_jacobian(jacrev), "torch.func.jacrev")
    for answer in [softmax_jacobian, *delegating_routes(softmax_jacobian).values()]:
        _refused_by_name(ch03.check_softmax_jacobian(answer), "softmax_jacobian")


def _naive_softmax(z):
    e = z.exp()
    return e / e.sum(-1, keepdim=True)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda z: -_jacobian(z), "sign is flipped"),
        (lambda z: torch.diag_embed(torch.softmax(z, -1)), "dropped the − p pᵀ"),
        (lambda z: -torch.softmax(z, -1).unsqueeze(-1) * torch.softmax(z, -1).unsqueeze(-2), "only − p pᵀ"),
        (lambda z: torch.diag_embed(z) - z.unsqueeze(-1) * z.unsqueeze(-2), "logits z"),
        (lambda z: _jacobian(z)[0, 0], "shape"),
        (lambda z: _jacobian(z.reshape(-1, z.shape[-1])), "shape"),
        (lambda z: torch.diag_embed(torch.softmax(z, -1) * (1 - torch.softmax(z, -1))), "off-diagonal"),
        (lambda z: torch.diag_embed(_naive_softmax(z))
         - _naive_softmax(z).unsqueeze(-1) * _naive_softmax(z).unsqueeze(-2), "exp(1000) overflows"),
        (lambda z: _jacobian(z) * 1.01, "differs from diag(p) − p pᵀ"),
    ],
)
def test_softmax_jacobian_names_the_mistake(answer, words):
    result = ch03.check_softmax_jacobian(answer)
    assert not result.passed and words in result.message, result.message


def test_softmax_jacobian_refuses_a_table_of_answers_for_earlier_inputs():
    table = {}

    def recorder(z):
        table["answer"] = _jacobian(z)
        return table["answer"]

    assert ch03.check_softmax_jacobian(recorder).passed
    assert not ch03.check_softmax_jacobian(lambda z: table["answer"]).passed


def test_softmax_jacobian_reports_exceptions_and_non_tensors():
    assert "RuntimeError" in ch03.check_softmax_jacobian(lambda z: z @ torch.ones(100, 3)).message
    assert "return" in ch03.check_softmax_jacobian(lambda z: None).message


# --------------------------------------------------------------------------------------------
# Exercise 4: predict the usable learning rates, run the sweep, then read them off the runs
# --------------------------------------------------------------------------------------------


def _usable(sweep, label):
    return [lr for lr, runs in zip(sweep.lrs, sweep.runs[label])
            if min(r.final_accuracy for r in runs) >= sweep.threshold]


def _usable_by_seed(sweep, label):  # another style: through the per-seed table the lab prints
    return [lr for lr, accs in zip(sweep.lrs, sweep.final_accuracy_by_seed(label))
            if all(a >= sweep.threshold for a in accs)]


@pytest.fixture(scope="module")
def small_sweep() -> LearningRateSweep:
    """A real sweep, small: 2 learning rates x 3 seeds x 2 heads of size 8, 60 steps each."""
    return ch03.run_learning_rate_sweep((1e-3, 3e-2), d_k=8, steps=60, seeds=(0, 1, 2))


def _right_prediction(sweep):
    return {label: len(sweep.usable(label)) for label in ("scaled", "no scale")}


def test_lr_prediction_refuses_a_missing_prediction_and_shows_nothing(small_sweep):
    result = ch03.check_lr_prediction(_usable, small_sweep)
    assert not result.passed and "first record your prediction" in result.message
    assert "usable with" not in result.message
    predict(ch03.LEARNING_RATES_KEY, {"scaled": 9, "no scale": 0})
    assert "0 to 2" in ch03.check_lr_prediction(_usable, small_sweep).message


@pytest.mark.parametrize("answer", [_usable, _usable_by_seed])
def test_lr_prediction_accepts_a_right_reading_and_judges_the_prediction(small_sweep, answer):
    predict(ch03.LEARNING_RATES_KEY, _right_prediction(small_sweep))
    right = ch03.check_lr_prediction(answer, small_sweep)
    assert right.passed and "prediction was right" in right.message
    forget()
    wrong = {label: 2 - n for label, n in _right_prediction(small_sweep).items()}
    predict(ch03.LEARNING_RATES_KEY, wrong)
    result = ch03.check_lr_prediction(answer, small_sweep)
    assert result.passed and "prediction was wrong" in result.message
    assert f"you predicted {wrong['scaled']} and {wrong['no scale']}" in result.message


def test_lr_prediction_recorded_after_the_runs_is_late(small_sweep):
    reveal(ch03.LEARNING_RATES_KEY)  # what run_learning_rate_sweep does
    predict(ch03.LEARNING_RATES_KEY, _right_prediction(small_sweep))
    result = ch03.check_lr_prediction(_usable, small_sweep)
    assert result.passed and "does not count as a prediction" in result.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda sweep, label: [lr for lr, runs in zip(sweep.lrs, sweep.runs[label])
                               if sum(r.final_accuracy for r in runs) / len(runs) >= sweep.threshold], "*mean*"),
        (lambda sweep, label: [lr for lr, runs in zip(sweep.lrs, sweep.runs[label])
                               if max(r.final_accuracy for r in runs) >= sweep.threshold], "min, not max"),
        (lambda sweep, label: [1e-3], "the usable learning rates are"),  # a constant answer
        (lambda sweep, label: sweep.lrs, "the usable learning rates are"),
        (lambda sweep, label: "1e-3", "return a list"),
    ],
)
def test_lr_prediction_names_the_mistake(small_sweep, answer, words):
    predict(ch03.LEARNING_RATES_KEY, _right_prediction(small_sweep))
    result = ch03.check_lr_prediction(answer, small_sweep)
    assert not result.passed and words in result.message, result.message


def test_lr_prediction_refuses_the_package_reading_by_every_route(small_sweep):
    predict(ch03.LEARNING_RATES_KEY, _right_prediction(small_sweep))
    _refused_by_name(ch03.check_lr_prediction(lambda sweep, label: sweep.usable(label), small_sweep), "usable")
    for answer in delegating_routes(LearningRateSweep.usable).values():
        _refused_by_name(ch03.check_lr_prediction(answer, small_sweep), "LearningRateSweep.usable")


def test_lr_prediction_refuses_a_made_up_sweep(small_sweep):
    predict(ch03.LEARNING_RATES_KEY, {"scaled": 1, "no scale": 1})
    probe = learning_rates.made_up_sweep(torch.Generator().manual_seed(0))  # the checker's own probe, passed back
    assert "one seed proves nothing" in ch03.check_lr_prediction(_usable, probe).message
    assert "must be the LearningRateSweep" in ch03.check_lr_prediction(_usable, {"scaled": []}).message
    edited = copy.deepcopy(small_sweep)
    edited.runs["no scale"][1][0].history.accuracy[-50:] = [1.0] * 50  # a fabricated result
    assert "not one that ch03.run_learning_rate_sweep" in ch03.check_lr_prediction(_usable, edited).message


def test_lr_prediction_refuses_an_unfair_or_too_small_sweep(small_sweep):
    predict(ch03.LEARNING_RATES_KEY, {"scaled": 1, "no scale": 1})
    one_lr = copy.deepcopy(small_sweep)
    one_lr.lrs, one_lr.runs = one_lr.lrs[:1], {label: runs[:1] for label, runs in one_lr.runs.items()}
    assert "at least 2" in ch03.check_lr_prediction(_usable, one_lr).message
    unfair = copy.deepcopy(small_sweep)
    unfair.runs["no scale"][0] = copy.deepcopy(unfair.runs["no scale"][1])  # trained at another learning rate
    assert "not a fair control" in ch03.check_lr_prediction(_usable, unfair).message


def test_lr_prediction_trains_a_run_again_and_refuses_a_history_training_did_not_produce(small_sweep):
    forged = copy.deepcopy(small_sweep)
    for per_lr in forged.runs.values():
        for runs in per_lr:
            for run in runs:
                run.history.loss[3] += 0.5  # every run touched: whichever the checker trains again differs
    learning_rates._PRODUCED.add(learning_rates._digest(forged))  # as if the registry had been fooled
    predict(ch03.LEARNING_RATES_KEY, {"scaled": 1, "no scale": 1})
    result = ch03.check_lr_prediction(_usable, forged)
    assert not result.passed and "the checker trained it again" in result.message
    for run in (small_sweep.runs["scaled"][0][0], small_sweep.runs["no scale"][1][2]):
        assert learning_rates._trained_again(run)  # training is deterministic: the real run agrees
    assert learning_rates._trained_again(small_sweep.runs["scaled"][1][1], steps=60)  # all of it


def test_a_sweep_trained_outside_the_exercise_runner_is_refused(small_sweep):
    predict(ch03.LEARNING_RATES_KEY, {"scaled": 1, "no scale": 1})
    outside = scale_training.learning_rate_sweep((1e-3, 3e-2), d_k=4, steps=20, seeds=(0, 1, 2))
    assert "not one that" in ch03.check_lr_prediction(_usable, outside).message


def test_the_made_up_sweep_is_fresh_and_sets_both_traps():
    for seed in range(5):
        sweep = learning_rates.made_up_sweep(torch.Generator().manual_seed(seed))
        for label in ("scaled", "no scale"):
            by_seed = sweep.final_accuracy_by_seed(label)
            assert any(sum(a) / 3 >= 0.9 > min(a) for a in by_seed)  # the mean passes, one seed fails
            assert any(max(a) >= 0.9 > sum(a) / 3 for a in by_seed)  # one seed passes, the mean fails
            assert any(max(a) < 0.9 for a in by_seed) and any(min(a) >= 0.9 for a in by_seed)
    assert learning_rates.made_up_sweep(torch.Generator().manual_seed(0)).lrs != learning_rates.made_up_sweep(
        torch.Generator().manual_seed(1)).lrs


# --------------------------------------------------------------------------------------------
# Exercise 5: the right scale for a head layout
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [lambda d, h, hkv: (d // h) ** -0.5, lambda d, h, hkv: 1 / math.sqrt(d / h)])
def test_attention_scale_accepts_one_over_sqrt_head_dim(answer):
    assert ch03.check_attention_scale(answer).passed


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda d, h, hkv: 1 / math.sqrt(d), "√d_model bug"),
        (lambda d, h, hkv: math.sqrt(d // h), "divided"),
        (lambda d, h, hkv: 1 / (d // h), "square root"),
        (lambda d, h, hkv: 1 / math.sqrt(d // hkv), "key/value heads are shared"),
        (lambda d, h, hkv: 1 / math.sqrt(h), "√num_heads"),
        (lambda d, h, hkv: math.sqrt(d), "two mistakes"),
        (lambda d, h, hkv: 0.123456, "should be 1/√head_dim"),  # a constant
    ],
)
def test_attention_scale_names_the_mistake(answer, words):
    result = ch03.check_attention_scale(answer)
    assert not result.passed and words in result.message, result.message


def test_attention_scale_layouts_are_fresh_so_a_table_fails():
    seen = []
    ch03.check_attention_scale(lambda d, h, hkv: seen.append((d, h, hkv)) or (d // h) ** -0.5)
    first = list(seen)
    table = {layout: (layout[0] // layout[1]) ** -0.5 for layout in first}
    result = ch03.check_attention_scale(lambda d, h, hkv: table[(d, h, hkv)])
    assert not result.passed and "KeyError" in result.message
    kinds = [(h > hkv > 1, h == hkv > 1, h > hkv == 1, h == 1) for _, h, hkv in first]
    assert kinds == [(True, False, False, False), (False, True, False, False), (False, False, True, False),
                     (False, False, False, True), (True, False, False, False)]  # the named ones, then a fresh GQA


def test_attention_scale_refuses_the_package_scale_by_every_route():
    def through_a_layer(f, d, h, hkv):
        return f(MultiHeadAttention(d, h, num_kv_heads=hkv))

    _refused_by_name(ch03.check_attention_scale(lambda d, h, hkv: through_a_layer(logit_scale_of, d, h, hkv)),
                     "MultiHeadAttention")
    for answer in delegating_routes(logit_scale_of, lambda f, d, h, hkv: f(torch.nn.Linear(1, 1))).values():
        _refused_by_name(ch03.check_attention_scale(answer), "logit_scale_of")


def test_attention_scale_reports_the_stub_and_exceptions():
    def stub(embed_dim, num_heads, num_kv_heads):
        raise NotImplementedError

    assert "stub" in ch03.check_attention_scale(stub).message
    assert "ZeroDivisionError" in ch03.check_attention_scale(lambda d, h, hkv: 1 / 0).message
    assert "expected a function" in ch03.check_attention_scale(0.125).message
    assert "number" in ch03.check_attention_scale(lambda d, h, hkv: None).message


# --------------------------------------------------------------------------------------------
# Exercise 6: find and fix the scaling bug
# --------------------------------------------------------------------------------------------


def _attend(x, layer, *, scale=None, softmax_dim=-1, split="right", merge="right", o_proj=True, transposed=False):
    """The exercise's function written out, with the bugs a reader may leave in it."""
    batch, length, d_model = x.shape
    heads = layer.num_heads
    head_dim = d_model // heads

    def to_heads(t):
        if split == "view":  # the classic reshape mistake: no transpose, heads mixed with positions
            return t.view(batch, heads, length, head_dim)
        return t.view(batch, length, heads, head_dim).transpose(1, 2)

    q, k, v = to_heads(layer.q_proj(x)), to_heads(layer.k_proj(x)), to_heads(layer.v_proj(x))
    factor = 1 / math.sqrt(head_dim) if scale is None else scale(d_model, heads, head_dim)
    scores = (k @ q.transpose(-2, -1) if transposed else q @ k.transpose(-2, -1)) * factor
    out = torch.softmax(scores, dim=softmax_dim) @ v
    if merge == "reshape":  # heads not moved back next to the features
        out = out.reshape(batch, length, d_model)
    else:
        out = out.transpose(1, 2).reshape(batch, length, d_model)
    return layer.o_proj(out) if o_proj else out


def _buggy(x, layer):  # the lab's buggy function, as a reader copies it (it may not call the package's)
    return _attend(x, layer, scale=lambda d, h, e: 1 / math.sqrt(d))


def _fixed(x, layer):
    return _attend(x, layer)


def _fixed_einsum_chunk(x, layer):  # another style: chunk and einsum, weights returned too
    heads = layer.num_heads
    q, k, v = (torch.stack(p(x).chunk(heads, dim=-1), dim=1) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    weights = torch.einsum("bhle,bhse->bhls", q, k).div(q.shape[-1] ** 0.5).softmax(-1)
    out = torch.einsum("bhls,bhse->bhle", weights, v)
    return layer.o_proj(torch.cat(out.unbind(1), dim=-1)), weights


@pytest.mark.parametrize("answer", [_fixed, _fixed_einsum_chunk])
def test_multihead_fix_accepts_a_fix_in_any_style(answer):
    assert ch03.check_multihead_fix(answer).passed


def test_buggy_multihead_attention_really_differs_from_the_layer_and_the_written_out_one_is_it():
    torch.manual_seed(0)
    layer = MultiHeadAttention(32, 4)
    x = torch.randn(2, 6, 32)
    with torch.no_grad():
        assert not torch.allclose(ch03.buggy_multihead_attention(x, layer), layer(x)[0], atol=1e-4)
        torch.testing.assert_close(_buggy(x, layer), ch03.buggy_multihead_attention(x, layer))
        torch.testing.assert_close(_fixed(x, layer), layer(x)[0], rtol=1e-4, atol=1e-5)
    assert "still divided by √d_model" in ch03.check_multihead_fix(_buggy).message


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        (dict(scale=lambda d, h, e: 1.0), "not scaled at all"),
        (dict(scale=lambda d, h, e: 1 / e), "divide by head_dim"),
        (dict(scale=lambda d, h, e: math.sqrt(e)), "multiply by √head_dim"),
        (dict(scale=lambda d, h, e: 1 / math.sqrt(h)), "divide by √num_heads"),
        (dict(softmax_dim=-2), "softmax runs over the queries"),
        (dict(split="view"), "bare view"),
        (dict(merge="reshape"), "merged with a bare reshape"),
        (dict(o_proj=False), "output projection is missing"),
        (dict(transposed=True), "score matrix is transposed"),
    ],
)
def test_multihead_fix_names_each_distinct_bug(bug, words):
    result = ch03.check_multihead_fix(lambda x, layer: _attend(x, layer, **bug))
    assert not result.passed and words in result.message, result.message
    assert "Fix only the scale line" not in result.message and "either" not in result.message


def test_multihead_fix_names_a_head_bug_left_with_the_wrong_scale_too():
    result = ch03.check_multihead_fix(lambda x, layer: _attend(x, layer, softmax_dim=-2,
                                                               scale=lambda d, h, e: 1 / math.sqrt(d)))
    assert not result.passed and "softmax runs over the queries" in result.message and "either" in result.message


def test_multihead_fix_rejects_other_mistakes_with_a_hint():
    other = ch03.check_multihead_fix(lambda x, layer: _fixed(x, layer) * 1.01)
    assert not other.passed and "not by one of the usual bugs" in other.message
    shape = ch03.check_multihead_fix(lambda x, layer: _fixed(x, layer)[:, 0])
    assert not shape.passed and "shape" in shape.message
    none = ch03.check_multihead_fix(lambda x, layer: None)
    assert not none.passed and "return" in none.message


def test_multihead_fix_layouts_weights_and_inputs_are_fresh():
    seen = []

    def spy(x, layer):
        seen.append((tuple(x.shape), layer.num_heads, float(layer.q_proj.weight[0, 0])))
        return _fixed(x, layer)

    for _ in range(3):
        assert ch03.check_multihead_fix(spy).passed
    assert len(seen) == 9 and seen[:2] == seen[3:5] == seen[6:8]  # two named layers, the same every time
    assert len({seen[2], seen[5], seen[8]}) == 3  # and a fresh one


def test_multihead_fix_refuses_a_table_of_answers_for_earlier_inputs():
    table = []

    def recorder(x, layer):
        table.append(_fixed(x, layer).detach())
        return table[-1]

    assert ch03.check_multihead_fix(recorder).passed
    replay = iter(table)
    assert not ch03.check_multihead_fix(lambda x, layer: next(replay)).passed


def test_multihead_fix_refuses_the_layer_and_pytorch_attention_by_every_route():
    for answer in (lambda x, layer: layer(x)[0], lambda x, layer: layer(x)):
        _refused_by_name(ch03.check_multihead_fix(answer), "helpers.MultiHeadAttention")
    for answer in delegating_routes(MultiHeadAttention.forward, lambda f, x, layer: f(layer, x)[0]).values():
        _refused_by_name(ch03.check_multihead_fix(answer), "helpers.MultiHeadAttention")
    _refused_by_name(ch03.check_multihead_fix(ch03.buggy_multihead_attention), "buggy_multihead_attention")

    def fused(x, layer):
        b, n, d = x.shape
        h, e = layer.num_heads, d // layer.num_heads
        q, k, v = (p(x).view(b, n, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        return layer.o_proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d))

    def torch_layer(x, layer):  # nn.MultiheadAttention with the layer's weights copied in
        d = x.shape[-1]
        mha = torch.nn.MultiheadAttention(d, layer.num_heads, batch_first=True, dtype=x.dtype)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight]))
            mha.in_proj_bias.copy_(torch.cat([layer.q_proj.bias, layer.k_proj.bias, layer.v_proj.bias]))
            mha.out_proj.weight.copy_(layer.o_proj.weight)
            mha.out_proj.bias.copy_(layer.o_proj.bias)
        return mha(x, x, x, need_weights=False)[0]

    _refused_by_name(ch03.check_multihead_fix(fused), "scaled_dot_product_attention")
    _refused_by_name(ch03.check_multihead_fix(torch_layer), "MultiheadAttention")
    from helpers.attention import scaled_dot_product_attention

    def package_kernel(x, layer):
        b, n, d = x.shape
        h, e = layer.num_heads, d // layer.num_heads
        q, k, v = (p(x).view(b, n, h, e).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        return layer.o_proj(scaled_dot_product_attention(q, k, v)[0].transpose(1, 2).reshape(b, n, d))

    _refused_by_name(ch03.check_multihead_fix(package_kernel), "scaled_dot_product_attention")


def test_the_torch_layer_route_would_pass_without_the_guard():
    """The nn.MultiheadAttention answer above is a real cheat: with the weights copied it is the layer."""
    torch.manual_seed(0)
    layer = MultiHeadAttention(12, 3).double()
    x = torch.randn(2, 4, 12, dtype=torch.float64)
    mha = torch.nn.MultiheadAttention(12, 3, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([layer.q_proj.bias, layer.k_proj.bias, layer.v_proj.bias]))
        mha.out_proj.weight.copy_(layer.o_proj.weight)
        mha.out_proj.bias.copy_(layer.o_proj.bias)
        torch.testing.assert_close(mha(x, x, x)[0], layer(x)[0])


def test_checkers_restore_the_package_after_a_delegating_answer():
    ch03.check_softmax_jacobian(lambda z: softmax_jacobian(z))
    assert softmax_jacobian(torch.zeros(1, 3)).shape == (1, 3, 3)
    layer = MultiHeadAttention(8, 2)
    assert layer(torch.randn(1, 3, 8))[0].shape == (1, 3, 8)


# --------------------------------------------------------------------------------------------
# Extra (not in the lab): predict the entropy
# --------------------------------------------------------------------------------------------


def _simulated_entropy(d_k, scaled, rows=4000, log=torch.log):
    gen = torch.Generator().manual_seed(99)
    q = torch.randn(rows, 1, d_k, generator=gen)
    k = torch.randn(rows, 16, d_k, generator=gen)
    scores = (q @ k.transpose(-2, -1)).squeeze(1)
    if scaled:
        scores = scores / math.sqrt(d_k)
    p = torch.softmax(scores, dim=-1)
    return float(-(p * log(p.clamp_min(1e-38))).sum(-1).mean())


def test_expected_entropy_matches_an_independent_simulation():
    for d_k, scaled in ((256, False), (64, True), (4, False)):
        assert ch03.expected_entropy(d_k, 16, scaled=scaled) == pytest.approx(_simulated_entropy(d_k, scaled), abs=0.03)


def test_entropy_prediction_refuses_a_missing_prediction_and_accepts_a_readers_simulation():
    missing = ch03.check_entropy_prediction(d_k=256)
    assert not missing.passed and "first record your prediction" in missing.message
    predict(ch03.ENTROPY_KEY, _simulated_entropy(256, False))
    assert ch03.check_entropy_prediction(d_k=256).passed
    forget()
    predict(ch03.ENTROPY_KEY, _simulated_entropy(64, True))
    assert ch03.check_entropy_prediction(d_k=64, scaled=True).passed
    predict(ch03.ENTROPY_KEY, _simulated_entropy(64, True))
    late = ch03.check_entropy_prediction(d_k=64, scaled=True)
    assert late.passed and "not a prediction" in late.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda: _simulated_entropy(256, True), "*with* the scale"),
        (lambda: _simulated_entropy(256, False, log=torch.log2), "bits"),
        (lambda: math.log(16), "uniform"),
        (lambda: -0.2, "never negative"),
        (lambda: 1.0, "too high"),
    ],
)
def test_entropy_prediction_names_the_mistake(answer, words):
    predict(ch03.ENTROPY_KEY, answer())
    result = ch03.check_entropy_prediction(d_k=256)
    assert not result.passed and words in result.message


def test_entropy_prediction_catches_standard_deviation_d_k():
    gen = torch.Generator().manual_seed(1)
    p = torch.softmax(torch.randn(4000, 16, generator=gen) * 256, dim=-1)  # std d_k instead of sqrt(d_k)
    predict(ch03.ENTROPY_KEY, float(-torch.special.xlogy(p, p).sum(-1).mean()))
    result = ch03.check_entropy_prediction(d_k=256)
    assert not result.passed and "standard deviation is √d_k" in result.message


def test_entropy_prediction_of_scaled_question_rejects_the_unscaled_value():
    predict(ch03.ENTROPY_KEY, _simulated_entropy(256, False))
    result = ch03.check_entropy_prediction(d_k=256, scaled=True)
    assert not result.passed and "*unscaled*" in result.message


def test_head_layouts_never_make_two_scale_mistakes_alike():
    # head_dim = 4 with num_heads = 16 gives 1/head_dim = 1/sqrt(num_heads): such a layout was once drawn and
    # the checker named the wrong mistake.
    assert not attention_scale.told_apart(64, 16, 8)
    assert attention_scale.told_apart(96, 16, 8)
    assert attention_scale.told_apart(*attention_scale.CASES[0][1]["layout"])  # the named GQA layout
    gen = torch.Generator().manual_seed(0)
    for _ in range(300):
        embed_dim, num_heads, num_kv_heads = attention_scale._fresh(gen)["layout"]
        head_dim, kv_dim = embed_dim // num_heads, embed_dim // num_kv_heads
        right = 1 / math.sqrt(head_dim)
        values = [1 / math.sqrt(embed_dim), math.sqrt(head_dim), 1 / head_dim, 1 / math.sqrt(kv_dim),
                  1 / math.sqrt(num_heads), math.sqrt(embed_dim)]
        missed = [v for v in values if not math.isclose(v, right, rel_tol=1e-9)]
        assert len({round(v, 9) for v in missed}) == len(missed), (embed_dim, num_heads, num_kv_heads)
        layout = multihead_fix._fresh(gen)
        assert not math.isclose(1 / layout["head_dim"], 1 / math.sqrt(layout["heads"])), layout


@pytest.mark.parametrize("repeat", range(5))
def test_attention_scale_names_the_num_heads_mistake_on_every_draw(repeat):
    result = ch03.check_attention_scale(lambda d, h, hkv: 1 / math.sqrt(h))
    assert not result.passed and "√num_heads" in result.message, result.message
