"""Make sure an exercise is answered, not delegated: watch every call the reader's code makes.

An exercise that asks for multi-head attention from scratch is not answered by calling
``helpers.MultiHeadAttention``, nor PyTorch's ``nn.MultiheadAttention``: such an answer passes any
numerical comparison and teaches nothing. A checker therefore runs the reader's function under
:func:`watching`, which observes, with :func:`sys.setprofile`, every function the answer's code
reaches: Python functions (by their code object) and C functions (by identity) alike. A call into
what the exercise forbids is recorded, and once the answer has returned the checker refuses it with
a verdict that names the function reached (:func:`delegation_verdict`).

Because what is watched is the code that *runs*, not a name, every route to it is caught: a default
argument, a closure, ``functools.partial``, a dict holding the function, a saved bound method, an
alias, a copy of the module. A call swallowed by ``try``/``except`` is still recorded; an answer
that switches the watch off (``sys.setprofile(None)``) is refused for that, and so is one that reads
the checker's frames or objects (``sys._getframe``, ``inspect.stack``, ``gc.get_objects``: the
checker's reference lies there). What no call reveals (a traceback's ``tb_frame``) a checker
avoids by computing its reference after the answer has returned, or keeping it out of its locals.

What is forbidden, by default, is *every* function of the package (``helpers``, its checkers
included) except property getters: an exercise lets the answer reach a package function only by
naming it in ``allowed`` (a frame of an allowed function is not looked into: what it calls itself
is its own business). On top of that a checker names the third-party equivalents of the thing
practised; the groups below collect them:

=====================  ====================================================================
:data:`ATTENTION`      PyTorch's fused attention, ``nn.MultiheadAttention`` and its
                       functional form, ``nn.Transformer*`` layers, ``torch.ops``, transformers
:data:`AUTOGRAD`       ``torch.autograd`` (``grad``, ``backward``, ``functional.jacobian``), ``torch.func``
:data:`DISTRIBUTIONS`  ``torch.distributions`` (e.g. ``Categorical(...).entropy()``)
:data:`TRANSFORMERS`   every module of Hugging Face transformers (e.g. its rotary embedding code)
=====================  ====================================================================

Example::

    watch = CallWatch(forbidden=ATTENTION, allowed=(helpers.masks.causal_mask,))
    with watching(watch):
        result = answer(q, k, v)
    if watch.reached is not None:
        ...  # refuse: delegation_verdict(PackageCallError(watch.reached))

The checkers use it through :func:`helpers.exercises.reader.call_watched`.
"""

from __future__ import annotations

import functools
import gc
import importlib
import importlib.util
import inspect
import queue
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from . import CheckResult

__all__ = ["PackageCallError", "CallWatch", "watching", "delegation_verdict", "tampering_verdict", "peeking_verdict",
           "public_name",
           "run_on_clean_stack", "ATTENTION", "ARRAYS", "AUTOGRAD", "DISTRIBUTIONS", "TRANSFORMERS"]

ARRAYS: tuple[str, ...] = ("torch.Tensor.numpy", "torch.Tensor.__array__", "scipy", "sklearn")
"""The way out of PyTorch — a tensor turned into a NumPy array (``.numpy()``, ``np.asarray``), SciPy,
scikit-learn. What a from-scratch exercise asks for in PyTorch done elsewhere, where no torch hook (a
work counter, a memory tracker) sees it. Part of :data:`ATTENTION`, :data:`AUTOGRAD` and :data:`DISTRIBUTIONS`."""

_PRIVATE_ATTENTION = tuple(f"torch.{name}" for name in sorted(dir(__import__("torch")))
                           if name.startswith(("_scaled_dot_product", "_native_multi_head_attention",
                                               "_transformer_encoder_layer_fwd", "_triton_", "_flash_attention",
                                               "_fused_sdp_choice", "_efficient_attention")))
"""PyTorch's private attention kernels (``torch._scaled_dot_product_attention_math``...), listed from ``dir(torch)``."""

ATTENTION: tuple[str, ...] = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.MultiheadAttention",
    "torch.nn.modules.transformer",
    "torch._ops",
    "transformers",
    *_PRIVATE_ATTENTION,
    *ARRAYS,
)
"""Third-party attention — PyTorch's fused kernel, its private kernels and layers, ``torch.ops`` (``aten``
kernels), transformers, and :data:`ARRAYS`."""

