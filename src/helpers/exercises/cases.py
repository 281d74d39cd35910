"""Named cases and mistake tables: what makes a checker's verdict the same at every run, and precise.

A checker tries the reader's function on **named cases**: inputs whose sizes are written out (chosen so
that each typical mistake gives a result of its own: ``L != S``, ``E != H``...) and whose values are
drawn from a seed of :mod:`helpers.seeding`. The same answer therefore gets the same verdict every time.
Then on one **fresh case**, drawn from :func:`helpers.seeding.fresh_generator`, so that a table of
answers for the named cases does not pass; a failure there gives the fresh seed, so the case can be
replayed (``seeding.fresh_generator`` reports the seed it drew from the operating system).

A wrong result is compared with each **mistake** of the checker's table, simulated on the same inputs;
the first it matches is named. Every table has one shape: a tuple of :class:`.Mistake`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .. import seeding
from . import CheckResult
from .messages import quoted
from .reader import Rejected, verdict

__all__ = ["Case", "Mistake", "first_mistake", "explaining_mistake", "each_case"]


@dataclass(frozen=True)
class Case:
    """One set of inputs for the reader's function.

    Attributes:
        name: What the case is (``"grouped-query, 2 groups"``), or ``"fresh"``.
        params: The sizes and settings the case is drawn with.
        generator: Draws the case's values.
        seed: The fresh case's seed (``None`` for a named case).
    """

    name: str
    params: Mapping[str, Any]
    generator: torch.Generator
    seed: int | None = None

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def randn(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Standard normal values of ``shape`` drawn in float64 (the same numbers whatever ``dtype``)."""
        return torch.randn(*shape, generator=self.generator, dtype=torch.float64).to(dtype)


@dataclass(frozen=True)
class Mistake:
    """A typical mistake: the message that names it, and what it gives.

    Attributes:
        key: The message's key in the catalogue.
        simulate: Called with the case's inputs, returns what an answer with this mistake returns
            (``None`` where the mistake cannot show on these inputs).
        fields: The message's fields.
    """

    key: str
    simulate: Callable[..., Any]
    fields: Mapping[str, Any] = field(default_factory=dict)


def first_mistake(result: Any, mistakes: Iterable[Mistake], *inputs: Any,
                  same: Callable[[Any, Any], bool]) -> Mistake | None:
    """The first mistake of the table whose simulation on ``inputs`` is ``same`` as ``result``, if any."""
    for mistake in mistakes:
        simulated = mistake.simulate(*inputs)
        if simulated is not None and same(result, simulated):
            return mistake
    return None


def explaining_mistake(results: Sequence[Any], rights: Sequence[Any], inputs: Sequence[tuple[Any, ...]],
                       mistakes: Iterable[Mistake], same: Callable[[Any, Any], bool]) -> Mistake | None:
    """The first mistake that explains every result at once: where it cannot show (it simulates ``None``) the result
    is right, elsewhere it is the mistake's. For numbers, where one case alone cannot tell two mistakes apart (half
    the bytes: keys only, or one byte a value of two), the cases together can."""
    for mistake in mistakes:
        simulated = [mistake.simulate(*args) for args in inputs]
        if any(s is not None for s in simulated) and all(
                same(result, right if s is None else s) for result, right, s in zip(results, rights, simulated)):
            return mistake
    return None


def each_case(check: Callable[[Case], CheckResult | None], named: Sequence[tuple[str, Mapping[str, Any]]],
              seed: int, fresh: Callable[[torch.Generator], Mapping[str, Any]] | None = None) -> CheckResult | None:
    """Run ``check`` on each named case, then on a fresh one; the first failure, or ``None``.

    Args:
        check: Tries the reader's function on one case: ``None`` when right, else the verdict (or it
            raises :class:`~helpers.exercises.reader.Rejected`).
        named: ``(name, params)`` of each named case; case ``i``'s values are drawn from
            ``seeding.generator(seed + i)``.
        seed: The checker's seed.
        fresh: Draws a fresh case's params with the fresh generator (``None``: no fresh case).

    Returns:
        The first failure (on the fresh case, a verdict that gives its seed and quotes the failure).
    """
    for index, (name, params) in enumerate(named):
        failure = check(Case(name, params, seeding.generator(seed + index)))
        if failure is not None:
            return failure
    if fresh is None:
        return None
    generator = seeding.fresh_generator()
    case_seed = generator.initial_seed()
    try:
        failure = check(Case("fresh", fresh(generator), generator, case_seed))
    except Rejected as rejected:
        failure = rejected.verdict
    if failure is None:
        return None
    return verdict(False, "cases.fresh", seed=case_seed, verdict=quoted(failure))
