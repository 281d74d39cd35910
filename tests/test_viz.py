"""Tests of helpers.viz: each figure holds exactly the data it was given, its controls match its
frames, bad input fails loudly, and the book renderer's output is self-contained."""

from __future__ import annotations

import json
import math
import re
import sys
import types

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import helpers.viz as viz
from helpers.masks import causal_mask, sliding_window_mask
from helpers.positional import RotaryEmbedding, alibi_bias, alibi_slopes, relative_position_bucket, sinusoidal_encoding
from helpers.viz import style
from helpers.viz.heatmaps import axis_labels
from helpers.viz.site import BOOK_BUILD_ENV

URL = re.compile(r"https?://", re.IGNORECASE)


def random_weights(*shape: int, seed: int = 0) -> torch.Tensor:
    """Rows that sum to 1, like attention weights."""
    return torch.softmax(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), dim=-1)


def slider_labels(fig: go.Figure) -> list[str]:
    return [step.label for step in fig.layout.sliders[0].steps]


def plain(labels) -> list[str]:
    return [str(label).replace("\u200b", "") for label in labels]


@pytest.fixture
def book_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as if the book were being built (what the Sphinx extension sets)."""
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BOOK_BUILD_ENV, raising=False)


# --- attention_heatmap ----------------------------------------------------------------------------


def test_heatmap_z_equals_weights_for_every_layer_and_head() -> None:
    weights = random_weights(3, 4, 5, 6)  # (layers, H, L, S)
    fig = viz.attention_heatmap(weights)
    assert len(fig.data) == 4 and len(fig.frames) == 3
    for h in range(4):
        np.testing.assert_array_equal(fig.data[h].z, weights[0, h].numpy())
    for layer in range(3):
        assert list(fig.frames[layer].traces) == [0, 1, 2, 3]
        for h in range(4):
            np.testing.assert_array_equal(fig.frames[layer].data[h].z, weights[layer, h].numpy())


def test_heatmap_of_one_head_has_no_controls() -> None:
    weights = random_weights(4, 4)
    fig = viz.attention_heatmap(weights, ["a", "b", "c", "d"])
    assert len(fig.data) == 1 and not fig.frames
    assert not fig.layout.sliders and not fig.layout.updatemenus
    np.testing.assert_array_equal(fig.data[0].z, weights.numpy())


def test_heatmap_slider_has_one_step_per_layer_frame() -> None:
    fig = viz.attention_heatmap(random_weights(5, 2, 3, 3), layer_names=[f"L{i}" for i in range(5)])
    assert slider_labels(fig) == [frame.name for frame in fig.frames] == ["L0", "L1", "L2", "L3", "L4"]
    for step, frame in zip(fig.layout.sliders[0].steps, fig.frames):
        assert step.method == "animate" and list(step.args[0]) == [frame.name]
        assert step.args[1]["frame"]["redraw"] is True


def test_heatmap_head_menu_shows_exactly_the_chosen_head() -> None:
    fig = viz.attention_heatmap(random_weights(3, 4, 4), head_names=["h0", "h1", "h2"])
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["h0", "h1", "h2"]
    for h, button in enumerate(buttons):
        assert button.args[0]["visible"] == [g == h for g in range(3)]
    assert [trace.visible for trace in fig.data] == [True, False, False]


def test_heatmap_uses_the_fixed_weight_colour_scale() -> None:
    fig = viz.attention_heatmap(random_weights(2, 3, 3) * 0.2)  # small weights: the scale must not stretch
    coloraxis = fig.layout.coloraxis
    assert (coloraxis.cmin, coloraxis.cmax) == (0.0, 1.0)
    resolved = go.Figure(go.Heatmap(z=[[0]], colorscale=viz.WEIGHT_COLORSCALE)).data[0].colorscale
    assert coloraxis.colorscale == resolved
    assert all(trace.coloraxis == "coloraxis" for trace in fig.data)


def test_heatmap_axes_are_the_tokens_and_a_repeated_token_keeps_its_row() -> None:
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    fig = viz.attention_heatmap(random_weights(6, 6), tokens)
    x, y = list(fig.data[0].x), list(fig.data[0].y)
    assert plain(x) == tokens and plain(y) == tokens
    assert len(set(x)) == 6  # "the" twice would merge into one category without the marker
    assert fig.layout.xaxis.title.text.startswith("key") and fig.layout.yaxis.title.text.startswith("query")
    assert fig.layout.yaxis.autorange == "reversed"  # query 0 on top, as a matrix is read


def test_heatmap_cross_attention_takes_separate_query_tokens() -> None:
    fig = viz.attention_heatmap(random_weights(2, 3), ["x", "y", "z"], ["p", "q"])
    assert plain(fig.data[0].x) == ["x", "y", "z"] and plain(fig.data[0].y) == ["p", "q"]


def test_axis_labels_are_unique_and_read_as_the_tokens() -> None:
    labels = axis_labels(["a", "b", "a", "a"])
    assert len(set(labels)) == 4 and plain(labels) == ["a", "b", "a", "a"]


@pytest.mark.parametrize("shape", [(5,), (1, 2, 3, 4, 4)])
def test_heatmap_rejects_wrong_rank_naming_weights(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"weights must have 2 or 3 or 4 dimensions, got shape"):
        viz.attention_heatmap(torch.rand(*shape))


def test_heatmap_rejects_values_outside_0_1() -> None:
    with pytest.raises(ValueError, match=r"weights must hold attention weights in \[0, 1\], got values in"):
        viz.attention_heatmap(torch.randn(3, 3) * 5)


def test_heatmap_rejects_nan() -> None:
    weights = random_weights(3, 3)
    weights[1, 2] = float("nan")
    with pytest.raises(ValueError, match=r"weights holds NaN at \[1, 2\]"):
        viz.attention_heatmap(weights)


def test_heatmap_rejects_tokens_of_the_wrong_length_or_type() -> None:
    with pytest.raises(ValueError, match="x_tokens has 2 tokens, but the weights have 3"):
        viz.attention_heatmap(random_weights(3, 3), ["a", "b"])
    with pytest.raises(TypeError, match="x_tokens must be a sequence of strings, got str"):
        viz.attention_heatmap(random_weights(3, 3), "abc")
    with pytest.raises(TypeError, match="weights must be a torch.Tensor"):
        viz.attention_heatmap("not weights")


# --- softmax_temperature_explorer -----------------------------------------------------------------


def test_softmax_explorer_frames_hold_softmax_of_scores_over_t() -> None:
    scores = torch.tensor([2.0, 1.0, 0.0, -1.0, 3.0])
    temperatures = [0.25, 0.5, 1.0, 2.0, 4.0]
    fig = viz.softmax_temperature_explorer(scores, temperatures)
    assert len(fig.frames) == len(temperatures) == len(fig.layout.sliders[0].steps)
    entropy_curve = np.asarray(fig.data[2].y)
    for t, frame in zip(temperatures, fig.frames):
        expected = torch.softmax(scores.double() / t, -1).numpy()
        np.testing.assert_allclose(frame.data[0].y, scores.numpy() / t, rtol=1e-12)
        np.testing.assert_allclose(frame.data[1].y, expected, rtol=1e-12)
        entropy = -(expected * np.log(expected)).sum()
        assert frame.data[2].x == (t,)
        np.testing.assert_allclose(frame.data[2].y, [entropy], rtol=1e-12)
        assert list(frame.traces) == [0, 1, 3]
        limit = frame.layout.yaxis.range[1]  # the scores' axis follows s / T
        assert limit >= np.abs(scores.numpy() / t).max() and frame.layout.yaxis.range[0] == -limit
    np.testing.assert_allclose(entropy_curve, [-(p * np.log(p)).sum() for p in
                                               (torch.softmax(scores.double() / t, -1).numpy() for t in temperatures)])
    assert fig.data[4].y == (math.log(5), math.log(5))  # the uniform maximum


def test_softmax_explorer_starts_at_the_temperature_closest_to_one() -> None:
    fig = viz.softmax_temperature_explorer([1.0, 0.0], [0.1, 0.9, 3.0])
    assert fig.layout.sliders[0].active == 1
    np.testing.assert_allclose(fig.data[1].y, torch.softmax(torch.tensor([1.0, 0.0], dtype=torch.float64) / 0.9, -1))


@settings(max_examples=40, deadline=None)
@given(scores=st.lists(st.floats(-20, 20), min_size=2, max_size=12),
       temperatures=st.lists(st.floats(0.01, 100.0), min_size=2, max_size=8, unique=True))
def test_softmax_entropy_grows_with_temperature_between_0_and_log_n(scores: list[float],
                                                                     temperatures: list[float]) -> None:
    temperatures = sorted(temperatures)
    weights, entropy = viz.softmax_with_temperature(np.array(scores), np.array(temperatures))
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-12)
    assert (entropy >= -1e-12).all() and (entropy <= math.log(len(scores)) + 1e-9).all()
    assert (np.diff(entropy) >= -1e-9).all()  # a Gibbs distribution's entropy rises with T


def test_softmax_explorer_rejects_bad_temperatures_and_scores() -> None:
    with pytest.raises(ValueError, match=r"temperatures must be positive and finite, got \[1.0, 0.0\]"):
        viz.softmax_temperature_explorer([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="scores must have 1 dimensions, got shape"):
        viz.softmax_temperature_explorer(torch.zeros(2, 2), [1.0])
    with pytest.raises(ValueError, match="scores must be finite"):
        viz.softmax_temperature_explorer([1.0, float("inf")], [1.0])
    with pytest.raises(ValueError, match="active must be an index into temperatures"):
        viz.softmax_temperature_explorer([1.0, 2.0], [1.0, 2.0], active=2)


# --- mask_gallery ---------------------------------------------------------------------------------


def test_mask_gallery_draws_each_mask_as_0_1_with_counts() -> None:
    masks = {"causal": causal_mask(5), "window": sliding_window_mask(5, 5, 2),
             "all": torch.ones(5, 5, dtype=torch.bool)}
    fig = viz.mask_gallery(masks)
    assert [trace.name for trace in fig.data] == list(masks)
    for trace, mask in zip(fig.data, masks.values()):
        np.testing.assert_array_equal(trace.z, mask.int().numpy())
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0] == "causal<br>15/25 allowed" and titles[2] == "all<br>25/25 allowed"


def test_mask_gallery_menu_shows_all_or_one_mask_alone() -> None:
    masks = {name: causal_mask(4) for name in ("a", "b", "c", "d")}
    fig = viz.mask_gallery(masks)
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["all masks", "a", "b", "c", "d"]
    assert buttons[0].args[0]["visible"] == [True] * 4
    for i, button in enumerate(buttons[1:]):
        assert button.args[0]["visible"] == [j == i for j in range(4)]
        layout = button.args[1]
        axis = "xaxis" if i == 0 else f"xaxis{i + 1}"
        assert layout[f"{axis}.domain"] == [0.0, 1.0] and layout[f"{axis}.visible"] is True
        assert sum(value is False for key, value in layout.items() if key.endswith(".visible")) == 2 * 3
        assert [a["text"] for a in layout["annotations"]] == [fig.layout.annotations[i].text]


def test_mask_gallery_lays_four_masks_out_two_by_two() -> None:
    fig = viz.mask_gallery({name: causal_mask(3) for name in "abcd"})
    assert fig.layout.xaxis.domain == fig.layout.xaxis3.domain  # a above c
    assert fig.layout.yaxis.domain == fig.layout.yaxis2.domain  # a beside b


def test_mask_gallery_rejects_float_masks_and_empty_dicts() -> None:
    with pytest.raises(TypeError, match=r"masks\['bias'\] must be boolean .* got dtype torch.float32"):
        viz.mask_gallery({"bias": torch.zeros(3, 3)})
    with pytest.raises(ValueError, match="masks must hold at least one mask"):
        viz.mask_gallery({})
    with pytest.raises(ValueError, match=r"masks\['x'\] must have 2 dimensions"):
        viz.mask_gallery({"x": torch.ones(2, 3, 3, dtype=torch.bool)})


# --- positional_encoding_explorer -----------------------------------------------------------------


def test_sinusoidal_explorer_draws_the_paper_formula() -> None:
    positions, dim, base = 20, 8, 10000.0
    fig = viz.positional_encoding_explorer("sinusoidal", num_positions=positions, dim=dim, base=base)
    table = np.asarray(fig.data[0].z)
    reference = np.array([[math.sin(p / base ** (j / dim)) if j % 2 == 0 else math.cos(p / base ** ((j - 1) / dim))
                           for j in range(dim)] for p in range(positions)])
    np.testing.assert_allclose(table, reference, atol=1e-6)
    np.testing.assert_array_equal(table, sinusoidal_encoding(positions, dim, base=base).double().numpy())
    assert len(fig.frames) == len(fig.layout.sliders[0].steps) == dim // 2
    for i, frame in enumerate(fig.frames):
        np.testing.assert_array_equal(frame.data[0].y, table[:, 2 * i])
        np.testing.assert_array_equal(frame.data[1].y, table[:, 2 * i + 1])
        assert frame.data[2].x[0] == 2 * i and frame.data[2].x[3] == 2 * i + 1  # the marked columns


def test_rope_explorer_draws_cos_and_sin_of_rotary_embedding() -> None:
    fig = viz.positional_encoding_explorer("rope", num_positions=12, dim=6)
    cos, sin = RotaryEmbedding(6)(12)  # (1, P, E)
    table = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(table[:, :3], cos[0, :, :3].numpy(), atol=1e-7)
    np.testing.assert_allclose(table[:, 3:], sin[0, :, :3].numpy(), atol=1e-7)
    for i, frame in enumerate(fig.frames):  # pair i is (i, i + E/2) in the half-split convention
        np.testing.assert_array_equal(frame.data[0].y, table[:, i])
        np.testing.assert_array_equal(frame.data[1].y, table[:, i + 3])


def test_positional_explorer_draws_a_given_table() -> None:
    table = torch.linspace(-1, 1, 24).reshape(6, 4)
    fig = viz.positional_encoding_explorer(encoding=table)
    np.testing.assert_allclose(fig.data[0].z, table.double().numpy())


def test_positional_explorer_rejects_unknown_kind_and_odd_width() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        viz.positional_encoding_explorer("alibi")
    with pytest.raises(ValueError, match="encoding must have an even number of features"):
        viz.positional_encoding_explorer(encoding=torch.zeros(4, 5))


# --- learned_position_explorer, t5_bucket_explorer, alibi_explorer, recent_window ------------------


def nan_grid(z) -> np.ndarray:
    """A heatmap's z with ``None`` (a gap) as NaN."""
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)