AUTOGRAD: tuple[Any, ...] = ("torch.autograd", "torch.func", "torch._functorch", "torch.Tensor.backward",
                             type(torch.autograd.Variable._execution_engine).run_backward, *ARRAYS)
"""Derivatives computed for the answer — where an exercise asks for the formula (and :data:`ARRAYS`)."""

DISTRIBUTIONS: tuple[str, ...] = ("torch.distributions", *ARRAYS)
"""``torch.distributions`` (e.g. ``Categorical(probs).entropy()``) and :data:`ARRAYS` (``scipy.stats.entropy``)."""

TRANSFORMERS: tuple[str, ...] = ("transformers",)
"""Every module of Hugging Face transformers."""

PACKAGE = "helpers"


class PackageCallError(RuntimeError):
    """An answer reached a function that its exercise asks the reader to write.

    Attributes:
        name: The function's name, ``"helpers.MultiHeadAttention"`` or
            ``"torch.nn.functional.scaled_dot_product_attention"``.
    """

    def __init__(self, name: str) -> None:
        super().__init__(f"your answer calls {name}, which this exercise asks you to write yourself")
        self.name = name


def _resolve(path: str) -> Any:
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for name in parts[split:]:
                owner = getattr(owner, name)
        except AttributeError:
            break
        return owner
    raise ValueError(f"cannot find {path!r}: give a dotted path such as 'helpers.multihead.MultiHeadAttention.forward'")


def public_name(fn: Callable[..., Any]) -> str:
    """``helpers.X`` when the package exports the function (or the method's class) as ``X``."""
    import helpers

    qualname = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
    head = qualname.split(".")[0]
    exported = getattr(helpers, head, None)
    module = getattr(fn, "__module__", None) or "?"
    if "." in qualname and "<locals>" not in qualname:  # a method: name its class, and the method unless forward
        cls = getattr(sys.modules.get(module), head, None)
        base = f"helpers.{head}" if cls is not None and exported is cls else f"{module}.{head}"
        method = qualname.split(".")[-1]
        return base if method in ("forward", "__call__") else f"{base}.{method}"
    return f"helpers.{qualname}" if exported is fn else f"{module}.{qualname}"


def _code_name(code: types.CodeType, module: str) -> str:
    """The public name of the function whose code is ``code`` (defined in ``module``)."""
    owner = sys.modules.get(module)
    qualname = code.co_qualname
    obj: Any = owner
    for part in qualname.split("."):
        obj = getattr(obj, part, None) if obj is not None else None
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        return public_name(obj)
    if module == PACKAGE or module.startswith(PACKAGE + "."):
        return public_name(types.SimpleNamespace(__qualname__=qualname, __module__=module))  # type: ignore[arg-type]
    return f"{module}.{qualname}"


def _unwrap(target: Any) -> Any:
    while True:
        if isinstance(target, functools.partial):
            target = target.func
        elif isinstance(target, (staticmethod, classmethod)):
            target = target.__func__
        elif isinstance(target, types.MethodType):
            target = target.__func__
        elif isinstance(target, property):
            target = target.fget
        elif hasattr(target, "__wrapped__") and isinstance(target, types.FunctionType):
            target = target.__wrapped__
        elif isinstance(target, functools._lru_cache_wrapper):  # functools.cache / lru_cache: watch its function
            target = target.__wrapped__
        else:
            return target


