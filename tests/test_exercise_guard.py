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
from helpers.exercises.guard import ATTENTION, AUTOGRAD, DISTRIBUTIONS, LEAVING_TORCH, CallWatch, watching
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


def test_a_module_not_imported_yet_is_watched_without_importing_it(tmp_path, monkeypatch) -> None:
    """Naming ``transformers`` in ``forbidden`` must not cost its import (seconds) when nothing imported it."""
    (tmp_path / "slow_module_for_the_guard").mkdir()
    (tmp_path / "slow_module_for_the_guard" / "__init__.py").write_text("def attend(x):\n    return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_module_for_the_guard", raising=False)
    slow = ("slow_module_for_the_guard",)
    watch = CallWatch(forbidden=slow)
    assert "slow_module_for_the_guard" not in sys.modules and watch.reached is None

    def importing(x):
        import slow_module_for_the_guard
        return slow_module_for_the_guard.attend(x)
    assert "slow_module_for_the_guard." in _refused(importing, torch.ones(2), forbidden=slow)  # its import ran its code
    assert "slow_module_for_the_guard.attend" in _refused(importing, torch.ones(2), forbidden=slow)  # now imported
    assert call_watched(lambda x: x * 2, torch.ones(2), forbidden=slow).sum() == 4


def test_a_forbidden_c_function_wrapped_in_a_partial_is_refused() -> None:
    # calling a partial of a C function makes one C call (the partial's), none for the function itself
    fused = functools.partial(torch._C._nn.scaled_dot_product_attention)
    assert "scaled_dot_product_attention" in _refused(lambda q, k, v: fused(q, k, v), *_inputs(), forbidden=ATTENTION)
    twice = functools.partial(functools.partial(torch._C._nn.scaled_dot_product_attention))
    assert "scaled_dot_product_attention" in _refused(lambda q, k, v: twice(q, k, v), *_inputs(), forbidden=ATTENTION)
    off = functools.partial(sys.setprofile, None)
    assert "sys.setprofile" in _refused(lambda q, k, v: (off(), honest_attention(q, k, v))[1], *_inputs())
    assert sys.getprofile() is None


def test_a_forbidden_c_function_called_from_c_is_refused() -> None:
    # a partial of a C function, or map, calls it from C: the profile function sees no call of it
    fused = functools.partial(torch._C._nn.scaled_dot_product_attention)
    assert "scaled_dot_product_attention" in _refused(lambda q, k, v: fused(q, k, v), *_inputs(), forbidden=ATTENTION)
    mapped = lambda q, k, v: next(map(torch._C._nn.scaled_dot_product_attention, [q], [k], [v]))  # noqa: E731
    assert "scaled_dot_product_attention" in _refused(mapped, *_inputs(), forbidden=ATTENTION)
    cosine = functools.partial(torch.cosine_similarity, dim=-1)
    assert "cosine_similarity" in _refused(lambda q, k: cosine(q[:, None], k[None]), torch.randn(3, 4),
                                           torch.randn(5, 4), forbidden=(torch.cosine_similarity,))

    def threaded(q, k):
        box = []
        thread = threading.Thread(target=lambda: box.append(cosine(q[:, None], k[None])))
        thread.start()
        thread.join()
        return box[0]
    assert "cosine_similarity" in _refused(threaded, torch.randn(3, 4), torch.randn(5, 4),
                                           forbidden=(torch.cosine_similarity,))
    # an honest answer is not disturbed
    assert call_watched(lambda q, k, v: honest_attention(q, k, v), *_inputs(), forbidden=ATTENTION).shape == (2, 3, 4)


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


