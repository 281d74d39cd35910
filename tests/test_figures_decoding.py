"""Chapter 6.4's cache-size figure: every number it draws is ``kv_cache_bytes``, and its two controls
(a slider over batch and dtype, a menu over the 7B model's key/value heads) touch different things."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from helpers.experiments import decoding as dec
from helpers.figures import decoding as fig
from helpers.figures.style import significant
from helpers.memory import kv_cache_bytes

LENGTHS = [512, 4096, 131072]
BATCHES = [1, 8, 32]
DTYPES = [torch.float32, torch.bfloat16, torch.float8_e4m3fn]


@pytest.fixture(scope="module")
def figure_and_table() -> tuple:
    table = dec.cache_size_table(LENGTHS, BATCHES, DTYPES)
    return fig.cache_size_figure(LENGTHS, table, kv_heads=(32, 8, 1)), table


def test_every_slider_step_and_menu_choice_draws_kv_cache_bytes(figure_and_table: tuple) -> None:
    figure, table = figure_and_table
    mha = next(iter(dec.MODEL_SHAPES.values()))
    others = [name for name in dec.MODEL_SHAPES if name != mha.name]
    assert [t.name for t in figure.data][3:] == [*others, "80 GiB (one large GPU)"]
    assert len(figure.frames) == len(figure.layout.sliders[0].steps) == len(BATCHES) * len(DTYPES)
    for (batch, dtype), frame in zip(table, figure.frames):
        for trace, heads in zip(frame.data, (32, 8, 1)):  # traces 0-2: the 7B shape with 32, 8, 1 K/V heads
            gib = [kv_cache_bytes(32, heads, 128, n, batch, dtype) / 2**30 for n in LENGTHS]
            assert list(trace.y) == significant(gib, 3), (batch, dtype, heads)
        for trace, name in zip(frame.data[3:5], others):
            shape = dec.MODEL_SHAPES[name]
            gib = [kv_cache_bytes(shape.num_layers, shape.num_kv_heads, shape.head_dim, n, batch, dtype) / 2**30
                   for n in LENGTHS]
            assert list(trace.y) == significant(gib, 3), (batch, dtype, name)
        assert list(frame.data[5].y) == [80.0] * len(LENGTHS)
        assert all(trace.visible is None for trace in frame.data)  # a step leaves the menu's choice alone
    # grouping divides the cache by the group size: 32 -> 8 heads is 4x, 32 -> 1 is 32x (to 3 significant digits)
    last = figure.frames[-1].data
    assert last[0].y[-1] == pytest.approx(4 * last[1].y[-1], rel=5e-3) == pytest.approx(32 * last[2].y[-1], rel=5e-3)


def test_the_menu_shows_exactly_one_number_of_kv_heads(figure_and_table: tuple) -> None:
    figure, _ = figure_and_table
    (menu,) = figure.layout.updatemenus
    assert [b.label for b in menu.buttons] == ["7B: 32 K/V heads (MHA)", "7B: 8 K/V heads (GQA)",
                                               "7B: 1 K/V head (MQA)"]
    for k, button in enumerate(menu.buttons):
        assert button.method == "restyle"
        visible, traces = button.args
        assert list(traces) == [0, 1, 2] and list(visible["visible"]) == [i == k for i in range(3)]
    assert [t.visible for t in figure.data[:3]] == [None, False, False]  # opens on the menu's first choice
    assert menu.active == 0 and figure.data[0].line.color == figure.data[1].line.color == figure.data[2].line.color


def test_another_shape_and_bad_kv_heads() -> None:
    table = dec.cache_size_table([1024], [1], [torch.bfloat16])
    small = dataclasses.replace(next(iter(dec.MODEL_SHAPES.values())), name="toy, MHA", num_layers=2, num_heads=4,
                                num_kv_heads=4)
    figure = fig.cache_size_figure([1024], table, kv_heads=(4, 2), shape=small)
    assert [t.name for t in figure.data[:2]] == ["toy, MHA", "toy with 2 K/V heads (GQA-2)"]
    assert figure.data[0].y[0] == significant([kv_cache_bytes(2, 4, 128, 1024, 1, torch.bfloat16) / 2**30], 3)[0]
    assert len(figure.data) == 2 + len(dec.MODEL_SHAPES) + 1  # the 7B MHA curve of the table is kept: not `shape`
    for bad in ((), (3,), (0,), (True,)):
        with pytest.raises(ValueError, match="kv_heads must be divisors of shape.num_heads = 32"):
            fig.cache_size_figure([1024], table, kv_heads=bad)


def test_the_kv_heads_table_prints_every_timing_and_the_ratio_to_multi_head() -> None:
    heads = {"kv_heads": [8.0, 4.0, 2.0, 1.0], "cache_bytes": [8 * 2**20, 4 * 2**20, 2 * 2**20, 2**20],
             "grouped": [0.004, 0.003, 0.002, 0.001], "repeat_kv": [0.005, 0.03, 0.02, 0.002],
             "enable_gqa": [0.004, 0.005, 0.002, 0.001]}
    table = fig.kv_heads_table(heads)
    rows = table.splitlines()
    assert rows[2].startswith("| 8 (multi-head) | 8 | 4.00 | 5.00 | 4.00 | 1.00 |")
    assert rows[3].startswith("| 4 (grouped-query) | 4 | 3.00 | 30.00 | 5.00 | 1.25 |")
    assert rows[5].startswith("| 1 (multi-query) | 1 | 1.00 | 2.00 | 1.00 | 0.25 |")