@dataclass
class _Targets:
    """What a rule matches: code objects, C functions, C methods of a type, and module files."""

    codes: dict[types.CodeType, str] = field(default_factory=dict)
    builtins: dict[int, str] = field(default_factory=dict)
    methods: dict[tuple[type, str], str] = field(default_factory=dict)
    files: list[tuple[str, str]] = field(default_factory=list)  # (file or folder prefix, module name)
    keep: list[Any] = field(default_factory=list)  # keeps the builtins whose ids are stored alive

    def add(self, target: Any, display: str | None = None) -> None:
        if isinstance(target, str):
            if "." not in target and target not in sys.modules:
                # A top-level module not imported yet (transformers takes seconds to import): watch its
                # files without importing it; an answer that imports it runs code from those files.
                spec = importlib.util.find_spec(target)
                if spec is None:  # not installed (scipy, sklearn on a lean machine): nothing can reach it
                    return
                if spec.origin:
                    self._add_file(spec.origin, target)
                    return
            self.add(_resolve(target), display or target)
            return
        if isinstance(target, types.ModuleType):
            file = getattr(target, "__file__", None)
            if file:
                self._add_file(file, target.__name__)
            return
        if isinstance(target, type):
            for name, member in vars(target).items():
                member = _unwrap(member)
                if isinstance(member, types.FunctionType):
                    self.codes[member.__code__] = display or public_name(member) if name in ("forward", "__call__") \
                        else (f"{display}.{name}" if display else public_name(member))
            return
        target = _unwrap(target)
        if isinstance(target, types.FunctionType):
            self.codes[target.__code__] = display or public_name(target)
        elif isinstance(target, types.BuiltinFunctionType):
            self.builtins[id(target)] = display or f"{getattr(target, '__module__', None) or '?'}.{target.__name__}"
            self.keep.append(target)
        elif isinstance(target, (types.MethodDescriptorType, types.WrapperDescriptorType)):
            self.methods[(target.__objclass__, target.__name__)] = display or \
                f"{target.__objclass__.__module__}.{target.__objclass__.__name__}.{target.__name__}"
        elif callable(target) and hasattr(type(target), "__call__"):
            call = getattr(type(target), "__call__")
            if isinstance(call, types.FunctionType):
                self.codes[call.__code__] = display or public_name(call)
            else:
                raise TypeError(f"cannot watch calls to {target!r}: give a function, a method, a class or a module")
        else:
            raise TypeError(f"forbidden and allowed take functions, methods, classes, modules or dotted paths, got "
                            f"{type(target).__name__}")

    def _add_file(self, file: str, module: str) -> None:
        path = Path(file)
        prefix = str(path.parent) + "/" if path.name == "__init__.py" else str(path)
        self.files.append((prefix, module))

    def match_code(self, code: types.CodeType, module: str) -> str | None:
        name = self.codes.get(code)
        if name is not None:
            return name
        if code.co_name == "<module>":  # a module's body, run by an import: not a call of its functions
            return None
        filename = code.co_filename
        for prefix, _ in self.files:
            if filename.startswith(prefix):
                return _code_name(code, module)
        return None

    def match_builtin(self, fn: Any) -> str | None:
        name = self.builtins.get(id(fn))
        if name is not None:
            return name
        if self.methods:
            owner = getattr(fn, "__self__", None)
            for (cls, method), display in self.methods.items():
                if fn.__name__ == method and isinstance(owner, cls):
                    return display
        return None


_INSTRUMENTATION = frozenset({"__torch_dispatch__", "__torch_function__"})
"""Hooks PyTorch calls for a tracker a checker set up (e.g. a memory tracker); never the answer's choice."""

_TAMPERING = (sys.setprofile, threading.setprofile, sys.settrace, threading.settrace)
_PEEKING_C = (sys._getframe, sys._current_frames, gc.get_objects, gc.get_referrers, gc.get_referents)
"""C functions that reach the checker's frames or objects (its reference lies there): refused when the
answer's own code calls them (a library's own use, e.g. ``collections.namedtuple``, is not the answer's)."""
_PEEKING_PY = frozenset(fn.__code__ for fn in (inspect.currentframe, inspect.stack, inspect.trace,
                                                inspect.getouterframes, inspect.getinnerframes))
_LIBRARY_PATHS = tuple(sorted({path for key in ("stdlib", "platstdlib", "purelib", "platlib")
                               if (path := sysconfig.get_paths().get(key))}))