def test_learned_explorer_draws_the_cosines_and_one_frame_per_reference_position() -> None:
    table = torch.randn(10, 6, generator=torch.Generator().manual_seed(0))
    fig = viz.learned_position_explorer(table, trained_positions=4, stride=3)
    unit = table.double() / table.double().norm(dim=1, keepdim=True)
    cosine = (unit @ unit.T).numpy()
    np.testing.assert_allclose(nan_grid(fig.data[0].z), cosine, atol=5e-4)  # rounded to 3 decimals
    np.testing.assert_allclose(np.diag(cosine), 1.0, atol=1e-12)
    assert slider_labels(fig) == [f.name for f in fig.frames] == ["0", "3", "6", "9"]
    for frame in fig.frames:
        ref = int(frame.name)
        np.testing.assert_allclose(frame.data[0].y, cosine[ref], atol=5e-4)
        assert list(frame.data[1].y) == [ref, ref]  # the reference row marked on the heatmap
    (shaded,) = fig.layout.shapes
    assert (shaded.x0, shaded.x1) == (3.5, 9.5)  # positions 4 .. 9 were never trained


def test_learned_explorer_rejects_zero_rows_and_bad_ranges() -> None:
    with pytest.raises(ValueError, match="all-zero row at position 2"):
        viz.learned_position_explorer(torch.ones(4, 3).index_fill(0, torch.tensor([2]), 0.0))
    with pytest.raises(ValueError, match=r"trained_positions must lie in \[1, 4\], got 5"):
        viz.learned_position_explorer(torch.ones(4, 3), trained_positions=5)
    with pytest.raises(ValueError, match="table must have 2 dimensions"):
        viz.learned_position_explorer(torch.ones(4))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_explorer_gives_every_cell_of_a_bucket_one_bias(bidirectional: bool) -> None:
    length, counts = 20, (4, 8, 16)
    fig = viz.t5_bucket_explorer(length, counts, max_distance=12, bidirectional=bidirectional)
    assert slider_labels(fig) == [f.name for f in fig.frames] == ["4", "8", "16"]
    offsets = torch.arange(length)[None, :] - torch.arange(length)[:, None]  # (L, S): j - i
    for n, frame in zip(counts, fig.frames):
        bias = np.asarray(frame.data[0].z)
        bucket = relative_position_bucket(offsets, bidirectional, n, 12).numpy()
        for b in np.unique(bucket):  # one value per bucket, a different one for each bucket
            assert len(np.unique(bias[bucket == b])) == 1
        assert len(np.unique(bias)) == len(np.unique(bucket))
        line = torch.arange(-(length - 1), length)
        np.testing.assert_array_equal(frame.data[1].x, line.numpy())
        np.testing.assert_array_equal(frame.data[1].y, relative_position_bucket(line, bidirectional, n, 12).numpy())
    np.testing.assert_array_equal(fig.data[0].z, fig.frames[0].data[0].z)  # drawn first: the first step


