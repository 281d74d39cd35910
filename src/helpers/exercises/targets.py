"""What a checker may forbid an answer to reach, and how it is found when the answer runs.

A target is a function, a method, a class (all its methods), a module or a folder of code (all its files), a dotted
path to one of those, or a :class:`.TorchRule` (PyTorch functions recognised by what they are). The groups a checker
names (:data:`.ATTENTION`, :data:`.LIBRARIES`, :data:`.LEAVING_TORCH`, :data:`.AUTOGRAD`, :data:`.DISTRIBUTIONS`,
:data:`.TRANSFORMERS`) are described in :mod:`helpers.exercises.guard`, which watches for them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import re
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

__all__ = ["TorchRule", "ATTENTION_KERNELS", "REQUIRES_GRAD", "LIBRARIES", "LEAVING_TORCH", "ATTENTION", "AUTOGRAD",
           "DISTRIBUTIONS", "TRANSFORMERS", "PACKAGE", "Targets", "public_name", "argument_properties", "unwrap"]

PACKAGE = "helpers"


@dataclass(frozen=True)
class TorchRule:
    """PyTorch functions forbidden by what they are rather than by name (see :data:`.ATTENTION_KERNELS`)."""

    name: str
    matches: Callable[[Any], bool]


ATTENTION_KERNELS = TorchRule("torch's attention kernels", lambda func: bool(re.search(
    r"attention|^_transformer_|^_fused_sdp|^_triton_", getattr(func, "__name__", ""))))
"""Every PyTorch function whose name says attention (the public ``scaled_dot_product_attention`` and the
private kernels behind it, ``_native_multi_head_attention``, ``_transformer_encoder_layer_fwd``...),
recognised when called, so that no list of private names has to be kept."""

REQUIRES_GRAD = TorchRule("torch.autograd (a tensor that requires grad)", lambda func: False)
"""A tensor that requires grad, made by the answer — every use of autograd needs one."""

LIBRARIES: tuple[str, ...] = ("scipy", "sklearn")
"""Other libraries' ready-made versions of what the labs practise (SciPy's ``cdist`` and ``entropy``,
scikit-learn's ``cosine_similarity``)."""

LEAVING_TORCH: tuple[str, ...] = ("torch.Tensor.numpy", "torch.Tensor.__array__", "torch.Tensor.tolist")
"""A tensor turned into NumPy or a list — where a checker measures the work or memory of PyTorch operations,
computing elsewhere hides it."""

ATTENTION: tuple[Any, ...] = (
    ATTENTION_KERNELS,
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.MultiheadAttention",
    "torch.nn.modules.transformer",
    sys.modules[type(torch.ops).__module__],  # torch.ops.aten.*: the kernels themselves
    "transformers",
    *LIBRARIES,
)
"""Third-party attention — PyTorch's fused kernels and layers, ``torch.ops``, transformers, :data:`.LIBRARIES`."""

AUTOGRAD: tuple[Any, ...] = (REQUIRES_GRAD, "torch.autograd.grad", "torch.autograd.backward",
                             "torch.autograd.functional", "torch.Tensor.backward",
                             *sorted({str(Path(inspect.getfile(torch.func.jacrev)).parent)}), *LIBRARIES)
"""Derivatives computed for the answer, where an exercise asks for the formula — autograd in any form (a tensor
that requires grad), ``torch.func`` (the folder that defines it), and :data:`.LIBRARIES`."""

DISTRIBUTIONS: tuple[str, ...] = ("torch.distributions", *LIBRARIES)
"""``torch.distributions`` (``Categorical(probs).entropy()``) and :data:`.LIBRARIES` (``scipy.stats.entropy``)."""

TRANSFORMERS: tuple[str, ...] = ("transformers",)
"""Every module of Hugging Face transformers."""

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


def public_name(fn: Any) -> str:
    """``helpers.X`` when the package exports the function (or the method's class) as ``X``, else its full name."""
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
    obj: Any = sys.modules.get(module)
    for part in code.co_qualname.split("."):
        obj = getattr(obj, part, None) if obj is not None else None
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        return public_name(obj)
    return public_name(types.SimpleNamespace(__qualname__=code.co_qualname, __module__=module))