class CallWatch:
    """What an answer may not reach while it runs, and what it reached.

    Args:
        forbidden: Further functions, methods, classes (all their methods), modules or dotted paths
            the answer may not reach, on top of the whole package (e.g. :data:`ATTENTION`).
        allowed: Package (or forbidden) functions, classes or modules the answer may call; what such
            a function calls itself is not looked into. Property getters of the package are always
            allowed.
        package: Whether the package's own functions are forbidden (default ``True``).
        passthrough: Functions of the checker that call the answer (a closure that runs it on every
            step): neither forbidden nor allowed, they and the code nested in them are looked into.

    Attributes:
        reached: The name of the first forbidden function the answer reached, or ``None``.
        tampered: Whether the answer tried to switch the watch off.
        peeked: Whether the answer tried to read the checker's frames or objects (``sys._getframe``,
            ``inspect.stack``, ``gc.get_objects``...).
        calls: How many Python and C calls the answer made (its own included).
    """

    def __init__(self, forbidden: Iterable[Any] = (), allowed: Iterable[Any] = (), *, package: bool = True,
                 passthrough: Iterable[Callable[..., Any]] = ()) -> None:
        self._passthrough: set[types.CodeType] = set()
        for fn in passthrough:
            self._passthrough |= _nested_codes(_unwrap(fn).__code__)
        self._forbidden = _Targets()
        self._allowed = _Targets()
        if package:
            self._forbidden.add(PACKAGE)
        for target in forbidden:
            self._forbidden.add(target)
        for target in allowed:
            self._allowed.add(target)
        self.reached: str | None = None
        self.tampered = False
        self.peeked = False
        self.calls = 0
        self._inside_allowed: list[types.FrameType] = []
        self._closed = False
        self._torch_threads: set[int] | None = None  # threads whose PyTorch calls _TorchCalls shows (see watching)

    def _torch_call(self, func: Any) -> None:
        """A PyTorch function reached, as :class:`_TorchCalls` sees it: also one called from C, where the
        profile function sees nothing (``functools.partial(torch.cosine_similarity)``, ``map(...)``)."""
        if self._closed or self.reached is not None:
            return
        if any(frame.f_code is not _TORCH_CALLS_CODE for frame in self._inside_allowed):
            return  # inside an allowed function: its own business
        name = self._forbidden.builtins.get(id(func))
        if name is not None and self._allowed.builtins.get(id(func)) is None:
            self.reached = name

    def _allowed_code(self, code: types.CodeType, frame: types.FrameType) -> bool:
        if self._allowed.match_code(code, frame.f_globals.get("__name__", "")) is not None:
            return True
        if code.co_name in _INSTRUMENTATION:  # the checker's own tracing (helpers.memory's tracker) sees the ops
            return True
        # property getters of the package: reading layer.head_dim is not delegating
        return _is_property_getter(code, frame)

    def hook(self, frame: types.FrameType, event: str, arg: Any) -> None:
        """The profile function (see :func:`sys.setprofile`): records, never raises."""
        if self._closed:
            return
        if frame.f_code in _OWN_CODES:  # run_on_clean_stack: the checker's, not the answer's
            return
        if frame.f_code is _TASK_END_CODE:  # the answer thread's task is over: nothing more of it is watched
            self._closed = True
            return
        if self._torch_threads is not None and threading.get_ident() not in self._torch_threads:
            self._torch_threads.add(threading.get_ident())  # a thread the answer started: its function modes are
            _TorchCalls(self).__enter__()  # its own, so it gets one too (left on: it ends with the thread)
        if self._inside_allowed:
            if event == "return" and frame is self._inside_allowed[-1]:
                self._inside_allowed.pop()
            return
        if event == "call":
            code = frame.f_code
            caller = frame.f_back
            if caller is not None and caller.f_code.co_filename.startswith("<frozen importlib"):
                # Called by the import system: a module's body run by an import (torch imports lazily, e.g.
                # torch._dynamo on a first call), a finder of sys.meta_path (transformers installs one).
                # Not the answer's calls: not looked into.
                self._inside_allowed.append(frame)
                return
            if code is _EXIT_CODE:
                self._closed = True
                return
            self.calls += 1
            if code in self._passthrough:
                return
            if code in _PEEKING_PY:
                self.peeked = True
                return
            module = frame.f_globals.get("__name__", "")
            name = self._forbidden.match_code(code, module)
            if name is None:
                return
            if code.co_name == "<module>" or self._allowed_code(code, frame):  # importing a module is no call
                self._inside_allowed.append(frame)
            elif self.reached is None:
                self.reached = name
        elif event == "c_call":
            self.calls += 1
            if any(arg is fn for fn in _TAMPERING):
                self.tampered = True
                return
            if any(arg is fn for fn in _PEEKING_C) and not frame.f_code.co_filename.startswith(_LIBRARY_PATHS) \
                    and self._forbidden.match_code(frame.f_code, frame.f_globals.get("__name__", "")) is None:
                self.peeked = True
                return
            name = self._forbidden.match_builtin(arg)
            if name is not None and self._allowed.match_builtin(arg) is None and self.reached is None:
                self.reached = name