def test_t5_explorer_rejects_no_buckets_and_invalid_settings() -> None:
    with pytest.raises(ValueError, match="num_buckets must hold at least one"):
        viz.t5_bucket_explorer(8, ())
    with pytest.raises(ValueError, match="max_distance"):
        viz.t5_bucket_explorer(8, (8,), max_distance=2)


def test_recent_window_counts_back_from_the_diagonal() -> None:
    uniform = torch.tril(torch.ones(5, 5))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    assert viz.recent_window(uniform, 0.9).tolist() == [1, 2, 3, 4, 5]  # ceil(0.9 (i + 1))
    assert viz.recent_window(uniform, 0.5).tolist() == [1, 1, 2, 2, 3]
    weights = random_weights(6, 6, seed=3).tril()
    weights = weights / weights.sum(-1, keepdim=True)
    for i, n in enumerate(viz.recent_window(weights, 0.8)):  # brute force: the smallest n that reaches 0.8
        recent = [weights[i, i - k + 1:i + 1].sum().item() for k in range(1, i + 2)]
        assert n == next(k for k, mass in enumerate(recent, start=1) if mass >= 0.8 - 1e-9)
    with pytest.raises(ValueError, match="coverage must lie in"):
        viz.recent_window(uniform, 0.0)
    with pytest.raises(ValueError, match="weights must be square"):
        viz.recent_window(uniform[:3], 0.9)