def unwrap(target: Any) -> Any:
    while True:
        if isinstance(target, functools.partial):
            target = target.func
        elif isinstance(target, (staticmethod, classmethod, types.MethodType)):
            target = target.__func__
        elif isinstance(target, property):
            target = target.fget
        elif hasattr(target, "__wrapped__") and (isinstance(target, types.FunctionType)
                                                 or hasattr(target, "cache_info")):  # functools.cache / lru_cache
            target = target.__wrapped__
        else:
            return target


@dataclass
class Targets:
    """What a rule matches: Python code objects, PyTorch functions, folders or files of code, PyTorch rules."""

    codes: dict[types.CodeType, str] = field(default_factory=dict)
    torch: dict[int, str] = field(default_factory=dict)
    files: list[tuple[str, str]] = field(default_factory=list)  # (file or folder prefix, display name)
    rules: list[TorchRule] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)  # keeps the functions whose ids are stored alive

    def add(self, target: Any, display: str | None = None) -> None:
        if isinstance(target, TorchRule):
            self.rules.append(target)
        elif isinstance(target, str) and target.startswith("/"):  # a folder of code
            self.files.append((target.rstrip("/") + "/", display or target))
        elif isinstance(target, str):
            if "." not in target and target not in sys.modules:
                # A top-level module not imported yet (transformers takes seconds to import): watch its files
                # without importing it; an answer that imports it runs code from those files.
                spec = importlib.util.find_spec(target)
                if spec is None or not spec.origin:  # not installed (scipy on a lean machine): nothing reaches it
                    return
                self._add_file(spec.origin, target)
                return
            self.add(_resolve(target), display or target)
        elif isinstance(target, types.ModuleType):
            if getattr(target, "__file__", None):
                self._add_file(target.__file__, target.__name__)
        elif isinstance(target, type):
            for name, member in vars(target).items():
                member = unwrap(member)
                if isinstance(member, types.FunctionType):
                    whole = name in ("forward", "__call__", "__init__")
                    self.codes[member.__code__] = display or public_name(member) if not display or whole \
                        else f"{display}.{name}"
        else:
            target = unwrap(target)
            if isinstance(target, types.FunctionType):
                self.codes[target.__code__] = display or public_name(target)
            elif callable(target):  # a C function or method: PyTorch's function mode sees it called
                self.torch[id(target)] = display or f"{getattr(target, '__module__', None) or 'torch'}." \
                                                    f"{getattr(target, '__qualname__', repr(target))}"
                self.keep.append(target)
            else:
                raise TypeError(f"forbidden and allowed take functions, methods, classes, modules or dotted paths, "
                                f"got {type(target).__name__}")

    def _add_file(self, file: str, module: str) -> None:
        path = Path(file)
        self.files.append((str(path.parent) + "/" if path.name == "__init__.py" else str(path), module))

    def match_code(self, code: types.CodeType, module: str) -> str | None:
        name = self.codes.get(code)
        if name is not None or code.co_name == "<module>":  # a module's body, run by an import: no call
            return name
        for prefix, _ in self.files:
            if code.co_filename.startswith(prefix):
                return _code_name(code, module)
        return None

    def match_torch(self, func: Any) -> str | None:
        name = self.torch.get(id(func))
        if name is None:
            name = next((f"torch.{getattr(func, '__name__', func)} ({rule.name})" for rule in self.rules
                         if rule.matches(func)), None)
        return name


def argument_properties(args: Iterable[Any]) -> set[types.CodeType]:
    """The property getters of the package's classes among ``args``, their items and their attributes (a few levels
    down): reading ``layer.head_dim`` or ``sweep.runs[0][0].final_accuracy`` of what the checker hands over is not
    delegating; computing ``ModelShape(...).params_per_layer`` of a shape the answer builds is."""
    codes: set[types.CodeType] = set()
    classes: set[type] = set()
    pending, seen = [(arg, 0) for arg in args], 0
    while pending and seen < 10_000:
        arg, depth = pending.pop()
        seen += 1
        if isinstance(arg, (list, tuple)):
            pending.extend((item, depth) for item in arg)
        elif isinstance(arg, dict):
            pending.extend((item, depth) for item in arg.values())
        elif type(arg).__module__.split(".")[0] == PACKAGE and depth < 4:
            if type(arg) not in classes:
                classes.add(type(arg))
                for cls in type(arg).__mro__:
                    codes |= {member.fget.__code__ for member in vars(cls).values()
                              if isinstance(member, property) and isinstance(member.fget, types.FunctionType)}
            pending.extend((item, depth + 1) for item in getattr(arg, "__dict__", {}).values())
    return codes