def _answer_task(task: _Task) -> None:
    """One answer, run by the answer thread: the caller's grad mode and dispatch modes, the watch's profile
    function and function mode, then ``fn``; what the answer left in force is recorded, then undone."""
    entered = []
    ident = threading.get_ident()
    torch._C._set_grad_enabled(task.grad)  # the C function: torch.autograd's Python code may be forbidden
    try:
        for mode in task.modes:  # TorchDispatchMode.__enter__ is PyTorch's code: nothing watched runs yet
            mode.__enter__()
            entered.append(mode)
        watch = task.watch
        if watch is not None and watch._torch_threads is not None:
            watch._torch_threads.add(ident)  # this thread's function mode is entered here, not by the hook
            calls = _TorchCalls(watch)
            calls.__enter__()
            entered.append(calls)
        if watch is not None:
            sys.setprofile(watch.hook)
        try:
            task.box["result"] = task.fn(*task.args)
        except BaseException as error:  # noqa: BLE001 (handed to the caller's thread, which raises it)
            task.box["error"] = error
        task.box["profile"] = sys.getprofile()
        _task_end()
        sys.setprofile(None)
    finally:
        for mode in reversed(entered):
            mode.__exit__(None, None, None)


def _task_end() -> None:
    """Called by the answer thread once the answer has returned: the watch stops looking at this thread."""


@dataclass
class _Task:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    watch: CallWatch | None
    grad: bool
    modes: list[Any]
    box: dict[str, Any] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)


def _answer_loop(tasks: queue.SimpleQueue[_Task]) -> None:
    """The answer thread: one task at a time, for as long as the session lasts (a thread started for
    each answer would cost PyTorch's per-thread start-up, milliseconds, on every call)."""
    while True:
        task = tasks.get()
        try:
            _answer_task(task)
        finally:
            task.done.set()


_TASKS: queue.SimpleQueue[_Task] = queue.SimpleQueue()
_ANSWER_THREAD: list[threading.Thread] = []
_ANSWER_LOCK = threading.Lock()


def start_answer_thread() -> None:
    """Start the answer thread if it is not running. Called before any watch is on (:class:`watching`):
    a thread started under a watch would inherit its profile function (``threading.setprofile``)."""
    if not _ANSWER_THREAD or not _ANSWER_THREAD[0].is_alive():
        _ANSWER_THREAD[:] = [threading.Thread(target=_answer_loop, args=(_TASKS,), name="answer", daemon=True)]
        _ANSWER_THREAD[0].start()


def run_on_clean_stack(fn: Callable[..., Any], *args: Any, watch: CallWatch | None = None) -> Any:
    """``fn(*args)`` run in the answer thread, whose stack holds no frame of the caller.

    A checker's expected result lies in its locals while the answer runs; an answer that walks up its
    stack (``e.__traceback__.tb_frame.f_back``, ``traceback.walk_stack``: attribute reads, which no
    watch sees) would find it. In the answer thread the stack ends at the thread's loop. The answer
    runs with this thread's grad mode and PyTorch's dispatch modes (a checker's work counter or
    memory tracker), and under ``watch``'s profile function and function mode.

    Args:
        fn: The answer.
        *args: Its arguments.
        watch: The :class:`CallWatch` in force, if any: when the answer ends with another profile
            function than the watch's (``functools.partial(sys.setprofile, None)()`` makes no call the
            watch sees), :attr:`CallWatch.tampered` is set.

    Returns:
        What ``fn(*args)`` returned.

    Raises:
        BaseException: Whatever ``fn`` raised, re-raised here.
    """
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    if _ANSWER_THREAD and threading.current_thread() is _ANSWER_THREAD[0]:  # a checker nested in an answer
        return fn(*args)
    with _ANSWER_LOCK:
        start_answer_thread()
        task = _Task(fn, args, watch, torch.is_grad_enabled(), list(_get_current_dispatch_mode_stack()))
        _TASKS.put(task)
        task.done.wait()
    box = task.box
    if watch is not None and "error" not in box and getattr(box.get("profile"), "__self__", None) is not watch:
        watch.tampered = True
    if "error" in box:
        raise box["error"]
    return box.get("result")


_OWN_CODES = frozenset({run_on_clean_stack.__code__, start_answer_thread.__code__})
_TASK_END_CODE = _task_end.__code__


def _package_caches(watch: CallWatch) -> list[Any]:
    """The forbidden ``functools.lru_cache`` functions of the package (module level and in classes): a
    call answered from the cache runs no Python code, so :class:`watching` compares their hit counts."""
    caches = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == PACKAGE or name.startswith(PACKAGE + ".")):
            continue
        for value in list(vars(module).items()):
            members = [value[1]] + (list(vars(value[1]).values()) if isinstance(value[1], type) else [])
            for member in members:
                if isinstance(member, functools._lru_cache_wrapper) and getattr(member, "__module__", None) == name:
                    code = getattr(_unwrap(member), "__code__", None)
                    if code is not None and watch._forbidden.match_code(code, name) is not None \
                            and watch._allowed.match_code(code, name) is None:
                        caches.append(member)
    return caches