@pytest.mark.parametrize("heads", [8, 6])
def test_alibi_explorer_draws_each_heads_bias_and_softmax_steepest_first(heads: int) -> None:
    length = 12
    fig = viz.alibi_explorer(heads, length)
    slopes = alibi_slopes(heads, dtype=torch.float64)
    order = torch.argsort(slopes, descending=True).tolist()
    assert slider_labels(fig) == [f"1/{1 / slopes[h].item():.3g}" for h in order]
    bias = alibi_bias(heads, length, length, is_causal=True, dtype=torch.float64)[0]  # (H, L, L)
    weights = torch.softmax(bias, dim=-1)
    future = np.triu(np.ones((length, length), dtype=bool), k=1)
    widths = []
    for h, frame in zip(order, fig.frames):
        drawn_bias, drawn_weights = nan_grid(frame.data[0].z), nan_grid(frame.data[1].z)
        assert np.isnan(drawn_bias[future]).all() and np.isnan(drawn_weights[future]).all()  # masked: no cell
        np.testing.assert_allclose(drawn_bias[~future], bias[h].numpy()[~future], atol=5e-3)
        np.testing.assert_allclose(drawn_weights[~future], weights[h].numpy()[~future], atol=5e-4)
        window = viz.recent_window(weights[h])
        np.testing.assert_allclose(frame.data[2].x, np.arange(length) - window + 0.5)
        widths.append(window[-1])
        assert f"its last {window[-1]} keys" in frame.layout.title.text
    assert widths == sorted(widths) and widths[0] < widths[-1]  # gentler slope, wider window


# --- training_replay ------------------------------------------------------------------------------


def test_training_replay_has_one_frame_and_step_per_capture() -> None:
    frames = random_weights(4, 3, 5)  # (T, L, S)
    fig = viz.training_replay(frames, steps=[0, 10, 20, 30], losses=[2.0, 1.0, 0.5, 0.25])
    assert slider_labels(fig) == [f.name for f in fig.frames] == ["0", "10", "20", "30"]
    for t, frame in enumerate(fig.frames):
        np.testing.assert_array_equal(frame.data[0].z, frames[t].numpy())
    assert fig.frames[2].layout.title.text.endswith("(step 20, loss 0.500)")
    np.testing.assert_array_equal(fig.data[0].z, frames[0].numpy())


