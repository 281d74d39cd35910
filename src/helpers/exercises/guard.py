"""Make sure an exercise is answered, not delegated: watch what the reader's code runs.

An exercise that asks for multi-head attention from scratch is not answered by calling
``helpers.MultiHeadAttention``, nor PyTorch's ``nn.MultiheadAttention``: such an answer passes any
numerical comparison and teaches nothing. A checker therefore runs the reader's function under a
:class:`.CallWatch`, which sees, with public hooks of Python and PyTorch only:

- every **Python function** the answer's code starts (:func:`sys.settrace`, its ``call`` events: one
  event a Python call, none for C calls or lines, so an honest answer runs at nearly full speed);
- every **PyTorch function** it calls (:class:`torch.overrides.TorchFunctionMode`), also one called
  from C (``functools.partial(torch.cosine_similarity)``, ``map``), where no Python hook sees a call;
- the interpreter's **audit events** (:func:`sys.addaudithook`): ``sys._getframe``,
  ``sys._current_frames``, ``gc.get_objects`` (reading the checker's frames or objects, where its
  reference lies) and ``sys.settrace``/``sys.setprofile`` (switching the watch off), by any route.

Because what is watched is the code that *runs*, not a name, every route to a forbidden function is
caught: a default argument, a closure, ``functools.partial``, a dict, a global, a saved bound method,
an alias, a copy of the module. A call swallowed by ``try``/``except`` is still recorded. What is
forbidden, by default, is *every* function of the package (``helpers``, its checkers included) but
the property getters of the objects the answer is given (``layer.head_dim``); an exercise lets the
answer reach a package function only by naming it in ``allowed`` (what an allowed function calls
itself is its own business). On top of that a checker names the third-party versions of the thing
practised; the groups below collect them:

==================================  ============================================================
:data:`~.targets.ATTENTION`         PyTorch's fused attention and its kernels, ``nn.MultiheadAttention``
                                    and its functional form, ``nn.Transformer*``, ``torch.ops``,
                                    transformers, and :data:`.LIBRARIES`
:data:`~.targets.LIBRARIES`         SciPy and scikit-learn (``cdist``, ``cosine_similarity``, ``entropy``)
:data:`~.targets.LEAVING_TORCH`     a tensor turned into NumPy or a list, where a checker measures the
                                    work of PyTorch operations (a NumPy rewrite is fine elsewhere)
:data:`~.targets.AUTOGRAD`          ``torch.autograd``, ``torch.func``, a tensor that requires grad
:data:`~.targets.DISTRIBUTIONS`     ``torch.distributions`` (``Categorical(...).entropy()``)
:data:`~.targets.TRANSFORMERS`      every module of Hugging Face transformers
==================================  ============================================================

What it does not follow: a thread started below ``threading`` (``_thread.start_new_thread``), a process, code
compiled to C. The audit events named above are those of Python 3.11 and later.

Where the answer runs (a fresh thread, a time limit, an interrupt) is :mod:`helpers.exercises.running`'s
business; the checkers use both through :func:`helpers.exercises.reader.call_watched`.
"""

from __future__ import annotations

import inspect
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from .targets import (
    ATTENTION,
    ATTENTION_KERNELS,
    AUTOGRAD,
    DISTRIBUTIONS,
    LEAVING_TORCH,
    LIBRARIES,
    PACKAGE,
    REQUIRES_GRAD,
    TRANSFORMERS,
    Targets,
    argument_properties,
    public_name,
    unwrap,
)

__all__ = ["CallWatch", "watching", "public_name", "ATTENTION", "LIBRARIES", "LEAVING_TORCH", "AUTOGRAD",
           "DISTRIBUTIONS", "TRANSFORMERS", "REQUIRES_GRAD", "ATTENTION_KERNELS"]


_PACKAGE_FOLDER = str(Path(__file__).resolve().parents[1]) + "/"
_OWN_FILES = frozenset({__file__, *(str(Path(__file__).with_name(name)) for name in ("running.py", "targets.py"))})
"""The guard's own code (its trace function, its function mode), which runs in the answer's thread."""
_LIBRARY_PATHS = tuple(sorted({path for key in ("stdlib", "platstdlib", "purelib", "platlib")
                               if (path := sysconfig.get_paths().get(key))}))
