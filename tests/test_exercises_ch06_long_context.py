"""Chapter 6's long-context exercise checkers (lab 6.3–6.5, exercises 7–9): accept the reference solutions
(and honest answers in another style), reject each typical mistake with the message that names it, reject
answers that delegate to the package's own implementation by any route (default argument, closure, partial,
dict) or to transformers' rotary code, tables of answers, predictions made after the result, and runs that
training did not produce."""

import dataclasses

import pytest
import torch

from exercise_routes import delegating_routes
from helpers import rope_scaling
from helpers.exercises import ch06_long_context as lc
from helpers.exercises import predictions
from helpers.exercises.cases import Case
from helpers.exercises.catalogue.ch06_long_context import MESSAGES
from helpers.exercises.memory_position import interpolation
from helpers.exercises.memory_position.common import close
from helpers.experiments import attention_sinks as sinks
from helpers.memory import kv_cache_bytes
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb


def refused(verdict, *needles):
    assert not verdict.passed, verdict.message
    for needle in needles:
        assert needle in verdict.message, (needle, verdict.message)
    return verdict.message


# ---------------------------------------------------------------- exercise 7: position interpolation


def pi_rope(x, positions, train_len, target_len):  # the lab's folded solution
    e = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, e, 2, dtype=torch.float32) / e)
    angle = (positions.float() * train_len / target_len)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., : e // 2], x[..., e // 2:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def rotation(angle_of):
    """A half-split rotation in float64 whose angles ``angle_of(m, theta, train_len, target_len)`` -> (L, E/2)
    are chosen by a test: the right one or a mistake."""

    def rotate(x, positions, train_len, target_len):
        e = x.shape[-1]
        theta = 10000.0 ** (-torch.arange(0, e, 2, dtype=torch.float64) / e)
        angle = angle_of(positions.double(), theta, train_len, target_len)
        cos, sin = angle.cos(), angle.sin()
        x1, x2 = x[..., : e // 2].double(), x[..., e // 2:].double()
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).float()

    return rotate


def _pi_cases(seed):
    """The named cases of exercise 7 and a fresh one drawn with ``seed``: ``(x, positions, train_len, target_len)``."""
    named = [params for _, params in interpolation.CASES] + [interpolation._fresh(torch.Generator().manual_seed(seed))]
    return [(*interpolation.pi_case(Case("case", params, torch.Generator().manual_seed(seed + i))),
             params["train_len"], params["target_len"]) for i, params in enumerate(named)]


def test_the_checkers_reference_is_the_packages_position_interpolation():
    for x, positions, train_len, target_len in _pi_cases(0):
        freqs = rope_scaling.position_interpolation(x.shape[-1], target_len / train_len)  # (E/2,)
        cos, sin = (torch.cat((t, t), dim=-1)[None] for t in ((positions.double()[:, None] * freqs).cos(),
                                                              (positions.double()[:, None] * freqs).sin()))
        package = apply_rotary_pos_emb(x, x, cos.float(), sin.float())[0]
        torch.testing.assert_close(interpolation.pi_rotation(x, positions, train_len, target_len).float(), package,
                                   atol=2e-4, rtol=1e-4)
        assert x.shape[-2] == positions.numel() and int(positions.max()) == target_len - 1


def test_position_interpolation_accepts_the_solution_and_other_styles():
    assert lc.check_position_interpolation(pi_rope).passed
    assert "position_interpolation" in lc.check_position_interpolation(pi_rope, language="zh").message

    def through_apply(x, positions, train_len, target_len):  # the package's rotation of pairs is allowed
        e = x.shape[-1]
        inv_freq = 1.0 / 10000 ** (torch.arange(0, e, 2).float() / e) * train_len / target_len
        angle = positions.float()[:, None] * inv_freq
        cos, sin = torch.cat((angle.cos(),) * 2, -1)[None], torch.cat((angle.sin(),) * 2, -1)[None]
        return apply_rotary_pos_emb(x, x, cos, sin)[0]
    assert lc.check_position_interpolation(through_apply).passed

    def my_rope(x, positions):  # exercise 3's answer, reused with fractional positions
        return pi_rope(x, positions, 1, 1)
    assert lc.check_position_interpolation(lambda x, p, L, T: my_rope(x, p * L / T)).passed


