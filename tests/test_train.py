"""Tests of helpers.train: the loop learns, the schedule and clipping do what they say."""

import math

import pytest
import torch
from torch import nn

from helpers.diagnostics import attention_entropy
from helpers.train import (
    TrainingHistory,
    cross_entropy_loss,
    lr_schedule,
    num_threads,
    sequence_accuracy,
    set_seed,
    token_accuracy,
    train,
)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models run ~10x faster single-threaded on the shared 2-core machine."""
    with num_threads(1):
        yield


class TinyAttentionClassifier(nn.Module):
    """Embeds tokens, lets the last token attend to all, classifies: returns (logits, weights)."""

    def __init__(self, vocab_size: int, dim: int, num_classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.pos = nn.Parameter(torch.randn(16, dim) * 0.5)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]  # (B, L, D)
        scores = self.q(x[:, -1:]) @ self.k(x).transpose(1, 2) / math.sqrt(x.shape[-1])  # (B, 1, L)
        weights = scores.softmax(-1)  # (B, 1, L)
        return self.out((weights @ x).squeeze(1)), weights[:, None]  # (B, C), (B, 1, 1, L)


def _first_token_batches(step: int):
    """The class is the first token of a length-6 sequence over 5 tokens."""
    gen = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, 5, (64, 6), generator=gen)
    return tokens, tokens[:, 0]


def test_loss_goes_down_and_accuracy_goes_up_on_a_tiny_task():
    set_seed(0)
    model = TinyAttentionClassifier(5, 16, 5)
    history = train(model, _first_token_batches, steps=150, lr=1e-2, seed=0)
    assert len(history.loss) == len(history.accuracy) == len(history.wall_time) == 150
    first, last = sum(history.loss[:10]) / 10, sum(history.loss[-10:]) / 10
    assert first > math.log(5) * 0.8 and last < 0.1 * first
    assert sum(history.accuracy[-10:]) / 10 > 0.95
    assert all(b >= a for a, b in zip(history.wall_time, history.wall_time[1:]))


def test_training_is_deterministic_for_a_seed():
    losses = []
    for _ in range(2):
        set_seed(1)
        model = TinyAttentionClassifier(5, 8, 5)
        losses.append(train(model, _first_token_batches, steps=20, seed=1).loss)
    assert losses[0] == losses[1]


def test_warmup_schedule_equals_closed_form_and_is_what_the_loop_used():
    expected = [1e-2 * min(1.0, (t + 1) / 10) for t in range(25)]
    assert [lr_schedule(t, lr=1e-2, steps=25, warmup_steps=10) for t in range(25)] == pytest.approx(expected)
    assert lr_schedule(5, lr=0.3, steps=10) == 0.3
    set_seed(0)
    history = train(TinyAttentionClassifier(5, 8, 5), _first_token_batches, steps=25, lr=1e-2, warmup_steps=10)
    assert history.lr == pytest.approx(expected)


def test_decay_schedules_equal_closed_forms_after_warmup():
    steps, warmup = 30, 10
    for t in range(warmup, steps):
        p = (t - warmup) / (steps - warmup)
        assert lr_schedule(t, lr=2.0, steps=steps, warmup_steps=warmup, decay="linear") == pytest.approx(2.0 * (1 - p))
        cosine = lr_schedule(t, lr=2.0, steps=steps, warmup_steps=warmup, decay="cosine")
        assert cosine == pytest.approx(1.0 + math.cos(math.pi * p))
    assert lr_schedule(3, lr=2.0, steps=steps, warmup_steps=warmup, decay="cosine") == pytest.approx(0.8)
    history = train(TinyAttentionClassifier(5, 8, 5), _first_token_batches, steps=12, lr=1e-2, lr_decay="cosine")
    assert history.lr == pytest.approx([lr_schedule(t, lr=1e-2, steps=12, decay="cosine") for t in range(12)])
    with pytest.raises(ValueError, match="decay"):
        lr_schedule(0, lr=1.0, steps=5, decay="step")


def test_first_warmup_step_moves_parameters_less_than_full_lr():
    # Adam's first step moves each parameter by about lr (sign of the gradient), so the
    # displacement after one step scales with the step's learning rate.
    moves = []
    for warmup in (0, 100):
        set_seed(0)
        model = TinyAttentionClassifier(5, 8, 5)
        before = model.out.weight.detach().clone()
        train(model, _first_token_batches, steps=1, lr=1e-2, warmup_steps=warmup)
        moves.append((model.out.weight.detach() - before).abs().max().item())
    assert moves[0] == pytest.approx(1e-2, rel=0.01)
    assert moves[1] == pytest.approx(1e-4, rel=0.01)


def test_clipping_bounds_the_gradient_the_optimizer_sees():
    set_seed(0)
    model = TinyAttentionClassifier(5, 8, 5)
    seen = []

    def measure(step, model, history):
        grads = [p.grad.norm() for p in model.parameters() if p.grad is not None]
        seen.append(torch.linalg.vector_norm(torch.stack(grads)).item())

    history = train(model, _first_token_batches, steps=30, lr=1e-2, clip_grad_norm=0.05, callback=measure)
    assert max(history.grad_norm) > 0.05  # clipping was active
    assert all(n <= 0.05 * (1 + 1e-4) for n in history.clipped_grad_norm)
    assert history.clipped_grad_norm == pytest.approx(seen, rel=1e-6)
    for raw, clipped in zip(history.grad_norm, history.clipped_grad_norm):
        assert clipped == pytest.approx(min(raw, 0.05), rel=1e-4)


def test_recorded_grad_norms_per_parameter_match_their_total():
    set_seed(0)
    model = TinyAttentionClassifier(5, 8, 5)
    history = train(model, _first_token_batches, steps=5, record_grad_norms=True)
    assert set(history.grad_norms) == {name for name, _ in model.named_parameters()}
    for step in range(5):
        total = math.sqrt(sum(norms[step] ** 2 for norms in history.grad_norms.values()))
        assert total == pytest.approx(history.grad_norm[step], rel=1e-5)


def test_recorded_attention_entropy_equals_entropy_of_returned_weights():
    set_seed(0)
    model = TinyAttentionClassifier(5, 8, 5)
    snapshots = []

    def grab(step, model, history):
        model.eval()
        with torch.no_grad():
            snapshots.append(attention_entropy(model(_first_token_batches(step + 1)[0])[1]).mean().item())
        model.train()

    history = train(model, _first_token_batches, steps=3, lr=1e-9, record_attention_entropy=True, callback=grab)
    # with a negligible learning rate the weights at step t+1 are those after step t
    with torch.no_grad():
        initial = attention_entropy(model(_first_token_batches(0)[0])[1]).mean().item()
    assert history.attention_entropy[0] == pytest.approx(initial, rel=1e-4)
    assert history.attention_entropy[1:] == pytest.approx(snapshots[:-1], rel=1e-4)
    assert 0 < history.attention_entropy[0] <= math.log(6)
    assert history.attention_entropy_by_layer[0] == [history.attention_entropy[0]]


def test_attention_entropy_needs_a_model_that_returns_attention():
    model = nn.Sequential(nn.Embedding(5, 8), nn.Flatten(), nn.Linear(48, 5))
    with pytest.raises(ValueError, match="attention"):
        train(model, _first_token_batches, steps=2, record_attention_entropy=True)


def test_eval_fn_runs_every_eval_every_steps_and_at_the_end_in_eval_mode():
    set_seed(0)
    model = TinyAttentionClassifier(5, 8, 5)
    modes = []

    def evaluate(model):
        modes.append((model.training, torch.is_grad_enabled()))
        tokens, target = _first_token_batches(10_000)
        return {"acc": token_accuracy(model(tokens)[0], target)}

    history = train(model, _first_token_batches, steps=25, eval_fn=evaluate, eval_every=10)
    assert history.eval_step == [9, 19, 24]
    assert modes == [(False, False)] * 3 and model.training
    assert len(history.eval_series("acc")) == 3
    with pytest.raises(KeyError, match="acc"):
        history.eval_series("loss")


def test_callback_returning_true_stops_training():
    set_seed(0)
    model = TinyAttentionClassifier(5, 8, 5)
    history = train(model, _first_token_batches, steps=50, callback=lambda step, m, h: step == 4)
    assert history.step == [0, 1, 2, 3, 4]
    assert isinstance(history, TrainingHistory) and history.final_loss == history.loss[-1]


def test_tuple_and_dict_inputs_are_unpacked_into_the_model():
    class Adder(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Linear(2, 3)

        def forward(self, a, b):
            return self.w(a + b)

    x = torch.randn(4, 2)
    y = torch.tensor([0, 1, 2, 0])
    tuple_history = train(Adder(), lambda s: ((x, x), y), steps=2)
    dict_history = train(Adder(), lambda s: ({"a": x, "b": x}, y), steps=2)
    assert len(tuple_history.loss) == len(dict_history.loss) == 2


def test_token_and_sequence_accuracy_against_hand_counts():
    targets = torch.tensor([[1, 2, 3], [1, 2, 3], [0, 0, 0]])
    preds = torch.tensor([[1, 2, 3], [1, 0, 3], [0, 0, 1]])
    logits = torch.nn.functional.one_hot(preds, 4).float()
    assert token_accuracy(logits, targets) == pytest.approx(7 / 9)
    assert token_accuracy(preds, targets) == pytest.approx(7 / 9)
    assert sequence_accuracy(logits, targets) == pytest.approx(1 / 3)
    # ignoring token 0: row 2 holds only ignored targets, row 1 has one counted mistake
    assert token_accuracy(logits, targets, ignore_index=0) == pytest.approx(5 / 6)
    assert sequence_accuracy(logits, targets, ignore_index=0) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=r"logits \(3, 3, 5\) and targets \(3, 2\)"):
        token_accuracy(torch.zeros(3, 3, 5), targets[:, :2])


def test_cross_entropy_loss_equals_torch_over_flattened_positions():
    torch.manual_seed(0)
    logits, targets = torch.randn(4, 5, 7), torch.randint(0, 7, (4, 5))
    expected = torch.nn.functional.cross_entropy(logits.permute(0, 2, 1), targets)
    torch.testing.assert_close(cross_entropy_loss(logits, targets), expected)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"steps": 0}, ValueError, "steps"),
        ({"steps": 2, "lr": 0.0}, ValueError, "lr"),
        ({"steps": 2, "warmup_steps": -1}, ValueError, "warmup_steps"),
        ({"steps": 2, "clip_grad_norm": 0.0}, ValueError, "clip_grad_norm"),
        ({"steps": 2, "lr_decay": "exp"}, ValueError, "lr_decay"),
        ({"steps": 2, "seed": "0"}, TypeError, "seed"),
    ],
)
def test_bad_arguments_raise_errors_naming_the_argument(kwargs, error, message):
    with pytest.raises(error, match=message):
        train(TinyAttentionClassifier(5, 8, 5), _first_token_batches, **kwargs)


def test_a_model_returning_something_else_is_rejected():
    class Bad(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Linear(6, 5)

        def forward(self, tokens):
            return {"logits": self.w(tokens.float())}

    with pytest.raises(TypeError, match="logits"):
        train(Bad(), _first_token_batches, steps=1)


def test_num_threads_sets_and_restores_the_thread_count():
    before = torch.get_num_threads()
    with num_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        with num_threads(0):
            pass
