"""Tests of helpers.masks: every mask against a brute-force loop over (i, j)."""

from __future__ import annotations

import itertools
import warnings

import pytest
import torch
from torch.nn.attention.bias import causal_lower_right, causal_upper_left

from helpers.masks import (
    bigbird_mask,
    block_local_mask,
    causal_mask,
    combine_masks,
    dilated_mask,
    global_tokens_mask,
    padding_mask,
    random_mask,
    sliding_window_mask,
)

SIZES = [(1, 1), (4, 4), (3, 7), (7, 3), (9, 9)]


def brute(L: int, S: int, rule) -> torch.Tensor:
    """The mask defined entry by entry: mask[i, j] = rule(i, j)."""
    return torch.tensor([[bool(rule(i, j)) for j in range(S)] for i in range(L)], dtype=torch.bool).reshape(
        L, S
    )


@pytest.mark.parametrize("L,S", SIZES)
def test_causal_top_left_matches_loop_and_torch_upper_left(L: int, S: int) -> None:
    mask = causal_mask(L, S)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, brute(L, S, lambda i, j: j <= i))
    assert torch.equal(mask, causal_upper_left(L, S)._materialize().bool())


@pytest.mark.parametrize("L,S", SIZES)
def test_causal_bottom_right_matches_loop_and_torch_lower_right(L: int, S: int) -> None:
    mask = causal_mask(L, S, align="bottom_right")
    assert torch.equal(mask, brute(L, S, lambda i, j: j <= i + S - L))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that rows are empty when L > S: that is the point
        reference = causal_lower_right(L, S)._materialize().bool()
    assert torch.equal(mask, reference)


def test_causal_default_S_is_L_and_square_alignments_agree() -> None:
    assert torch.equal(causal_mask(5), causal_mask(5, 5, align="bottom_right"))
    assert causal_mask(5).sum().item() == 15  # 5 * 6 / 2


@pytest.mark.parametrize("lengths", [[3, 0, 5], [5], [1, 2, 3, 4]])
def test_padding_mask_matches_loop_and_broadcasts_to_weights(lengths: list[int]) -> None:
    S = 5
    mask = padding_mask(torch.tensor(lengths), S)
    assert mask.shape == (len(lengths), 1, 1, S) and mask.dtype == torch.bool
    for b, n in enumerate(lengths):
        assert torch.equal(mask[b, 0, 0], torch.tensor([j < n for j in range(S)]))
    assert torch.equal(padding_mask(lengths, S), mask)  # a list gives the same mask
    weights_shape = (len(lengths), 2, 3, S)
    assert torch.broadcast_shapes(mask.shape, weights_shape) == weights_shape


@pytest.mark.parametrize("L,S", SIZES)
@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_sliding_window_matches_loop(L: int, S: int, window: int, causal: bool) -> None:
    rule = (lambda i, j: 0 <= i - j < window) if causal else (lambda i, j: abs(i - j) < window)
    assert torch.equal(sliding_window_mask(L, S, window, is_causal=causal), brute(L, S, rule))


def test_causal_sliding_window_sees_exactly_window_keys_once_warm() -> None:
    mask = sliding_window_mask(10, 10, 4, is_causal=True)
    assert mask.sum(-1).tolist() == [1, 2, 3, 4, 4, 4, 4, 4, 4, 4]