def test_an_import_the_answer_triggers_is_not_a_call_of_what_the_import_runs(tmp_path, monkeypatch) -> None:
    """transformers puts a finder on sys.meta_path: every import after it calls that finder's find_spec,
    from the import system; and torch imports modules lazily on a first call (torch._dynamo, whose
    modules call torch.ops at import). An honest answer that triggers an import is not refused for
    what the import system runs, while calling transformers or torch.ops itself still is."""
    import importlib

    import transformers  # noqa: F401 (installs its finder)

    from helpers.exercises.guard import TRANSFORMERS

    def imports(q, k, v):
        try:
            importlib.import_module("a_module_that_does_not_exist_anywhere")
        except ImportError:
            pass
        return honest_attention(q, k, v)
    assert call_watched(imports, *_inputs(), forbidden=TRANSFORMERS).shape == (2, 3, 4)
    (tmp_path / "lazy_module_calling_ops.py").write_text("import torch\nONE = torch.ops.aten.add(torch.ones(1), 0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def lazy(q, k, v):
        import lazy_module_calling_ops  # noqa: F401 (its body calls torch.ops, as torch._inductor's do)
        return honest_attention(q, k, v)
    assert call_watched(lazy, *_inputs(), forbidden=ATTENTION).shape == (2, 3, 4)
    from transformers.models.llama.modeling_llama import rotate_half
    assert "transformers" in _refused(lambda q, k, v: rotate_half(q), *_inputs(), forbidden=TRANSFORMERS)
    assert "torch._ops" in _refused(lambda q, k, v: torch.ops.aten.add(q, 0), *_inputs(), forbidden=ATTENTION)


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


def test_an_answer_that_reads_the_checkers_frames_or_objects_is_refused() -> None:
    def checker_like(answer):
        expected = torch.arange(3.0)  # a checker's reference, in its locals  # noqa: F841
        return call_watched(answer)
    for peek in (lambda: sys._getframe(2).f_locals["expected"],
                 lambda: __import__("inspect").stack()[3].frame.f_locals["expected"],
                 lambda: next(o for o in __import__("gc").get_objects() if isinstance(o, torch.Tensor))):
        with pytest.raises(Rejected) as caught:
            checker_like(peek)
        assert "frames or objects" in caught.value.verdict.message


def test_a_library_that_reads_frames_itself_is_not_the_answers_doing() -> None:
    import collections
    point = call_watched(lambda: collections.namedtuple("Point", "x y")(1, 2))  # namedtuple calls sys._getframe
    assert point.x == 1


def test_a_tensor_subclass_that_redefines_comparison_is_refused() -> None:
    from helpers.exercises.reader import as_tensor

    class AlwaysClose(torch.Tensor):
        pass
    with pytest.raises(Rejected) as caught:
        as_tensor(torch.zeros(2).as_subclass(AlwaysClose), "scores")
    assert "plain torch.Tensor" in caught.value.verdict.message
    assert as_tensor(torch.nn.Parameter(torch.zeros(2)), "weights").shape == (2,)


def test_a_torch_function_called_from_c_code_is_seen() -> None:
    """functools.partial of a C function, or map, call it from C: no profile event, but the torch
    function mode the watch enters sees it."""
    q, k, v = _inputs()
    bound = functools.partial(F.scaled_dot_product_attention)
    assert "scaled_dot_product_attention" in _refused(lambda q, k, v: bound(q, k, v), q, k, v, forbidden=ATTENTION)
    by_map = lambda q, k, v: list(map(F.scaled_dot_product_attention, [q], [k], [v]))[0]  # noqa: E731
    assert "scaled_dot_product_attention" in _refused(by_map, q, k, v, forbidden=ATTENTION)
    # an allowed package function may use it itself (the layer calls F.scaled_dot_product_attention
    # when no weights are asked for); an honest answer passes under the mode
    layer = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    through_layer = lambda x: layer(x, x, x, need_weights=False)[0]  # noqa: E731
    out = call_watched(through_layer, x, forbidden=ATTENTION, allowed=(MultiHeadAttention,))
    torch.testing.assert_close(out, layer(x, x, x, need_weights=False)[0])
    torch.testing.assert_close(call_watched(honest_attention, q, k, v, forbidden=ATTENTION),
                               F.scaled_dot_product_attention(q, k, v))
    assert not torch.overrides.has_torch_function_variadic()  # the mode is gone after the watch


def test_naming_a_module_not_imported_yet_does_not_import_it_and_still_watches_it(tmp_path) -> None:
    """ATTENTION names transformers, whose import takes seconds: a watch registers its files without
    importing it, and code of the module imported while the answer runs is still refused."""
    import subprocess

    script = (
        "import sys\n"
        "from helpers.exercises.guard import ATTENTION, CallWatch\n"
        "CallWatch(ATTENTION)\n"
        "assert 'transformers' not in sys.modules, 'naming transformers imported it'\n"
        "from helpers.exercises.reader import Rejected, call_watched\n"
        "def answer():\n"
        "    import json.decoder\n"
        "    return json.decoder.JSONDecoder().decode('[1]')\n"
        "sys.modules.pop('json.decoder', None); sys.modules.pop('json', None)\n"
        "try:\n"
        "    call_watched(answer, forbidden=('json',))\n"
        "except Rejected as rejected:\n"
        "    assert 'json.decoder' in rejected.verdict.message, rejected.verdict.message\n"
        "else:\n"
        "    raise AssertionError('a module imported by the answer was not watched')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)



def test_a_cached_function_may_be_named_in_forbidden_and_allowed() -> None:
    # functools.lru_cache used to be refused as a target (TypeError), which broke a checker that named one
    from helpers.exercises.ch03 import expected_entropy

    @functools.lru_cache(maxsize=4)
    def cached(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    assert "cached" in _refused(lambda t: cached(t), torch.ones(3), forbidden=(cached,))  # its code runs: seen
    rows = 100 + int(torch.randint(0, 10**6, (1,)))  # a call the cache has not seen
    assert call_watched(lambda d: expected_entropy(d, 4, num_rows=rows), 2, allowed=(expected_entropy,)) > 0
    assert "expected_entropy" in _refused(lambda d: expected_entropy(d, 4, num_rows=rows + 1), 2)


def test_a_cached_package_function_is_refused_also_on_a_cache_hit() -> None:
    from helpers.exercises import ch03

    ch03.expected_entropy(8, num_rows=64)  # fills the cache: the answer's call below runs no Python code of it
    message = _refused(lambda: ch03.expected_entropy(8, num_rows=64))
    assert "expected_entropy" in message


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


def test_the_answer_runs_on_a_stack_that_holds_no_frame_of_the_checker() -> None:
    """A traceback's frames (attribute reads: no call for the watch to see) lead nowhere near the
    checker's locals, where its expected result lies; the caller's grad mode follows the answer."""
    def up_the_traceback():
        try:
            raise RuntimeError
        except RuntimeError as error:
            frame = error.__traceback__.tb_frame
        while frame is not None:
            if "expected" in frame.f_locals:
                return frame.f_locals["expected"]
            frame = frame.f_back
        return None

    def checker_like(answer):
        expected = torch.arange(3.0)  # noqa: F841 (what the answer looks for)
        with torch.no_grad():
            return call_watched(answer), call_watched(lambda: torch.is_grad_enabled())
    found, grad = checker_like(up_the_traceback)
    assert found is None and grad is False


def test_private_attention_kernels_and_other_libraries_are_refused_where_attention_is() -> None:
    q, k, v = _inputs()
    assert "_scaled_dot_product_attention_math" in _refused(
        lambda q, k, v: torch._scaled_dot_product_attention_math(q, k, v)[0], q, k, v, forbidden=ATTENTION)
    from scipy.special import softmax as scipy_softmax
    by_scipy = lambda q, k, v: torch.from_numpy(scipy_softmax(q.numpy() @ k.numpy().transpose(0, 2, 1), -1))  # noqa: E731
    assert "scipy" in _refused(by_scipy, q, k, v, forbidden=ATTENTION)
    # NumPy itself is arithmetic, not attention: a reimplementation in NumPy is the reader's own work ...
    numpy_scores = lambda q, k, v: torch.from_numpy(q.numpy() @ k.numpy().transpose(0, 2, 1))  # noqa: E731
    assert call_watched(numpy_scores, q, k, v, forbidden=ATTENTION).shape == (2, 3, 5)
    # ... except where a checker measures the work of PyTorch operations (LEAVING_TORCH)
    assert "numpy" in _refused(numpy_scores, q, k, v, forbidden=LEAVING_TORCH)
    import numpy as np
    asarray_scores = lambda q, k, v: torch.from_numpy(np.asarray(q) @ np.asarray(k).transpose(0, 2, 1))  # noqa: E731
    assert "__array__" in _refused(asarray_scores, q, k, v, forbidden=LEAVING_TORCH)


def test_the_autograd_engine_reached_directly_is_refused_where_autograd_is() -> None:
    from torch.autograd import Variable

    def by_engine(z):
        z = z.clone().requires_grad_(True)
        p = torch.softmax(z, -1)
        grads = Variable._execution_engine.run_backward((p[0],), (torch.ones(()),), False, False, (z,), True, False)
        return grads[0]
    message = _refused(by_engine, torch.randn(5), forbidden=AUTOGRAD)  # every use of autograd needs a tensor that
    assert "torch.autograd" in message and "requires_grad" in message  # requires grad: named without private names


def test_an_answer_that_switches_its_own_threads_watch_off_through_a_partial_is_refused() -> None:
    off = functools.partial(sys.setprofile, None)  # called from C: the watch sees the partial, not setprofile
    message = _refused(lambda: (off(), helpers.scaled_dot_product_attention)[1])
    assert "sys.setprofile" in message