def test_training_replay_accepts_a_list_and_checks_lengths() -> None:
    frames = [random_weights(2, 2, seed=s) for s in range(3)]
    fig = viz.training_replay(frames)
    assert slider_labels(fig) == ["0", "1", "2"]
    with pytest.raises(ValueError, match="steps has 2 values, but there are 3 frames"):
        viz.training_replay(frames, steps=[0, 1])
    with pytest.raises(ValueError, match=r"frames must all have one shape \(L, S\)"):
        viz.training_replay([random_weights(2, 2), random_weights(3, 3)])


# --- line_sweep, line_plot, bar -------------------------------------------------------------------


def test_line_sweep_frames_hold_each_parameter_curves_and_fix_the_axes() -> None:
    x = [1.0, 2.0, 3.0]
    curves = {16: {"measured": [1.0, 2.0, 3.0], "theory": [1.0, 2.0, 2.5]},
              64: {"measured": [4.0, 8.0, 16.0], "theory": [4.0, 8.0, 12.0]}}
    fig = viz.line_sweep(x, curves, param_name="d_k")
    assert slider_labels(fig) == [f.name for f in fig.frames] == ["16", "64"]
    assert fig.layout.sliders[0].currentvalue.prefix == "d_k = "
    for frame, ys in zip(fig.frames, curves.values()):
        np.testing.assert_array_equal(frame.data[0].y, ys["measured"])
        np.testing.assert_array_equal(frame.data[1].y, ys["theory"])
    low, high = fig.layout.yaxis.range
    assert low <= 1.0 and high >= 16.0


def test_line_sweep_active_value_is_drawn_first_and_dropdown_has_one_button_per_frame() -> None:
    curves = {16: {"m": [1.0, 2.0]}, 32: {"m": [3.0, 4.0]}, 64: {"m": [5.0, 6.0]}}
    fig = viz.line_sweep([0.0, 1.0], curves, param_name="H", active=32)
    np.testing.assert_array_equal(fig.data[0].y, [3.0, 4.0])
    assert fig.layout.sliders[0].active == 1
    menu = viz.line_sweep([0.0, 1.0], curves, param_name="H", control="dropdown", active=64)
    assert not menu.layout.sliders and menu.layout.updatemenus[0].active == 2
    buttons = menu.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["H = 16", "H = 32", "H = 64"]
    assert [b.args[0][0] for b in buttons] == [f.name for f in menu.frames] == ["16", "32", "64"]
    np.testing.assert_array_equal(menu.data[0].y, [5.0, 6.0])
    with pytest.raises(ValueError, match="active must be one of"):
        viz.line_sweep([0.0, 1.0], curves, active=8)
    with pytest.raises(ValueError, match="control must be"):
        viz.line_sweep([0.0, 1.0], curves, control="knob")


def test_line_sweep_rejects_mismatched_curves() -> None:
    with pytest.raises(ValueError, match=r"curves\[2\] has curves \['b'\], but the first parameter value has \['a'\]"):
        viz.line_sweep([0, 1], {1: {"a": [0, 1]}, 2: {"b": [0, 1]}})
    with pytest.raises(ValueError, match=r"curves\[1\]\['a'\] has 3 values, but x has 2"):
        viz.line_sweep([0, 1], {1: {"a": [0, 1, 2]}})


def test_line_plot_and_bar_hold_their_data() -> None:
    fig = viz.line_plot([1, 2, 4], {"measured": [1.1, 2.0, 3.9], "theory": [1, 2, 4]}, log_x=True)
    assert [t.name for t in fig.data] == ["measured", "theory"]
    np.testing.assert_array_equal(fig.data[0].y, [1.1, 2.0, 3.9])
    assert fig.layout.xaxis.type == "log"
    bars = viz.bar(["a", "b"], torch.tensor([0.5, 1.5]), errors=[0.1, 0.2])
    assert bars.data[0].x == ("a", "b") and tuple(bars.data[0].y) == (0.5, 1.5)
    assert tuple(bars.data[0].error_y.array) == (0.1, 0.2)
    with pytest.raises(ValueError, match="values has 3 entries, but labels has 2"):
        viz.bar(["a", "b"], [1, 2, 3])


# --- the renderer ---------------------------------------------------------------------------------


def decode(value):
    """Plotly's JSON writes arrays as base64 typed arrays ({dtype, bdata, shape}): back to NumPy."""
    import base64

    array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    return array.reshape([int(n) for n in value["shape"].split(",")]) if "shape" in value else array


def spec_from_html(html: str) -> dict:
    match = re.search(r"var spec = (\{.*?\});\n", html, flags=re.DOTALL)
    assert match, "no figure spec in the HTML"
    return json.loads(match.group(1))


def test_mime_bundle_has_html_and_plotly_json_and_no_url(live: None) -> None:
    fig = viz.attention_heatmap(random_weights(2, 3, 3), ["a", "b", "c"])
    bundle = viz.mime_bundle(fig)
    assert set(bundle) == {"text/html", "application/vnd.plotly.v1+json", "text/plain"}
    assert not URL.search(bundle["text/html"]) and not URL.search(json.dumps(bundle))
    assert "<script src" not in bundle["text/html"] and "cdn" not in bundle["text/html"].lower()
    assert "Plotly.newPlot" in bundle["text/html"]
    assert bundle["application/vnd.plotly.v1+json"]["layout"]["title"]["text"] == fig.layout.title.text
    assert "frames" not in bundle["application/vnd.plotly.v1+json"]  # one layer: no slider, no frames


