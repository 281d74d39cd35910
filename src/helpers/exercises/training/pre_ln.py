"""Exercise 4 of lab 6.1-6.2: the LayerNorm bug hunt.

Contract (stated in the lab): ``fixed_block(block, x)`` returns ``(B, L, D)``: a Pre-LN block,
``x + Attn(LN1(x))`` then ``x + FFN(LN2(x))``, from ``block``'s sub-layers (``self_attn_norm``, ``self_attn``,
``ffn_norm``, ``ffn``). The block's own ``forward`` and PyTorch's blocks and attention are refused; the attention
sub-layer may be called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ... import seeding
from .. import CheckResult
from ..cases import Case, each_case
from ..catalogue.ch06_training import MESSAGES  # noqa: F401 (registers its messages)
from ..guard import ATTENTION
from ..messages import phrase
from ..reader import as_tensor, call_watched, checker, draw_int, passed_unless, verdict

__all__ = ["buggy_pre_ln_block", "check_pre_ln_fix", "fresh_block"]

CASES = (("width 16, 4 heads", dict(width=16, heads=4, batch=2, length=5)),
         ("width 12, 2 heads", dict(width=12, heads=2, batch=1, length=6)))


def buggy_pre_ln_block(block: Any, x: Tensor) -> Tensor:
    """A Pre-LN Transformer block, says its comment, with ``block``'s sub-layers and one bug (lab exercise 4).

    Args:
        block: The block whose sub-layers it uses.
        x: The block's input.

    Returns:
        The block's output.

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    # Pre-LN: normalise first, then the sub-layer, then the residual connection
    x = block.self_attn_norm(x)
    x = x + block.self_attn(x)[0]  # (B, L, D)
    x = block.ffn_norm(x)
    x = x + block.ffn(x)  # (B, L, D)
    return x


_MODES = ("pre", "overwrite", "post", "none")


def _block_variant(block: Any, x: Tensor, attn_mode: str, ffn_mode: str, swap: bool = False) -> Tensor:
    norms = (block.ffn_norm, block.self_attn_norm) if swap else (block.self_attn_norm, block.ffn_norm)
    for mode, norm, branch in zip((attn_mode, ffn_mode), norms, (lambda h: block.self_attn(h)[0], block.ffn)):
        if mode == "pre":
            x = x + branch(norm(x))
        elif mode == "overwrite":
            x = norm(x)
            x = x + branch(x)
        elif mode == "post":
            x = norm(x + branch(x))
        else:
            x = x + branch(x)
    return x


def _misplaced(attn_mode: str, ffn_mode: str) -> CheckResult:
    """What a block whose sub-layers normalise as ``attn_mode`` and ``ffn_mode`` does wrong (not both ``"pre"``)."""
    if attn_mode == ffn_mode:
        return verdict(False, "ch06_training.pre.both", what=phrase(f"ch06_training.pre.mode_{attn_mode}"))
    wrong = {name: phrase(f"ch06_training.pre.mode_{mode}") for name, mode in
             (("attention", attn_mode), ("ffn", ffn_mode)) if mode != "pre"}
    return verdict(False, f"ch06_training.pre.{'each' if len(wrong) == 2 else next(iter(wrong))}", **wrong)


def fresh_block(case: Case) -> tuple[Any, Tensor]:
    """A Pre-LN block of ``case``'s width, with LayerNorm gains and biases that are not 1 and 0, and an input far
    from unit scale (so that a misplaced norm shows); the global random state is left as it was."""
    from helpers.blocks import TransformerBlock

    width, gen = case["width"], case.generator
    with torch.random.fork_rng():
        seeding.manual_seed(draw_int(0, 2**31 - 1, gen))
        block = TransformerBlock(width, case["heads"], norm_first=True).eval()
    with torch.no_grad():
        for norm in (block.self_attn_norm, block.ffn_norm):
            norm.weight.copy_(0.5 + torch.rand(width, generator=gen))
            norm.bias.copy_(0.3 * torch.randn(width, generator=gen))
    return block, 3 * case.randn(case["batch"], case["length"], width) + 0.5  # (B, L, D)


@checker
def check_pre_ln_fix(fn: Callable[[Any, Tensor], Tensor]) -> CheckResult:
    """Check ``fn(block, x)``: a Pre-LN block, ``x + Attn(LN1(x))`` then ``x + FFN(LN2(x))``.

    Compared with :class:`helpers.blocks.TransformerBlock` (``norm_first=True``) on named blocks and a fresh one.
    Every function of the package is refused while ``fn`` runs (the block's own ``forward`` included) except
    :class:`helpers.multihead.MultiHeadAttention`, the attention sub-layer, and :func:`.buggy_pre_ln_block` (which is
    wrong: passing it back gets its diagnosis); so are PyTorch's own blocks and attention. The message says what a
    misplaced LayerNorm does.

    Args:
        fn: The reader's function.

    Returns:
        The verdict.
    """
    from helpers.multihead import MultiHeadAttention

    def one(case: Case) -> CheckResult | None:
        block, x = fresh_block(case)
        with torch.no_grad():
            right = block(x).hidden
            out = as_tensor(call_watched(fn, block, x.clone(), forbidden=ATTENTION,
                                         allowed=(MultiHeadAttention, buggy_pre_ln_block)),
                            phrase("ch06_training.what.block"))
            if out.shape != right.shape:
                return verdict(False, "ch06_training.pre.shape", expected=tuple(right.shape), got=tuple(out.shape))
            if torch.allclose(out.double(), right.double(), rtol=1e-4, atol=1e-5):
                return None
            for swap in (False, True):
                for attn_mode in _MODES:
                    for ffn_mode in _MODES:
                        if torch.allclose(out, _block_variant(block, x, attn_mode, ffn_mode, swap), rtol=1e-4,
                                          atol=1e-5):
                            return verdict(False, "ch06_training.pre.swapped") if swap else _misplaced(attn_mode,
                                                                                                    ffn_mode)
        return verdict(False, "ch06_training.pre.differs", diff=(out - right).abs().max().item())

    fresh = lambda gen: dict(width=(8, 12, 16, 24)[draw_int(0, 3, gen)], heads=(2, 4)[draw_int(0, 1, gen)],  # noqa: E731
                             batch=draw_int(1, 3, gen), length=draw_int(3, 7, gen))
    return passed_unless(each_case(one, CASES, seed=6400, fresh=fresh), "ch06_training.pre.passed")
