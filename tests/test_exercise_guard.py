"""guard.CallWatch: what the answer's code runs is watched, not what it names; every route to a
forbidden function is caught and named, and an honest answer is never refused."""

from __future__ import annotations

import functools
import math
import sys
import threading

import pytest
import torch
import torch.nn.functional as F

import helpers
from helpers import attention
from helpers.exercises.guard import ATTENTION, AUTOGRAD, DISTRIBUTIONS, CallWatch, watching
from helpers.exercises.reader import Rejected, call_watched
from helpers.multihead import MultiHeadAttention


def honest_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)


def _refused(fn, *args, forbidden=(), allowed=(), passthrough=()) -> str:
    with pytest.raises(Rejected) as caught:
        call_watched(fn, *args, forbidden=forbidden, allowed=allowed, passthrough=passthrough)
    verdict = caught.value.verdict
    assert not verdict.passed
    return verdict.message


def _default_argument(q, k, v, _g=helpers.attention.scaled_dot_product_attention):
    return _g(q, k, v)[0]


def _closure():
    g = attention.scaled_dot_product_attention

    def answer(q, k, v):
        return g(q, k, v)[0]
    return answer


_TABLE = {"attend": helpers.scaled_dot_product_attention}


@pytest.mark.parametrize("route", [
    pytest.param(lambda: helpers.scaled_dot_product_attention, id="the function itself"),
    pytest.param(lambda: _default_argument, id="default argument"),
    pytest.param(_closure, id="closure"),
    pytest.param(lambda: lambda q, k, v: functools.partial(attention.scaled_dot_product_attention)(q, k, v)[0],
                 id="partial"),
    pytest.param(lambda: lambda q, k, v: _TABLE["attend"](q, k, v)[0], id="dict"),
    pytest.param(lambda: lambda q, k, v: attention.masked_softmax(q @ k.transpose(-2, -1)) @ v,
                 id="a package function no list names"),
])
def test_every_route_to_a_package_function_is_refused_and_named(route) -> None:
    message = _refused(route(), *_inputs())
    assert "helpers." in message and "write yourself" in message


def test_a_saved_bound_method_of_the_package_is_refused() -> None:
    layer = MultiHeadAttention(8, 2)
    saved = layer.forward
    message = _refused(lambda x: saved(x, x, x)[0], torch.randn(1, 3, 8))
    assert "helpers.MultiHeadAttention" in message


@pytest.mark.parametrize("answer, name", [
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), "scaled_dot_product_attention"),
    (lambda q, k, v: torch._C._nn.scaled_dot_product_attention(q, k, v), "scaled_dot_product_attention"),
    (lambda q, k, v: torch.nn.MultiheadAttention(4, 1, batch_first=True)(q, k, v)[0], "MultiheadAttention"),
    (lambda q, k, v: torch.ops.aten.scaled_dot_product_attention(q, k, v), "torch._ops"),
])
def test_pytorch_attention_is_refused_by_name(answer, name) -> None:
    assert name in _refused(answer, *_inputs(), forbidden=ATTENTION)


def test_autograd_and_distributions_are_refused_where_forbidden() -> None:
    logits = torch.randn(5)
    jacobian = lambda z: torch.func.jacrev(lambda t: torch.softmax(t, -1))(z)  # noqa: E731
    assert "torch" in _refused(jacobian, logits, forbidden=AUTOGRAD)
    by_grad = lambda z: torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), z)  # noqa: E731
    assert "torch.autograd" in _refused(by_grad, logits, forbidden=AUTOGRAD)
    entropy = lambda p: torch.distributions.Categorical(probs=p).entropy()  # noqa: E731
    assert "torch.distributions" in _refused(entropy, torch.softmax(logits, -1), forbidden=DISTRIBUTIONS)


def test_a_call_swallowed_by_try_except_is_still_refused() -> None:
    def sly(q, k, v):
        try:
            helpers.scaled_dot_product_attention(q, k, v, dropout_p=-1.0)  # raises; the call is still seen
        except Exception:
            pass
        return honest_attention(q, k, v)
    assert "helpers.scaled_dot_product_attention" in _refused(sly, *_inputs())


