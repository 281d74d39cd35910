"""Chapter 6.5's Transformer-XL figure and the learned table kept by the extrapolation runs."""

from __future__ import annotations

import numpy as np
import torch

from helpers.experiments import position as pos
from helpers.figures import position as fig
from helpers.positional import transformer_xl_scores


def test_diagonal_spread_is_zero_exactly_for_a_function_of_i_minus_j() -> None:
    i, j = torch.meshgrid(torch.arange(4), torch.arange(7), indexing="ij")
    assert pos.diagonal_spread(torch.sin(1.0 * (i - j))) == 0.0
    assert pos.diagonal_spread((i * 10 + j).float()) == 33.0  # along a diagonal: +11 per row, 3 steps over 4 rows


def test_transformer_xl_terms_are_the_package_scores_of_one_head() -> None:
    terms = pos.transformer_xl_terms(seed=3, length=5, memory=4, head_dim=8, rel_dim=6)
    assert list(terms) == ["(a) q·k", "(b) q·W_R R", "(c) u·k", "(d) v·W_R R"]
    gen = torch.Generator().manual_seed(3)  # the same draws, in the same order
    query, key = torch.randn(1, 1, 5, 8, generator=gen), torch.randn(1, 1, 9, 8, generator=gen)
    w_r = torch.randn(1, 6, 8, generator=gen) / 3 ** 0.5
    u, v = torch.randn(2, 1, 8, generator=gen)
    for term, want in zip(terms.values(), transformer_xl_scores(query, key, w_r, u, v, query_offset=4)):
        assert term.shape == (5, 9)
        torch.testing.assert_close(term, want[0, 0])
    shared = pos.transformer_xl_terms(seed=3, length=5, memory=4, head_dim=8, rel_dim=6, shared_query=True)
    assert pos.diagonal_spread(shared["(b) q·W_R R"]) < 1e-5 < 0.1 < pos.diagonal_spread(terms["(b) q·W_R R"])
    torch.testing.assert_close(shared["(c) u·k"], terms["(c) u·k"])  # the query does not enter (c) or (d)
    torch.testing.assert_close(shared["(d) v·W_R R"], terms["(d) v·W_R R"])


def test_transformer_xl_figure_masks_future_keys_and_switches_inputs() -> None:
    xl = {"random": pos.transformer_xl_terms(length=3, memory=2), "shared": pos.transformer_xl_terms(length=3, memory=2,
                                                                                                   shared_query=True)}
    figure = fig.transformer_xl_figure(xl, memory=2)
    assert [a.text for a in figure.layout.annotations[:4]] == list(xl["random"])
    assert [f.name for f in figure.frames] == ["random", "shared"]
    assert [b.label for b in figure.layout.updatemenus[0].buttons] == ["random", "shared"]
    for frame, terms in zip(figure.frames, xl.values()):
        for trace, term in zip(frame.data, terms.values()):
            z = np.array([[np.nan if v is None else v for v in row] for row in trace.z], dtype=float)
            assert list(trace.y) == [2, 3, 4]  # query positions after the 2 cached keys
            future = np.arange(5)[None, :] > np.array([2, 3, 4])[:, None]  # key after its query
            assert np.isnan(z[future]).all()
            np.testing.assert_allclose(z[~future], term.numpy()[~future], atol=5e-3)
    limit = max(float(t.abs().max()) for terms in xl.values() for t in terms.values())
    assert figure.layout.coloraxis.cmax == limit == -figure.layout.coloraxis.cmin  # one scale for the four terms


def test_learned_runs_keep_their_table_and_untrained_rows_stay_at_initialisation() -> None:
    runs = pos.extrapolation_runs(("learned", "alibi"), (0,), train_len=6, test_len=12, steps=4, num_test=8)
    (learned,), (alibi,) = runs["learned"], runs["alibi"]
    assert learned.position_table.shape == learned.initial_position_table.shape == (12, 32)
    assert torch.equal(learned.position_table[5:], learned.initial_position_table[5:])  # inputs hold 5 tokens
    moved = (learned.position_table - learned.initial_position_table).abs().sum(dim=1)  # (12,)
    assert (moved[:5] > 0).all()  # every row an input used was trained
    assert alibi.position_table is None and alibi.initial_position_table is None