_PEEKING_EVENTS = frozenset({"sys._getframe", "sys._current_frames", "gc.get_objects", "gc.get_referrers",
                             "gc.get_referents"})
_TAMPERING_EVENTS = frozenset({"sys.settrace", "sys.setprofile"})
_PEEKING_CODES = frozenset(fn.__code__ for fn in (inspect.currentframe, inspect.stack, inspect.trace,
                                                  inspect.getouterframes, inspect.getinnerframes))
_TAMPERING_CODES = frozenset(fn.__code__ for fn in (threading.settrace, threading.setprofile,
                                                    getattr(threading, "settrace_all_threads", threading.settrace)))


class CallWatch:
    """What an answer may not reach while it runs, and what it reached.

    Args:
        forbidden: Functions, methods, classes (all their methods), modules, dotted paths or
            :class:`.TorchRule` the answer may not reach, on top of the whole package (e.g. :data:`.ATTENTION`).
        allowed: Package (or forbidden) functions, classes or modules the answer may call; what they call
            themselves is not looked into.
        package: Whether the package's own functions are forbidden (default ``True``).
        passthrough: Functions of the checker that call the answer (a closure that runs it on every step):
            neither forbidden nor allowed, they are looked into.
        arguments: What the answer is given: the property getters of the package's classes among them are
            allowed.
        count_work: Whether to count the elements of every tensor the answer's PyTorch calls return.

    Attributes:
        reached: The name of the first forbidden function the answer reached, or ``None``.
        tampered: Whether the answer tried to switch the watch off (``sys.settrace``, ``sys.setprofile``).
        peeked: Whether it tried to read the checker's frames or objects (``sys._getframe``, ``gc.get_objects``).
        calls: How many Python functions the answer started and PyTorch functions it called.
        elements: With ``count_work``, the elements of every tensor those PyTorch calls returned.
        max_numel, max_shape: With ``count_work``, the largest such tensor.
    """

    def __init__(self, forbidden: Iterable[Any] = (), allowed: Iterable[Any] = (), *, package: bool = True,
                 passthrough: Iterable[Callable[..., Any]] = (), arguments: Iterable[Any] = (),
                 count_work: bool = False) -> None:
        self._forbidden, self._allowed = Targets(), Targets()
        if package:
            self._forbidden.files.append((_PACKAGE_FOLDER, PACKAGE))
        for target in forbidden:
            self._forbidden.add(target)
        for target in allowed:
            self._allowed.add(target)
        self._allowed.codes.update(dict.fromkeys(argument_properties(arguments), ""))
        self._passthrough = frozenset().union(*(_nested_codes(unwrap(fn).__code__) for fn in passthrough))
        self._grad_rule = REQUIRES_GRAD in self._forbidden.rules
        self.count_work = count_work
        self.reached: str | None = None
        self.tampered = self.peeked = False
        self.calls = self.elements = self.max_numel = 0
        self.max_shape: tuple[int, ...] = ()
        self.threads: set[int] = set()  # the answer's threads: the audit hook looks at these only
        self.closed = False

    def allow(self, target: Any) -> None:
        """Allow one more function or class (e.g. the class of a PyTorch mode the checker runs the answer under)."""
        self._allowed.add(target)

    def _reach(self, name: str) -> None:
        if self.reached is None:
            self.reached = name

    def _excused(self, frame: types.FrameType | None) -> bool:
        """Whether a forbidden call made in ``frame`` is not the answer's own: made inside an allowed function,
        or by the import system (a module's body, a finder of ``sys.meta_path``)."""
        while frame is not None:
            code = frame.f_code
            if code in self._allowed.codes or code.co_filename.startswith("<frozen importlib"):
                return True
            if self._allowed.files and self._allowed.match_code(code, frame.f_globals.get("__name__", "")):
                return True
            frame = frame.f_back
        return False

    def trace(self, frame: types.FrameType, event: str, arg: Any) -> None:
        """The trace function (:func:`sys.settrace`) of the answer's threads: ``call`` events only."""
        if event != "call" or self.closed:
            return None
        code = frame.f_code
        if code.co_filename in _OWN_FILES or code in self._passthrough:
            return None
        self.calls += 1
        if code in _PEEKING_CODES or code in _TAMPERING_CODES:
            if not _library_code(frame.f_back):
                self.peeked |= code in _PEEKING_CODES
                self.tampered |= code in _TAMPERING_CODES
            return None
        name = self._forbidden.match_code(code, frame.f_globals.get("__name__", ""))
        if name is not None and not self._excused(frame):
            self._reach(name)
        return None

    def torch_call(self, func: Any) -> None:
        """A PyTorch function the answer's thread calls (seen by ``_TorchCalls`` before it runs)."""
        if self.closed:
            return
        self.calls += 1
        name = self._forbidden.match_torch(func)
        if name is not None and self.reached is None:
            with _quiet():
                if not self._excused(sys._getframe(2)):
                    self._reach(name)

    def torch_result(self, func: Any, args: tuple[Any, ...], out: Any) -> None:
        """What that PyTorch function returned: a tensor that requires grad, the work it did."""
        if self.closed or not (self._grad_rule or self.count_work):
            return
        if self._grad_rule and self.reached is None and any(t.requires_grad for t in _tensors((out, args[:1]))):
            with _quiet():
                if not self._excused(sys._getframe(2)):
                    self._reach(f"{REQUIRES_GRAD.name}: torch.{getattr(func, '__qualname__', func)}")
        if self.count_work:
            for t in _tensors(out):
                self.elements += t.numel()
                if t.numel() > self.max_numel:
                    self.max_numel, self.max_shape = t.numel(), tuple(t.shape)

    def audit(self, event: str, frame: types.FrameType | None) -> None:
        """An audit event raised by the answer's code (``frame``: the Python frame that raised it)."""
        if _library_code(frame) or (frame is not None and frame.f_code.co_filename in _OWN_FILES):
            return  # a library's own use (collections.namedtuple reads sys._getframe), or the guard's
        if event in _TAMPERING_EVENTS:
            self.tampered = True
        elif event in _PEEKING_EVENTS:
            self.peeked = True


