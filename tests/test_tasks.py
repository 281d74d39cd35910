"""Tests of helpers.tasks and helpers.vision_tasks: determinism, shapes, and labels checked by brute force."""

import pytest
import torch

from helpers.tasks import (
    FIRST_CONTENT_TOKEN,
    associative_recall_task,
    copy_task,
    reverse_task,
    sort_task,
    two_place_task,
)
from helpers.vision_tasks import channel_selection_images, spatial_object_images

SEQ_TASKS = [copy_task, reverse_task, sort_task]


def _all_tasks(seed: int) -> list[tuple[torch.Tensor, ...]]:
    return [
        copy_task(8, 7, 10, seed=seed),
        reverse_task(8, 7, 10, seed=seed),
        sort_task(8, 7, 10, seed=seed),
        associative_recall_task(8, 4, 6, 5, seed=seed),
        two_place_task(8, 6, 5, seed=seed),
        channel_selection_images(8, 6, 2, 8, seed=seed),
        spatial_object_images(8, 10, seed=seed),
    ]


def test_every_task_is_identical_for_the_same_seed_and_differs_across_seeds():
    first, again, other = _all_tasks(3), _all_tasks(3), _all_tasks(4)
    for a, b, c in zip(first, again, other):
        for x, y in zip(a, b):
            assert torch.equal(x, y)
        assert not all(torch.equal(x, z) for x, z in zip(a, c))


def test_tasks_do_not_touch_the_global_random_state():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    _all_tasks(1)
    torch.testing.assert_close(torch.rand(3), expected)


@pytest.mark.parametrize("task", SEQ_TASKS)
def test_sequence_tasks_shapes_and_content_token_range(task):
    src, tgt = task(50, 12, 7, seed=0)
    assert src.shape == tgt.shape == (50, 12)
    assert src.dtype == tgt.dtype == torch.int64
    assert src.min() >= FIRST_CONTENT_TOKEN and src.max() <= 6
    assert set(src.unique().tolist()) == set(range(FIRST_CONTENT_TOKEN, 7))


def test_copy_target_equals_source():
    src, tgt = copy_task(20, 9, 8, seed=1)
    assert torch.equal(src, tgt)


def test_reverse_target_is_source_read_backwards_brute_force():
    src, tgt = reverse_task(20, 9, 8, seed=1)
    for n in range(20):
        for i in range(9):
            assert tgt[n, i] == src[n, 8 - i]


def test_sort_target_is_sorted_permutation_of_source():
    src, tgt = sort_task(20, 9, 8, seed=1)
    for n in range(20):
        assert tgt[n].tolist() == sorted(src[n].tolist())


def test_associative_recall_target_is_value_of_queried_key_brute_force():
    tokens, target = associative_recall_task(200, 5, 8, 6, seed=2)
    assert tokens.shape == (200, 11) and target.shape == (200,)
    for n in range(200):
        seq = tokens[n].tolist()
        keys, values, query = seq[0:10:2], seq[1:10:2], seq[10]
        assert len(set(keys)) == 5 and all(0 <= k < 8 for k in keys)
        assert all(8 <= v < 14 for v in values)
        assert keys.count(query) == 1
        assert target[n] == values[keys.index(query)]
    # every pair slot is queried sometimes
    positions = {tokens[n, :10:2].tolist().index(tokens[n, 10].item()) for n in range(200)}
    assert positions == set(range(5))


def test_two_place_target_combines_the_two_marked_digits_brute_force():
    for op in ("sum", "compare"):
        tokens, target, positions = two_place_task(100, 7, 5, op=op, seed=3)
        assert tokens.shape == (100, 8) and target.shape == (100,) and positions.shape == (100, 2)
        for n in range(100):
            seq = tokens[n].tolist()
            assert seq[-1] == 15
            firsts = [k for k, t in enumerate(seq[:-1]) if 5 <= t < 10]
            seconds = [k for k, t in enumerate(seq[:-1]) if 10 <= t < 15]
            assert firsts == [positions[n, 0].item()] and seconds == [positions[n, 1].item()]
            a, b = seq[firsts[0]] - 5, seq[seconds[0]] - 10
            expected = (a + b) % 5 if op == "sum" else int(a > b)
            assert target[n] == expected


def test_channel_selection_informative_channels_show_the_label_pattern():
    images, labels, informative = channel_selection_images(300, 6, 2, 8, noise=0.0, seed=4)
    assert images.shape == (300, 6, 8, 8) and labels.shape == (300,) and informative.shape == (2,)
    assert informative.tolist() == sorted(informative.tolist())
    # with no noise each channel is exactly one class pattern: recover it by nearest pattern
    patterns = torch.stack([images[labels == k][0, informative[0]] for k in range(2)])  # (2, H, W)
    assert not torch.allclose(patterns[0], patterns[1])
    shown = ((images[:, :, None] - patterns[None, None]) ** 2).sum((-1, -2)).argmin(-1)  # (N, C)
    assert torch.equal(shown[:, informative], labels[:, None].expand(-1, 2))
    noise_channels = [c for c in range(6) if c not in informative.tolist()]
    agreement = (shown[:, noise_channels] == labels[:, None]).float().mean().item()
    assert 0.4 < agreement < 0.6  # decoys agree with the label by chance only


def test_spatial_object_mask_holds_the_labelled_shape():
    images, labels, masks = spatial_object_images(100, 12, noise=0.0, seed=5)
    assert images.shape == (100, 1, 12, 12) and masks.shape == (100, 12, 12)
    plus = torch.tensor([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=torch.bool)
    cross = torch.tensor([[1, 0, 1], [0, 1, 0], [1, 0, 1]], dtype=torch.bool)
    for n in range(100):
        rows, cols = masks[n].nonzero(as_tuple=True)
        assert len(rows) == 5
        r, c = rows.min().item(), cols.min().item()
        window = masks[n, r : r + 3, c : c + 3]
        assert torch.equal(window, plus if labels[n] == 0 else cross)
        # the object is drawn intact on top of the clutter
        assert torch.equal(images[n, 0, r : r + 3, c : c + 3] > 0.5, window)
    assert (images[:, 0] > 0.5).sum() > masks.sum()  # there is clutter outside the object


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: copy_task(4, 5, 2, seed=0), ValueError, "vocab_size"),
        (lambda: reverse_task(0, 5, 9, seed=0), ValueError, "num_samples"),
        (lambda: sort_task(4, 5.0, 9, seed=0), TypeError, "seq_len"),
        (lambda: copy_task(4, 5, 9, seed=1.5), TypeError, "seed"),
        (lambda: associative_recall_task(4, 6, 5, 3, seed=0), ValueError, "num_pairs"),
        (lambda: two_place_task(4, 5, 3, op="max", seed=0), ValueError, "op"),
        (lambda: channel_selection_images(4, 3, 4, 8, seed=0), ValueError, "informative"),
        (lambda: spatial_object_images(4, 4, seed=0), ValueError, "size"),
    ],
)
def test_bad_arguments_raise_errors_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()