def _nested_codes(code: types.CodeType) -> set[types.CodeType]:
    """``code`` and every code object defined inside it (comprehensions, lambdas, inner functions)."""
    codes = {code}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            codes |= _nested_codes(const)
    return codes


def _is_property_getter(code: types.CodeType, frame: types.FrameType) -> bool:
    if code.co_argcount != 1 or not code.co_varnames:
        return False
    owner = frame.f_locals.get(code.co_varnames[0])
    for cls in type(owner).__mro__ if owner is not None else ():
        member = cls.__dict__.get(code.co_name)
        if isinstance(member, property):
            return getattr(member.fget, "__code__", None) is code
    return False


class _TorchCalls(TorchFunctionMode):
    """Shows :class:`CallWatch` every PyTorch function called while it is on, from Python or from C.

    A C function called from C code (a ``functools.partial`` of it, ``map``) makes no profile event;
    PyTorch still hands its call to the function mode. On only where the watch forbids C functions."""

    def __init__(self, watch: CallWatch) -> None:
        super().__init__()
        self.watch = watch

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.watch._torch_call(func)
        return func(*args, **(kwargs or {}))


_TORCH_CALLS_CODE = _TorchCalls.__torch_function__.__code__


class watching:  # noqa: N801 (used as a function: ``with watching(watch):``)
    """Within the block, every call (in this thread and in threads started in it) is shown to ``watch``.

    The profile function in place before is restored on exit, also after an exception. When the
    block ends with a profile function other than the watch's (the answer called
    ``sys.setprofile``), :attr:`CallWatch.tampered` is set.

    Args:
        watch: The :class:`CallWatch` to report to.
    """

    def __init__(self, watch: CallWatch) -> None:
        self.watch = watch
        self._before: Any = None
        self._before_threads: Any = None
        self._mode: _TorchCalls | None = _TorchCalls(watch) if watch._forbidden.builtins else None

    def __enter__(self) -> CallWatch:
        if threading.current_thread() is not (_ANSWER_THREAD[0] if _ANSWER_THREAD else None):
            start_answer_thread()  # before the profile functions below: it must not inherit them
        self._caches = [(cache, cache.cache_info().hits) for cache in _package_caches(self.watch)]
        if self._mode is not None:
            self._mode.__enter__()
            self.watch._torch_threads = {threading.get_ident()}
        self._before = sys.getprofile()
        self._before_threads = threading.getprofile() if hasattr(threading, "getprofile") else None
        threading.setprofile(self.watch.hook)
        sys.setprofile(self.watch.hook)
        return self.watch

    def __exit__(self, *exc: object) -> None:
        # The hook stops recording at this frame's call event (see CallWatch.hook).
        current = sys.getprofile()
        sys.setprofile(self._before)
        threading.setprofile(self._before_threads)
        if self._mode is not None:
            self._mode.__exit__(*exc)
        if current is None or getattr(current, "__self__", None) is not self.watch:
            self.watch.tampered = True
        for cache, hits in self._caches:  # a cache hit runs no Python code and makes no profile event
            if cache.cache_info().hits > hits and self.watch.reached is None:
                self.watch.reached = public_name(_unwrap(cache))


_EXIT_CODE = watching.__exit__.__code__


def delegation_verdict(error: PackageCallError, language: str | None = None) -> CheckResult:
    """The verdict for an answer that reached a forbidden function.

    Args:
        error: Names the function reached.
        language: The verdict's language (:mod:`helpers.exercises.messages`); ``None``: the default.

    Returns:
        A failed :class:`~helpers.exercises.CheckResult` that names the function reached.
    """
    return CheckResult.of(False, "guard.delegates", language, name=error.name)


def tampering_verdict(language: str | None = None) -> CheckResult:
    """The verdict for an answer that switched the checker's watch off (``sys.setprofile``)."""
    return CheckResult.of(False, "guard.tampers", language)


def peeking_verdict(language: str | None = None) -> CheckResult:
    """The verdict for an answer that read the checker's frames or objects (``sys._getframe``...)."""
    return CheckResult.of(False, "guard.peeks", language)


def defining_module(fn: Any) -> str:
    """The module that defines ``fn`` (for messages); ``"?"`` when unknown."""
    module = inspect.getmodule(_unwrap(fn))
    return module.__name__ if module is not None else "?"