def test_figure_html_embeds_the_figure_data_and_frames() -> None:
    weights = random_weights(2, 2, 3, 3)
    spec = spec_from_html(viz.figure_html(viz.attention_heatmap(weights)))
    np.testing.assert_array_equal(decode(spec["data"][1]["z"]), weights[0, 1].numpy())
    np.testing.assert_array_equal(decode(spec["frames"][1]["data"][0]["z"]), weights[1, 0].numpy())
    assert [frame["name"] for frame in spec["frames"]] == ["layer 0", "layer 1"]
    assert spec["config"]["responsive"] is True and "width" not in spec["layout"]


def test_figure_html_escapes_a_closing_script_tag_in_the_data() -> None:
    html = viz.figure_html(viz.bar(["</script><b>x"], [1.0]))
    assert html.count("</script>") == 1  # only the figure's own
    assert spec_from_html(html)["data"][0]["x"] == ["</script><b>x"]


def test_book_build_bundle_leaves_out_the_plotly_json(book_build: None) -> None:
    bundle = viz.mime_bundle(viz.bar(["a"], [1.0]))
    assert set(bundle) == {"text/html", "text/plain"}  # myst-nb would warn on the Plotly mime type


@pytest.fixture
def notebook(monkeypatch: pytest.MonkeyPatch):
    """As if in a notebook kernel; the default renderer is put back afterwards."""
    previous = pio.renderers.default
    monkeypatch.setattr(viz.renderer, "in_notebook", lambda: True)
    yield
    pio.renderers.default = previous


def test_a_figure_shown_in_a_notebook_uses_the_book_renderer(live: None, notebook: None) -> None:
    assert viz.setup_book() == "book" and pio.templates.default == "book"
    bundle = viz.bar(["a"], [1.0])._repr_mimebundle_()
    assert "text/html" in bundle and "application/vnd.plotly.v1+json" in bundle
    assert "book-plotly-figure" in bundle["text/html"]


def test_a_plain_script_keeps_plotlys_default_renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viz.renderer, "in_notebook", lambda: False)
    previous = pio.renderers.default
    assert viz.setup_book() == previous != "book"
    assert "book" in pio.renderers  # registered all the same, for pio.show(fig, renderer="book")


def test_colab_falls_back_to_plotly_colab_renderer(monkeypatch: pytest.MonkeyPatch, notebook: None) -> None:
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    try:
        assert viz.setup_book() == "colab"
    finally:
        monkeypatch.delitem(sys.modules, "google.colab")
        assert viz.setup_book() == "book"


def test_dark_theme_patch_recolours_text_grid_and_controls() -> None:
    fig = viz.softmax_temperature_explorer([1.0, 0.0], [0.5, 1.0])
    light, dark = style.theme_patch(fig, dark=False), style.theme_patch(fig, dark=True)
    assert set(light) == set(dark)
    for key in ("font.color", "xaxis3.gridcolor", "yaxis2.gridcolor", "sliders[0].font.color", "sliders[0].bgcolor"):
        assert light[key] != dark[key]
    assert fig.layout.template.layout.paper_bgcolor == "rgba(0, 0, 0, 0)"  # transparent on both themes


# --- live explorers -------------------------------------------------------------------------------


def test_softmax_explorer_redraws_from_the_static_figure_function(live: None) -> None:
    explorer = viz.softmax_explorer(n_keys=6, seed=3)
    explorer.controls["d_k"].value = 256
    temperature = float(viz.explorers.TEMPERATURES[18])
    explorer.controls["temperature"].value = temperature
    scores = viz.softmax_scores(256, 6, scaled=False, seed=3)
    active = 18
    expected = viz.softmax_temperature_explorer(scores, viz.explorers.TEMPERATURES, active=active)
    np.testing.assert_allclose(explorer.figure.data[1].y, expected.data[1].y)
    np.testing.assert_allclose(explorer.figure.data[0].y, expected.data[0].y)
    explorer.controls["scaled"].value = True
    np.testing.assert_allclose(explorer.figure.data[0].y,
                               viz.softmax_scores(256, 6, scaled=True, seed=3).numpy() / explorer.values["temperature"])
    assert explorer.figure.layout.title.text.startswith("d_k = 256, scores ÷ √d_k")