@pytest.mark.parametrize("L,S", SIZES)
@pytest.mark.parametrize("window,dilation", [(1, 3), (2, 2), (3, 2), (2, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_dilated_matches_loop(L: int, S: int, window: int, dilation: int, causal: bool) -> None:
    def rule(i: int, j: int) -> bool:
        d = i - j
        return d % dilation == 0 and abs(d) // dilation < window and (d >= 0 or not causal)

    assert torch.equal(dilated_mask(L, S, window, dilation, is_causal=causal), brute(L, S, rule))


def test_dilation_one_is_sliding_window() -> None:
    assert torch.equal(dilated_mask(8, 8, 3, 1), sliding_window_mask(8, 8, 3))


@pytest.mark.parametrize("L,S", SIZES)
@pytest.mark.parametrize("block_size", [1, 2, 3])
def test_block_local_matches_loop(L: int, S: int, block_size: int) -> None:
    expected = brute(L, S, lambda i, j: i // block_size == j // block_size)
    assert torch.equal(block_local_mask(L, S, block_size), expected)


@pytest.mark.parametrize(
    "L,S,indices", [(5, 5, []), (5, 5, [0]), (5, 5, [0, 2]), (3, 6, [0, 4]), (6, 3, [1, 5]), (3, 6, [5])]
)
def test_global_tokens_matches_loop(L: int, S: int, indices: list[int]) -> None:
    expected = brute(L, S, lambda i, j: i in indices or j in indices)
    assert torch.equal(global_tokens_mask(L, S, indices), expected)
    assert torch.equal(global_tokens_mask(L, S, torch.tensor(indices, dtype=torch.long)), expected)


def test_random_mask_has_num_random_per_row_and_is_seeded() -> None:
    a = random_mask(6, 10, 3, generator=torch.Generator().manual_seed(7))
    b = random_mask(6, 10, 3, generator=torch.Generator().manual_seed(7))
    c = random_mask(6, 10, 3, generator=torch.Generator().manual_seed(8))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert a.sum(-1).tolist() == [3] * 6
    assert random_mask(4, 5, 5).all() and not random_mask(4, 5, 0).any()


def test_random_mask_is_uniform_over_keys() -> None:
    counts = random_mask(4000, 8, 2, generator=torch.Generator().manual_seed(0)).sum(0).float()
    # each key is chosen with probability 2/8 per row: 1000 +- 3 standard deviations (~27.4)
    assert ((counts - 1000).abs() < 90).all(), counts


def _block_view(mask: torch.Tensor, block_size: int) -> torch.Tensor:
    """Block-level mask, after checking that each (query block, key block) tile is constant."""
    L, S = mask.shape
    rows, cols = -(-L // block_size), -(-S // block_size)
    blocks = torch.zeros(rows, cols, dtype=torch.bool)
    for a, b in itertools.product(range(rows), range(cols)):
        tile = mask[a * block_size : (a + 1) * block_size, b * block_size : (b + 1) * block_size]
        assert tile.all() or not tile.any(), f"tile ({a}, {b}) is not uniform"
        blocks[a, b] = tile.all()
    return blocks


@pytest.mark.parametrize("L,S,block_size", [(16, 16, 2), (15, 15, 4), (12, 20, 4)])
@pytest.mark.parametrize("globals_,window,randoms", [(1, 3, 1), (2, 1, 2), (0, 3, 0), (1, 5, 3)])
def test_bigbird_has_global_window_and_random_block_structure(
    L: int, S: int, block_size: int, globals_: int, window: int, randoms: int
) -> None:
    gen = torch.Generator().manual_seed(3)
    mask = bigbird_mask(
        L,
        S,
        block_size=block_size,
        num_global_blocks=globals_,
        window_blocks=window,
        num_random_blocks=randoms,
        generator=gen,
    )
    blocks = _block_view(mask, block_size)
    rows, cols = blocks.shape
    for a in range(rows):
        fixed = {b for b in range(cols) if b < globals_ or a < globals_ or abs(a - b) <= window // 2}
        seen = {b for b in range(cols) if blocks[a, b]}
        assert fixed <= seen, (a, fixed, seen)  # global + window always present
        if a < globals_:
            assert seen == set(range(cols))  # global query blocks see everything
        else:
            assert len(seen - fixed) == min(randoms, cols - len(fixed))  # exactly r extra random blocks
    assert blocks[:, :globals_].all()  # every block sees the global blocks
    same = bigbird_mask(
        L,
        S,
        block_size=block_size,
        num_global_blocks=globals_,
        window_blocks=window,
        num_random_blocks=randoms,
        generator=torch.Generator().manual_seed(3),
    )
    assert torch.equal(mask, same)


def test_bigbird_without_random_is_window_or_global_composition() -> None:
    bb = bigbird_mask(12, 12, block_size=3, num_global_blocks=1, window_blocks=3, num_random_blocks=0)
    token_block = torch.arange(12) // 3
    window = (token_block[:, None] - token_block[None, :]).abs() <= 1
    glob = global_tokens_mask(12, 12, [0, 1, 2])
    assert torch.equal(bb, combine_masks(window, glob))


def test_combine_masks_or_and_broadcast() -> None:
    a, b = causal_mask(4), padding_mask([2, 4], 4)
    union, inter = combine_masks(a, b), combine_masks(a, b, mode="and")
    assert union.shape == inter.shape == (2, 1, 4, 4)
    for k, i, j in itertools.product(range(2), range(4), range(4)):
        assert union[k, 0, i, j] == (bool(a[i, j]) or bool(b[k, 0, 0, j]))
        assert inter[k, 0, i, j] == (bool(a[i, j]) and bool(b[k, 0, 0, j]))
    assert torch.equal(combine_masks(a), a)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: causal_mask(-1), "L"),
        (lambda: causal_mask(3, 4, align="left"), "align"),
        (lambda: padding_mask([1, 7], 4), "lengths"),
        (lambda: padding_mask(torch.tensor([1.0]), 4), "lengths"),
        (lambda: sliding_window_mask(4, 4, 0), "window"),
        (lambda: dilated_mask(4, 4, 2, 0), "dilation"),
        (lambda: block_local_mask(4, 4, 0), "block_size"),
        (lambda: global_tokens_mask(4, 4, [4]), "global_indices"),
        (lambda: global_tokens_mask(4, 4, [-1]), "global_indices"),
        (lambda: random_mask(4, 4, 5), "num_random"),
        (lambda: random_mask(4, 4, -1), "num_random"),
        (
            lambda: bigbird_mask(
                8, 8, block_size=0, num_global_blocks=1, window_blocks=3, num_random_blocks=1
            ),
            "block_size",
        ),
        (
            lambda: bigbird_mask(
                8, 8, block_size=2, num_global_blocks=1, window_blocks=2, num_random_blocks=1
            ),
            "window_blocks",
        ),
        (
            lambda: bigbird_mask(
                8, 8, block_size=2, num_global_blocks=-1, window_blocks=3, num_random_blocks=1
            ),
            "num_global_blocks",
        ),
        (lambda: combine_masks(), "mask"),
        (lambda: combine_masks(causal_mask(3), mode="xor"), "mode"),
        (lambda: combine_masks(causal_mask(3), causal_mask(4)), "masks"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_argument(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: causal_mask(3.0), "L"),
        (lambda: padding_mask([1], 2.5), "S"),
        (lambda: padding_mask([1.0], 2), "lengths"),
        (lambda: sliding_window_mask(4, 4, 1.5), "window"),
        (lambda: block_local_mask(4, 4, True), "block_size"),
        (lambda: global_tokens_mask(4, 4, [1.5]), "global_indices"),
    ],
)
def test_arguments_of_the_wrong_type_raise_type_error_naming_the_argument(call, name: str) -> None:
    with pytest.raises(TypeError, match=name):
        call()


def test_combine_masks_rejects_float_masks_with_type_error() -> None:
    with pytest.raises(TypeError, match=r"masks\[1\]"):
        combine_masks(causal_mask(3), torch.zeros(3, 3))