def test_an_answer_that_switches_the_watch_off_is_refused() -> None:
    def off(q, k, v):
        sys.setprofile(None)
        return helpers.scaled_dot_product_attention(q, k, v)[0]
    assert "sys.setprofile" in _refused(off, *_inputs())
    assert sys.getprofile() is None


def test_a_call_made_in_a_thread_the_answer_starts_is_seen() -> None:
    def threaded(q, k, v):
        box = []
        thread = threading.Thread(target=lambda: box.append(helpers.scaled_dot_product_attention(q, k, v)[0]))
        thread.start()
        thread.join()
        return box[0]
    assert "helpers.scaled_dot_product_attention" in _refused(threaded, *_inputs())


def test_honest_answers_in_any_style_pass_and_return_their_result() -> None:
    q, k, v = _inputs()
    out = call_watched(honest_attention, q, k, v, forbidden=ATTENTION + AUTOGRAD + DISTRIBUTIONS)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))

    def loops(q, k, v):
        rows = []
        for b in range(q.shape[0]):
            scores = torch.einsum("le,se->ls", q[b], k[b]) / q.shape[-1] ** 0.5
            rows.append(F.softmax(scores, dim=-1) @ v[b])
        return torch.stack(rows)
    torch.testing.assert_close(call_watched(loops, q, k, v, forbidden=ATTENTION), out)


def test_an_allowed_function_may_be_called_and_is_not_looked_into() -> None:
    q, k, v = _inputs()
    # causal_mask is allowed; it may use package code itself without the answer being refused
    masked = lambda q, k, v: honest_attention(q, k, v) if helpers.causal_mask(3, 5) is not None else None  # noqa: E731
    assert call_watched(masked, q, k, v, allowed=(helpers.causal_mask,)).shape == (2, 3, 4)
    assert "helpers.causal_mask" in _refused(masked, q, k, v)


def test_property_getters_of_given_objects_are_not_delegation() -> None:
    layer = MultiHeadAttention(8, 2)
    assert call_watched(lambda layer: layer.head_dim * layer.num_heads, layer) == 8


def test_a_passthrough_runs_the_answer_and_is_looked_into() -> None:
    q, k, v = _inputs()
    answer = _closure()

    def run_steps():
        return [answer(q, k, v) for _ in range(2)]  # a comprehension: nested code of the passthrough
    assert "helpers.scaled_dot_product_attention" in _refused(run_steps, passthrough=(run_steps,))

    def run_honest():
        return [honest_attention(q, k, v) for _ in range(2)]
    assert len(call_watched(run_honest, passthrough=(run_honest,))) == 2


def test_the_previous_profile_function_is_restored_also_after_an_error() -> None:
    events = []
    outer = lambda frame, event, arg: events.append(event)  # noqa: E731
    sys.setprofile(outer)
    try:
        watch = CallWatch()
        with pytest.raises(ValueError):
            with watching(watch):
                raise ValueError("the reader's code failed")
        assert sys.getprofile() is outer and not watch.tampered
    finally:
        sys.setprofile(None)


def test_a_target_that_names_nothing_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="cannot find 'helpers.attention.no_such_function'"):
        CallWatch(forbidden=("helpers.attention.no_such_function",))
    with pytest.raises(TypeError, match="forbidden and allowed take functions"):
        CallWatch(forbidden=(3,))


def test_a_forbidden_package_not_imported_yet_is_watched_without_importing_it(tmp_path, monkeypatch) -> None:
    """ATTENTION names transformers: resolving it must not import it (seconds) just to forbid it."""
    package = tmp_path / "guard_probe_package"
    package.mkdir()
    (package / "__init__.py").write_text("def attend(x):\n    return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "guard_probe_package", raising=False)
    watch = CallWatch(forbidden=("guard_probe_package",))
    assert "guard_probe_package" not in sys.modules

    def imports_and_calls(x):
        import guard_probe_package
        return guard_probe_package.attend(x)

    with watching(watch):
        imports_and_calls(3)
    assert watch.reached == "guard_probe_package.attend"
    assert "guard_probe_package.attend" in _refused(imports_and_calls, 3, forbidden=("guard_probe_package",))