def test_explorer_shows_its_static_figure_and_builds_no_widget_in_a_book_build(
        book_build: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = []
    monkeypatch.setattr(viz.explorers, "display", shown.append)
    explorer = viz.softmax_explorer()
    explorer._ipython_display_()
    assert explorer._built is None  # no widget state would reach the page
    assert isinstance(shown[0], go.Figure) and len(shown[0].frames) == len(viz.explorers.TEMPERATURES)


def test_on_colab_an_explorer_turns_on_the_custom_widget_manager(live: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    colab = types.ModuleType("google.colab")
    colab.output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("enabled"))
    if "google" not in sys.modules:
        monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    explorer = viz.softmax_explorer()
    assert calls == []  # nothing is built before it is shown
    assert explorer.widget is not None and calls == ["enabled"]


def test_softmax_scores_variance_is_d_k_unscaled_and_1_scaled() -> None:
    unscaled = torch.cat([viz.softmax_scores(64, 256, scaled=False, seed=s) for s in range(8)])
    scaled = torch.cat([viz.softmax_scores(64, 256, scaled=True, seed=s) for s in range(8)])
    assert abs(unscaled.var().item() / 64 - 1) < 0.15 and abs(scaled.var().item() - 1) < 0.15


# --- show_source ----------------------------------------------------------------------------------


def test_show_source_is_the_function_source_in_a_python_block() -> None:
    import inspect

    listing = viz.show_source(viz.softmax_with_temperature)
    markdown = listing._repr_markdown_()
    assert inspect.getsource(viz.softmax_with_temperature).rstrip() in markdown
    assert markdown.startswith("`softmax_with_temperature` from `helpers/viz/softmax.py`, line ")
    assert "\n```python\n" in markdown and markdown.rstrip().endswith("```")


def test_show_source_dedents_methods_and_rejects_builtins() -> None:
    markdown = viz.show_source(viz.Explorer.static_figure)._repr_markdown_()
    assert "`Explorer.static_figure`" in markdown and "\ndef static_figure(self)" in markdown
    with pytest.raises(TypeError, match="obj must be a Python function, class, method or module"):
        viz.show_source(len)


# --- BertViz and the real model (loads all-MiniLM-L6-v2 from its PyPI package: a few seconds) -----

SENTENCE = "The cat sat on the mat."


def bertviz_params(html: str) -> dict:
    match = re.search(r"const params = (\{.*?\});", html)
    assert match, "no BertViz params in the HTML"
    return json.loads(match.group(1).replace("__bookMode", '"light"'))


@pytest.mark.slow
def test_sentence_attention_is_the_eager_models_output_and_rows_sum_to_1() -> None:
    model, tokenizer = viz.load_attention_model()
    assert model.config._attn_implementation == "eager" and not model.training
    weights, tokens, b_start = viz.sentence_attention(SENTENCE)
    assert tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"] and b_start is None
    assert weights.shape == (6, 12, 9, 9)
    torch.testing.assert_close(weights.sum(-1), torch.ones(6, 12, 9))
    with torch.no_grad():
        out = model(**tokenizer(SENTENCE, return_tensors="pt"), output_attentions=True)
    torch.testing.assert_close(weights[3], out.attentions[3][0])
    assert viz.load_attention_model() is viz.load_attention_model()  # cached


@pytest.mark.slow
def test_sentence_pair_marks_where_sentence_b_starts() -> None:
    _, tokens, b_start = viz.sentence_attention("A cat.", "A dog.")
    assert tokens[b_start - 1] == "[SEP]" and tokens[b_start:] == ["a", "dog", ".", "[SEP]"]


@pytest.mark.slow
def test_head_view_on_the_site_loads_its_scripts_from_the_site(book_build: None) -> None:
    html = viz.head_view(SENTENCE, layers=[0, 5]).data
    assert not URL.search(html) and "<script src" not in html
    for path in ("_static/vendor/requirejs/require.js", "_static/vendor/d3/d3.min", "_static/vendor/jquery/jquery.min"):
        assert path in html
    assert "document.documentElement.dataset.content_root" in html  # site-relative from any page depth
    params = bertviz_params(html)
    assert params["include_layers"] == [0, 5] and html.count('"attn":') == 1  # the data once, not twice
    assert params["attention"][0]["left_text"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    weights, _, _ = viz.sentence_attention(SENTENCE)
    np.testing.assert_allclose(params["attention"][0]["attn"][1], weights[5].numpy(), atol=5e-5)  # 4 decimals


@pytest.mark.slow
def test_head_view_in_a_kernel_loads_requirejs_first_from_bertviz_cdn(live: None) -> None:
    html = viz.head_view(SENTENCE).data
    assert "<script src" not in html  # RequireJS is loaded by the view's script, then BertViz runs
    assert "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js" in html
    assert html.index("function run(__bookMode)") < html.index("requirejs(['jquery', 'd3']")
    assert re.search(r"ready\(\)\.then\(function \(\) \{\s*window\.require\.config\(.*?run\(shown\)", html, re.DOTALL)


@pytest.mark.slow
def test_model_view_takes_the_theme_of_the_page(book_build: None) -> None:
    html = viz.model_view(SENTENCE, layers=[1], heads=[0, 3]).data
    assert '"display_mode": __bookMode' in html and "MutationObserver" in html
    params = bertviz_params(html)
    assert params["include_layers"] == [1] and params["include_heads"] == [0, 3]


@pytest.mark.slow
def test_bertviz_views_guard_long_inputs_and_bad_layers() -> None:
    with pytest.raises(ValueError, match=r"text has 9 tokens, more than max_tokens=8"):
        viz.head_view(SENTENCE, max_tokens=8)
    with pytest.raises(ValueError, match=r"layers must be a non-empty list of indices in 0\.\.5, got \[6\]"):
        viz.head_view(SENTENCE, layers=[6])
    with pytest.raises(ValueError, match=r"heads must be a non-empty list of indices in 0\.\.11"):
        viz.model_view(SENTENCE, heads=[12])
    with pytest.raises(TypeError, match="text must be a string"):
        viz.head_view(["a", "list"])


def test_weights_head_view_writes_only_the_layers_offered() -> None:
    """Chapter 7's decoder: weights computed elsewhere, 30 layers held, a few written into the page."""
    weights = torch.rand(5, 1, 3, 4, 4).softmax(-1)  # (N, 1, H, L, L): a batch of one, as model.run gives it
    html = viz.weights_head_view(list(weights), ["a", "b", "c", "d"], layers=[1, 3], heads=[2]).data
    params = bertviz_params(html)
    assert params["include_layers"] == [1, 3] and params["attention"][0]["left_text"] == ["a", "b", "c", "d"]
    assert len(params["attention"][0]["attn"]) == 2  # the two layers offered, not all five
    np.testing.assert_allclose(params["attention"][0]["attn"][1], weights[3, 0].numpy(), atol=5e-5)
    with pytest.raises(ValueError, match="L = 3 tokens"):
        viz.weights_head_view(weights, ["a", "b", "c"])


def test_load_attention_model_fails_clearly_without_attention_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers

    class NoAttentions(torch.nn.Module):
        def forward(self, **_: object) -> types.SimpleNamespace:
            return types.SimpleNamespace(attentions=())

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", lambda *a, **k: NoAttentions())
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained",
                        lambda *a, **k: lambda *t, **kw: {"input_ids": torch.ones(1, 2, dtype=torch.long)})
    viz.load_attention_model.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="returned no attention weights .* attn_implementation='eager'"):
            viz.load_attention_model("some/model")
    finally:
        viz.load_attention_model.cache_clear()