MISTAKES = {
    "the factor inverted": (lambda m, th, L, T: (m * T / L)[:, None] * th, "inverted"),
    "no scaling": (lambda m, th, L, T: m[:, None] * th, "plain RoPE"),
    "position plus one": (lambda m, th, L, T: ((m + 1) * L / T)[:, None] * th, "off by one"),
    "position minus one": (lambda m, th, L, T: ((m - 1) * L / T)[:, None] * th, "off by one"),
    "lengths minus one": (lambda m, th, L, T: (m * (L - 1) / (T - 1))[:, None] * th, "(train_len - 1)"),
    "integer division": (lambda m, th, L, T: torch.div(m * L, T, rounding_mode="floor")[:, None] * th, "rounded"),
    "rounded": (lambda m, th, L, T: torch.round(m * L / T)[:, None] * th, "rounded"),
    "slow half only": (lambda m, th, L, T: m[:, None] * th * torch.where(torch.arange(th.numel()) < th.numel() // 2,
                                                                          1.0, L / T), "only"),
    "fast half only": (lambda m, th, L, T: m[:, None] * th * torch.where(torch.arange(th.numel()) < th.numel() // 2,
                                                                          L / T, 1.0), "only"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_position_interpolation_names_each_mistake(mistake):
    angle_of, needle = MISTAKES[mistake]
    refused(lc.check_position_interpolation(rotation(angle_of)), needle)


def test_position_interpolation_names_the_trig_scaled_instead_of_the_angle():
    plain = rotation(lambda m, th, L, T: m[:, None] * th)
    refused(lc.check_position_interpolation(lambda x, p, L, T: plain(x, p, L, T) * L / T), "cosines and sines")
    refused(lc.check_position_interpolation(lambda x, p, L, T: plain(x, p, L, T) * T / L), "cosines and sines")


def test_position_interpolation_says_where_an_unnamed_answer_differs():
    ramp = lambda th: torch.arange(th.numel(), dtype=torch.float64) / (th.numel() - 1)  # noqa: E731
    ntk = rotation(lambda m, th, L, T: m[:, None] * th / (T / L) ** ramp(th))  # NTK-like: a ramp over the pairs
    message = refused(lc.check_position_interpolation(ntk), "max |diff|")
    assert "train_len=" in message
    refused(lc.check_position_interpolation(lambda x, p, L, T: x[..., :2]), "shape of x")


def test_position_interpolation_refuses_a_table_of_answers():
    seen = {}
    assert lc.check_position_interpolation(lambda x, p, L, T: seen.setdefault((L, T), pi_rope(x, p, L, T))).passed
    refused(lc.check_position_interpolation(lambda x, p, L, T: seen.get((L, T), torch.zeros_like(x))),
            "not on a fresh one")


def test_position_interpolation_refuses_the_package_by_every_route():
    def via_frequencies(f, x, positions, train_len, target_len):
        freqs = f(x.shape[-1], target_len / train_len)
        angle = positions.float()[:, None] * freqs
        cos, sin = torch.cat((angle.cos(),) * 2, -1)[None], torch.cat((angle.sin(),) * 2, -1)[None]
        return apply_rotary_pos_emb(x, x, cos, sin)[0]

    for route, answer in delegating_routes(rope_scaling.position_interpolation, via_frequencies).items():
        refused(lc.check_position_interpolation(answer), "position_interpolation", "yourself")

    def via_module(x, positions, train_len, target_len):
        rope = rope_scaling.scaled_rotary_embedding(rope_scaling.rope_frequencies(x.shape[-1]) * train_len / target_len)
        cos, sin = rope(positions[None])
        return apply_rotary_pos_emb(x, x, cos, sin)[0]
    refused(lc.check_position_interpolation(via_module), "yourself")

    def via_rotary_embedding(x, positions, train_len, target_len):  # the package's own table at float positions
        cos, sin = RotaryEmbedding(x.shape[-1])(positions[None].float() * train_len / target_len)
        return apply_rotary_pos_emb(x, x, cos, sin)[0]
    refused(lc.check_position_interpolation(via_rotary_embedding), "helpers.RotaryEmbedding")


def test_position_interpolation_refuses_transformers_rotary_code():
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    def via_hf_linear(x, positions, train_len, target_len):
        config = transformers.LlamaConfig(hidden_size=x.shape[-1] * 2, num_attention_heads=2, rope_theta=10000.0,
                                          rope_scaling={"rope_type": "linear", "factor": target_len / train_len})
        inv_freq, _ = ROPE_INIT_FUNCTIONS["linear"](config, "cpu")
        angle = positions.float()[:, None] * inv_freq
        cos, sin = torch.cat((angle.cos(),) * 2, -1)[None], torch.cat((angle.sin(),) * 2, -1)[None]
        return apply_rotary_pos_emb(x, x, cos, sin)[0]

    case = _pi_cases(1)[0]
    assert close(via_hf_linear(*case), interpolation.pi_rotation(*case), interpolation.TOLERANCE)  # unwatched: right
    refused(lc.check_position_interpolation(via_hf_linear), "transformers")


# ---------------------------------------------------------------- exercise 8: which cache keeps working


CONFIG = sinks.SinkConfig(steps=150, eval_samples=8)


@pytest.fixture(autouse=True)
def no_predictions():
    predictions._forget()
    yield
    predictions._forget()


@pytest.fixture(scope="module")
def runs():
    return sinks.sink_runs(CONFIG, seeds=(0,))


def test_sink_prediction_refuses_what_is_not_a_fair_run_before_anything_is_trained():
    refused(lc.check_sink_prediction([], CONFIG), "sink_runs")
    refused(lc.check_sink_prediction({"full": 1.0}, CONFIG), "sink_runs")
    fake = sinks.SinkRun(0, [0.5], [1])
    refused(lc.check_sink_prediction([fake], {"steps": 150}), "SinkConfig")
    refused(lc.check_sink_prediction([fake], dataclasses.replace(CONFIG, decode_factor=1)), "decode_factor >= 2")
    refused(lc.check_sink_prediction([fake], dataclasses.replace(CONFIG, cache_size=CONFIG.train_length)),
            "cache_size < train_length")


@pytest.mark.slow
def test_sink_prediction_needs_a_prediction_recorded_before(runs):
    refused(lc.check_sink_prediction(runs, CONFIG), "first record your prediction")
    assert "lc.predict" in lc.check_sink_prediction(runs, CONFIG, language="zh").message
    for bad in ("window", ["window", "window"], ["window", "streaming"], [1]):
        lc.predict(lc.SINK_CACHES, bad)
        refused(lc.check_sink_prediction(runs, CONFIG), "list of names")
    assert predictions.recorded(lc.SINK_CACHES).late is False  # nothing was revealed


@pytest.mark.slow
def test_sink_prediction_right_wrong_and_late(runs):
    inside = runs[0].in_length_accuracy["full"]
    measured = [c for c, kind in (("full", "full"), ("window", "window"), ("sinks", "sinks=4"))
                if runs[0].mean_accuracy[kind] >= inside - lc.WORKING_DROP]
    assert measured == ["window", "sinks"]  # this setting's outcome (the lab's solution predicts it)
    lc.predict(lc.SINK_CACHES, ["sinks"])
    message = refused(lc.check_sink_prediction(runs, CONFIG), "was wrong", "['window', 'sinks']", "full cache failed")
    assert "5158" in message and "trained again" in message
    lc.predict(lc.SINK_CACHES, measured)  # after the result was shown
    refused(lc.check_sink_prediction(runs, CONFIG), "does not count as a prediction")
    predictions._forget()
    lc.predict(lc.SINK_CACHES, ("sinks", "window"))
    verdict = lc.check_sink_prediction(runs, CONFIG)
    assert verdict.passed and "was right" in verdict.message, verdict.message
    chinese = verdict.in_language("zh").message
    assert "是对的" in chinese and "完整缓存失效了" in chinese


@pytest.mark.slow
def test_sink_prediction_refuses_runs_that_training_did_not_produce(runs):
    lc.predict(lc.SINK_CACHES, ["window", "sinks"])
    doctored = [dataclasses.replace(runs[0], mean_accuracy=dict(runs[0].mean_accuracy, full=1.0))]
    refused(lc.check_sink_prediction(doctored, CONFIG), "not produced")
    refused(lc.check_sink_prediction(runs, dataclasses.replace(CONFIG, steps=40)), "not produced")
    assert predictions.recorded(lc.SINK_CACHES).late is False


@pytest.mark.slow
def test_sink_prediction_refuses_a_model_that_has_not_learned_the_task():
    config = dataclasses.replace(CONFIG, steps=10)
    lc.predict(lc.SINK_CACHES, [])
    refused(lc.check_sink_prediction(sinks.sink_runs(config, seeds=(1,)), config), "has not learned", "steps=10")


# ---------------------------------------------------------------- exercise 9: a rolling cache's memory


def rolling_cache_gib(num_layers, num_heads, num_kv_heads, head_dim, window, seq_len, bytes_per_value):
    return 2 * num_layers * num_kv_heads * head_dim * min(seq_len, window) * bytes_per_value / 2**30


def test_the_rolling_cache_of_mistral_7b_at_32k():
    m = lc.MISTRAL_7B
    args = (m["num_layers"], m["num_heads"], m["num_kv_heads"], m["head_dim"])
    assert rolling_cache_gib(*args, m["window"], m["seq_len"], 2) == 0.5  # 4096 slots x 128 KiB
    assert rolling_cache_gib(*args, m["seq_len"], m["seq_len"], 2) == 4.0  # the full cache: 8x, the paper's figure
    assert rolling_cache_gib(*args, m["seq_len"], m["seq_len"], 2) * 2**30 == kv_cache_bytes(
        m["num_layers"], m["num_kv_heads"], m["head_dim"], m["seq_len"], 1, torch.bfloat16)


def test_rolling_cache_accepts_the_solution_and_other_styles():
    verdict = lc.check_rolling_cache(rolling_cache_gib)
    assert verdict.passed and all(s in verdict.message for s in ("0.50 GiB", "4.00 GiB", "8× more")), verdict.message
    assert "0.50 GiB" in lc.check_rolling_cache(rolling_cache_gib, language="zh").message

    def in_bytes_first(num_layers, num_heads, num_kv_heads, head_dim, window, seq_len, bytes_per_value):
        per_token = 2 * num_layers * num_kv_heads * head_dim * bytes_per_value
        held = seq_len if seq_len < window else window
        return torch.tensor(per_token * held) / 1024 / 1024 / 1024
    assert lc.check_rolling_cache(in_bytes_first).passed


ROLLING_MISTAKES = {
    "keys only": (lambda L, H, K, E, W, S, b: L * K * E * min(S, W) * b / 2**30, "factor 2"),
    "one layer": (lambda L, H, K, E, W, S, b: 2 * K * E * min(S, W) * b / 2**30, "num_layers"),
    "query heads": (lambda L, H, K, E, W, S, b: 2 * L * H * E * min(S, W) * b / 2**30, "query heads"),
    "not capped": (lambda L, H, K, E, W, S, b: 2 * L * K * E * S * b / 2**30, "not capped"),
    "always the window": (lambda L, H, K, E, W, S, b: 2 * L * K * E * W * b / 2**30, "shorter"),
    "bytes": (lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W) * b, "in bytes"),
    "MiB": (lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W) * b / 2**20, "MiB"),
    "GB": (lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W) * b / 1e9, "GB (10**9"),
    "bits": (lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W) * b * 8 / 2**30, "8 bits"),
    "two bytes": (lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W) * 2 / 2**30, "2 bytes per value"),
    "values": (lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W) / 2**30, "counts values"),
}