def _tensors(value: Any) -> Iterable[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _library_code(frame: types.FrameType | None) -> bool:
    return frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_PATHS)


def _nested_codes(code: types.CodeType) -> set[types.CodeType]:
    """``code`` and every code object defined inside it (comprehensions, lambdas, inner functions)."""
    codes = {code}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            codes |= _nested_codes(const)
    return codes


_local = threading.local()


class _quiet:  # noqa: N801 (a context manager)
    """The guard's own ``sys._getframe`` calls are not the answer's: the audit hook ignores them."""

    def __enter__(self) -> None:
        _local.quiet = True

    def __exit__(self, *exc: object) -> None:
        _local.quiet = False


_WATCHES: list[CallWatch] = []
"""The watches in force (the innermost last) — the audit hook reports to the one whose threads raise an event."""


def _audit_hook(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHES or (event not in _PEEKING_EVENTS and event not in _TAMPERING_EVENTS) \
            or getattr(_local, "quiet", False):
        return
    ident = threading.get_ident()
    for watch in reversed(_WATCHES):
        if ident in watch.threads and not watch.closed:
            with _quiet():
                watch.audit(event, sys._getframe(1))
            return


_HOOKED: list[bool] = []


class _TorchCalls(TorchFunctionMode):
    """Shows :class:`.CallWatch` every PyTorch function called in this thread, from Python or from C."""

    def __init__(self, watch: CallWatch) -> None:
        super().__init__()
        self.watch = watch

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.watch.torch_call(func)
        out = func(*args, **(kwargs or {}))
        self.watch.torch_result(func, args, out)
        return out


_CACHED: dict[str, list[tuple[Any, types.CodeType, str]]] = {}
"""The package's ``functools.lru_cache`` functions, by module (found once a module is imported)."""


def _package_caches(watch: CallWatch) -> list[Any]:
    """The forbidden ``functools.lru_cache`` functions of the package: a call answered from the cache runs no
    Python code, so ``armed`` compares their hit counts."""
    for name, module in list(sys.modules.items()):
        if module is None or name in _CACHED or name.split(".")[0] != PACKAGE:
            continue
        found = []
        for value in list(vars(module).values()):
            for member in [value] + (list(vars(value).values()) if isinstance(value, type) else []):
                code = getattr(unwrap(member), "__code__", None)
                if hasattr(member, "cache_info") and getattr(member, "__module__", None) == name and code is not None:
                    found.append((member, code, name))
        _CACHED[name] = found
    return [member for found in _CACHED.values() for member, code, name in found
            if watch._forbidden.match_code(code, name) is not None and code not in watch._allowed.codes]


class armed:  # noqa: N801 (a context manager)
    """The watch's process-wide part, armed by the thread that waits for the answer: the trace function of the
    threads started meanwhile (``threading.settrace``), the audit hook, the package's caches."""

    def __init__(self, watch: CallWatch) -> None:
        self.watch = watch

    def __enter__(self) -> CallWatch:
        if not _HOOKED:
            sys.addaudithook(_audit_hook)  # for the session: an audit hook cannot be removed
            _HOOKED.append(True)
        self._caches = [(cache, cache.cache_info().hits) for cache in _package_caches(self.watch)]
        self._before = threading.gettrace()
        threading.settrace(self._new_thread)
        _WATCHES.append(self.watch)
        return self.watch

    def _new_thread(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        """The first event of a thread started while the watch is armed: the answer started it, so it is watched
        too, with a function mode of its own, which ends when the thread's ``run`` returns."""
        watch = self.watch
        if watch.closed or event != "call":
            return None
        watch.threads.add(threading.get_ident())
        mode = _TorchCalls(watch)
        mode.__enter__()

        def until_return(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "return":  # a mode left on a thread that ends aborts the process at exit
                mode.__exit__(None, None, None)
            return until_return

        with _quiet():
            sys.settrace(watch.trace)
        watch.trace(frame, event, arg)
        return until_return

    def __exit__(self, *exc: object) -> None:
        threading.settrace(self._before)
        if self.watch in _WATCHES:
            _WATCHES.remove(self.watch)
        for cache, hits in self._caches:  # a cache hit runs no Python code: no event
            if cache.cache_info().hits > hits:
                self.watch._reach(public_name(unwrap(cache)))


class watching:  # noqa: N801 (used as a function: ``with watching(watch):``)
    """Within the block, this thread's calls (and those of threads started in it) are shown to ``watch``.

    The trace function in place before is restored on exit, also after an exception; a block that ends
    with another trace function (the answer called ``sys.settrace``) sets :attr:`CallWatch.tampered`.

    Args:
        watch: The :class:`.CallWatch` to report to.
        process: Whether to arm the process-wide part here too (``armed``); ``False`` where the
            thread that waits for the answer armed it.
    """

    def __init__(self, watch: CallWatch, *, process: bool = True) -> None:
        self.watch = watch
        self._armed = armed(watch) if process else None
        self._mode = _TorchCalls(watch)

    def __enter__(self) -> CallWatch:
        if self._armed is not None:
            self._armed.__enter__()
        self._before = sys.gettrace()
        self._mode.__enter__()
        with _quiet():
            sys.settrace(self.watch.trace)
        self.watch.threads.add(threading.get_ident())
        return self.watch

    def __exit__(self, *exc: object) -> None:
        current = sys.gettrace()
        with _quiet():
            sys.settrace(self._before)
        self.watch.threads.discard(threading.get_ident())
        self._mode.__exit__(*exc)
        if getattr(current, "__self__", None) is not self.watch:
            self.watch.tampered = True
        if self._armed is not None:
            self._armed.__exit__(*exc)
            self.watch.closed = True