@pytest.mark.slow
def test_sentence_explorer_redraws_for_a_new_sentence_and_reports_a_long_one(live: None) -> None:
    explorer = viz.sentence_attention_explorer(SENTENCE)
    explorer.controls["layer"].value = 2
    explorer.controls["head"].value = 7
    weights, tokens, _ = viz.sentence_attention(SENTENCE)
    np.testing.assert_array_equal(explorer.figure.data[0].z, weights[2, 7].numpy())
    explorer.controls["text"].value = "Dogs bark."
    weights, tokens, _ = viz.sentence_attention("Dogs bark.")
    assert plain(explorer.figure.data[0].x) == tokens
    np.testing.assert_array_equal(explorer.figure.data[0].z, weights[2, 7].numpy())
    explorer.controls["text"].value = "word " * 40
    assert "more than max_tokens=32" in explorer.status.value and explorer.values["text"] == "Dogs bark."
    static = explorer.static_figure()
    assert len(static.frames) == 6 and len(static.data) == 12


def test_log_axes_over_two_decades_label_powers_of_ten_only() -> None:
    d_k = [1, 4, 16, 64, 256, 1024]
    fig = viz.line_plot(d_k, {"variance": [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0]}, log_x=True, log_y=True)
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.dtick == 1
    assert fig.layout.yaxis.dtick == 1
    narrow = viz.line_sweep([1.0, 3.0], {1: {"a": [1.0, 2.0]}}, log_x=True)
    assert narrow.layout.xaxis.type == "log" and narrow.layout.xaxis.dtick is None  # under two decades: default ticks


def test_captioned_figure_on_the_site_is_one_figure_with_its_caption_and_text_alternative(monkeypatch) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    fig = viz.line_plot([1, 2, 3], {"loss": [3.0, 2.0, 1.0]}, title="Loss <b>falls</b>")
    figure = viz.captioned(fig, "The loss falls & keeps falling.", alt="A line falling from 3 to 1 over 3 steps.")
    InteractiveShell.instance()
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    with capture_output() as site:
        figure._ipython_display_()
    [output] = site.outputs
    page = output.data["text/html"]
    assert page.count("<figure") == 1 and 'class="book-figure"' in page and "Plotly.newPlot" in page
    assert "<figcaption>The loss falls &amp; keeps falling.</figcaption>" in page
    # named by its title, described by the text alternative (a group, not an image: it holds controls)
    assert re.search(r'<div class="book-plotly" role="group" aria-label="Loss falls" aria-describedby="(fig-\w+)-alt">'
                     r'<p id="\1-alt" class="book-figure-alt" [^>]*>A line falling from 3 to 1 over 3 steps\.</p>',
                     page)
    monkeypatch.delenv(BOOK_BUILD_ENV)
    monkeypatch.setattr(pio.renderers, "default", "book")  # what setup_book() chooses in a kernel
    with capture_output() as live:  # JupyterLab/Colab: the figure as usual, then the caption as text
        figure._ipython_display_()
    assert len(live.outputs) == 2 and "**Figure.** The loss falls" in live.outputs[1].data["text/markdown"]


def test_figure_without_caption_is_labelled_by_its_title() -> None:
    page = viz.figure_html(viz.line_plot([1, 2], {"a": [1.0, 2.0]}, title="A <b>title</b>"))
    assert "<figure" not in page and 'role="figure" aria-label="A title"' in page


@pytest.mark.parametrize("caption,alt,error", [("", "alt text", "caption"), ("A takeaway.", "  ", "alt")])
def test_captioned_needs_a_caption_and_a_text_alternative(caption: str, alt: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        viz.captioned(go.Figure(), caption, alt=alt)
    with pytest.raises(TypeError, match="fig must be a plotly"):
        viz.captioned({"data": []}, "A takeaway.", alt="alt")  # type: ignore[arg-type]


def test_captioned_html_view_is_wrapped_in_the_same_figure(monkeypatch) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import HTML
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    with capture_output() as site:
        view = viz.captioned(HTML("<div class='view'>lines</div>"), "Heads differ.", alt="Lines between tokens.")
        view._ipython_display_()
    page = site.outputs[0].data["text/html"]
    assert page.startswith('<figure class="book-figure"><div role="group" aria-label="Lines between tokens.">')
    assert "<div class='view'>lines</div>" in page and "<figcaption>Heads differ.</figcaption></figure>" in page