@pytest.mark.parametrize("mistake", list(ROLLING_MISTAKES))
def test_rolling_cache_names_each_mistake(mistake):
    answer, needle = ROLLING_MISTAKES[mistake]
    refused(lc.check_rolling_cache(answer), needle)


def test_rolling_cache_refuses_a_table_and_says_where_an_unnamed_answer_is_wrong():
    refused(lc.check_rolling_cache(lambda *a: 0.5), "right for Mistral 7B")
    message = refused(lc.check_rolling_cache(lambda L, H, K, E, W, S, b: 2 * L * K * E * min(S, W - 1) * b / 2**30),
                      "expected 0.5 GiB")
    assert "num_layers=32" in message
    refused(lc.check_rolling_cache(lambda *a: "0.5 GiB"), "as a number")


def test_rolling_cache_refuses_the_package_by_every_route():
    dtypes = {1: torch.float8_e4m3fn, 2: torch.bfloat16, 4: torch.float32}

    def adapt(f, L, H, K, E, W, S, b):
        return f(L, K, E, min(S, W), 1, dtypes[b]) / 2**30

    for route, answer in delegating_routes(kv_cache_bytes, adapt).items():
        refused(lc.check_rolling_cache(answer), "kv_cache_bytes", "yourself")


def test_every_message_of_the_long_context_exercises_has_chinese():
    assert all("zh" in templates for templates in MESSAGES.values()), [k for k, t in MESSAGES.items() if "zh" not in t]
    assert len(MESSAGES) > 30
