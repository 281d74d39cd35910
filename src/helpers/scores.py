"""Score functions: how well does a query match a key? Dot, scaled dot, cosine, distance, general, additive.

Explained in chapter 2 (why a dot product); additive attention also in chapter 1. Each function
maps queries ``(..., L, E)`` and keys ``(..., S, E)`` to scores ``(..., L, S)``; the softmax over
keys and the weighted sum of values are :mod:`helpers.attention`'s.

Shape legend::

    L     query length (target)          S     key/value length (source)
    E     query/key feature size         Ev    value feature size
    A     hidden size of additive (Bahdanau) attention

Any number of leading batch dimensions ``...`` is accepted.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .attention import default_scale, masked_softmax
from .checks import check_attn_mask, check_scale, check_tensor

__all__ = [
    "dot_scores",
    "scaled_dot_scores",
    "cosine_scores",
    "neg_euclidean_scores",
    "general_scores",
    "additive_scores",
    "GeneralAttention",
    "AdditiveAttention",
]


# --------------------------------------------------------------------------------------------
# Input checks (kept apart so that the kernels below read like the maths)
# --------------------------------------------------------------------------------------------


def _check_query_key(query: Tensor, key: Tensor) -> None:
    """Checks shared by the score functions: finite tensors, same dtype, same E, broadcastable."""
    check_tensor("query", query, min_dim=2, finite=True)
    check_tensor("key", key, min_dim=2, finite=True)
    if key.dtype != query.dtype:
        raise TypeError(
            f"query and key must have the same dtype, got query {query.dtype} and key {key.dtype}"
        )
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"query and key must have the same feature size E (last dim), got query {tuple(query.shape)} "
            f"and key {tuple(key.shape)}"
        )
    _broadcast_batch("query", query, "key", key)


def _broadcast_batch(name_a: str, a: Tensor, name_b: str, b: Tensor) -> torch.Size:
    """Broadcast the batch dims (all but the last two) of two tensors, or raise ValueError."""
    try:
        return torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch dimensions of {name_a} {tuple(a.shape)} and {name_b} {tuple(b.shape)} do not broadcast"
        ) from None


# --------------------------------------------------------------------------------------------
# Score functions (chapter 2): query (..., L, E), key (..., S, E) -> scores (..., L, S)
# --------------------------------------------------------------------------------------------


def dot_scores(query: Tensor, key: Tensor) -> Tensor:
    """Dot-product scores ``q_i . k_j`` for every query/key pair, as one matrix product.

    Luong, Pham & Manning (2015), "Effective Approaches to Attention-based Neural Machine
    Translation" ("dot"). Explained in chapter 2.

    Args:
        query: Queries.
        key: Keys, with the same feature size E.

    Returns:
        The scores ``query @ key^T``.

    Shape:
        query ``(..., L, E)``, key ``(..., S, E)`` -> ``(..., L, S)``.
    """
    _check_query_key(query, key)
    return query @ key.transpose(-2, -1)  # (..., L, E) x (..., E, S) -> (..., L, S)


def scaled_dot_scores(query: Tensor, key: Tensor, *, scale: float | None = None) -> Tensor:
    """Scaled dot-product scores ``q_i . k_j / sqrt(E)``.

    Vaswani et al. (2017), "Attention Is All You Need", eq. 1. Explained in chapter 3: the
    scale keeps the variance of the scores at 1 when q and k have unit-variance entries.

    Args:
        query: Queries.
        key: Keys, with the same feature size E.
        scale: Factor applied to the dot products; ``None`` means ``1 / sqrt(E)``.

    Returns:
        The scaled scores.

    Shape:
        query ``(..., L, E)``, key ``(..., S, E)`` -> ``(..., L, S)``.
    """
    _check_query_key(query, key)
    check_scale("scale", scale)
    scale_factor = default_scale(query.size(-1)) if scale is None else scale
    return query @ key.transpose(-2, -1) * scale_factor  # (..., L, E) x (..., E, S) -> (..., L, S)


def cosine_scores(query: Tensor, key: Tensor, *, eps: float = 1e-8) -> Tensor:
    """Cosine-similarity scores ``q_i . k_j / (max(|q_i|, eps) max(|k_j|, eps))``, in [-1, 1].

    Used by Graves et al. (2014), "Neural Turing Machines" (content addressing). Explained in
    chapter 2: bounded scores can never saturate the softmax, but also cannot grow sharp without
    an extra temperature.

    Args:
        query: Queries.
        key: Keys, with the same feature size E.
        eps: Lower bound on each vector's norm, so a zero vector gives score 0, not NaN.

    Returns:
        The cosine similarities.

    Shape:
        query ``(..., L, E)``, key ``(..., S, E)`` -> ``(..., L, S)``.
    """
    _check_query_key(query, key)
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps!r}")
    q_unit = query / query.norm(dim=-1, keepdim=True).clamp_min(eps)  # (..., L, E)
    k_unit = key / key.norm(dim=-1, keepdim=True).clamp_min(eps)  # (..., S, E)
    return q_unit @ k_unit.transpose(-2, -1)  # (..., L, E) x (..., E, S) -> (..., L, S)


def neg_euclidean_scores(query: Tensor, key: Tensor) -> Tensor:
    """Negative squared Euclidean distance ``-|q_i - k_j|^2``: the nearer the key, the higher.

    Computed without an ``(L, S, E)`` difference tensor, by the expansion
    ``|q - k|^2 = |q|^2 - 2 q.k + |k|^2`` (one matrix product). Rounding can make a distance
    slightly negative; it is clamped at 0, so every score is ``<= 0``. Explained in chapter 2:
    it equals ``2 q.k`` up to terms that depend on one side only, and the ``-|q|^2`` term cancels
    in the softmax over keys.

    Args:
        query: Queries.
        key: Keys, with the same feature size E.

    Returns:
        Minus the squared distances.

    Shape:
        query ``(..., L, E)``, key ``(..., S, E)`` -> ``(..., L, S)``.
    """
    _check_query_key(query, key)
    q_sq = query.pow(2).sum(dim=-1, keepdim=True)  # (..., L, 1)
    k_sq = key.pow(2).sum(dim=-1).unsqueeze(-2)  # (..., 1, S)
    cross = query @ key.transpose(-2, -1)  # (..., L, E) x (..., E, S) -> (..., L, S)
    return -(q_sq - 2 * cross + k_sq).clamp_min(0)  # (..., L, S)


def general_scores(query: Tensor, key: Tensor, weight: Tensor) -> Tensor:
    """Bilinear ("general") scores ``q_i^T W k_j``; query and key may differ in size.

    Luong, Pham & Manning (2015), "Effective Approaches to Attention-based Neural Machine
    Translation" ("general"). Explained in chapter 2: dot-product attention with learned
    projections is the low-rank case ``W = W_q^T W_k``.

    Args:
        query: Queries.
        key: Keys.
        weight: The bilinear form ``W``.

    Returns:
        The scores ``query @ weight @ key^T``.

    Shape:
        query ``(..., L, E_q)``, key ``(..., S, E_k)``, weight ``(E_q, E_k)`` -> ``(..., L, S)``.
    """
    check_tensor("query", query, min_dim=2, finite=True)
    check_tensor("key", key, min_dim=2, finite=True)
    check_tensor("weight", weight, min_dim=2, finite=True)
    if weight.dim() != 2 or weight.shape != (query.size(-1), key.size(-1)):
        raise ValueError(
            f"weight must have shape (E_q, E_k) = ({query.size(-1)}, {key.size(-1)}) for query "
            f"{tuple(query.shape)} and key {tuple(key.shape)}, got {tuple(weight.shape)}"
        )
    _broadcast_batch("query", query, "key", key)
    return (query @ weight) @ key.transpose(-2, -1)  # (..., L, E_q)(E_q, E_k)(..., E_k, S) -> (..., L, S)


def additive_scores(query: Tensor, key: Tensor, w_q: Tensor, w_k: Tensor, v: Tensor) -> Tensor:
    """Additive (Bahdanau) scores ``v^T tanh(W_q q_i + W_k k_j)``.

    Bahdanau, Cho & Bengio (2015), "Neural Machine Translation by Jointly Learning to Align and
    Translate", eq. 6 (``v_a^T tanh(W_a s + U_a h)``). Explained in chapter 2.

    Cost: unlike the dot-product scores this is not one matrix product. The sum
    ``W_q q_i + W_k k_j`` is formed for every pair, which materialises an ``(..., L, S, A)``
    tensor: memory grows as ``L * S * A`` instead of ``L * S``.

    Args:
        query: Queries.
        key: Keys.
        w_q: Query projection, laid out like ``nn.Linear(E_q, A).weight``.
        w_k: Key projection, laid out like ``nn.Linear(E_k, A).weight``.
        v: The scoring vector.

    Returns:
        The scores.

    Shape:
        query ``(..., L, E_q)``, key ``(..., S, E_k)``, w_q ``(A, E_q)``, w_k ``(A, E_k)``,
        v ``(A,)`` -> ``(..., L, S)``.
    """
    for name, x, min_dim in (
        ("query", query, 2),
        ("key", key, 2),
        ("w_q", w_q, 2),
        ("w_k", w_k, 2),
        ("v", v, 1),
    ):
        check_tensor(name, x, min_dim=min_dim, finite=True)
    hidden = v.size(0)
    if v.dim() != 1 or w_q.shape != (hidden, query.size(-1)) or w_k.shape != (hidden, key.size(-1)):
        raise ValueError(
            f"expected w_q (A, E_q), w_k (A, E_k), v (A,) for query {tuple(query.shape)} and key "
            f"{tuple(key.shape)}, got w_q {tuple(w_q.shape)}, w_k {tuple(w_k.shape)}, v {tuple(v.shape)}"
        )
    _broadcast_batch("query", query, "key", key)
    q_hidden = query @ w_q.T  # (..., L, E_q) x (E_q, A) -> (..., L, A)
    k_hidden = key @ w_k.T  # (..., S, E_k) x (E_k, A) -> (..., S, A)
    # (..., L, 1, A) + (..., 1, S, A) -> (..., L, S, A): the tensor that makes this costly
    features = torch.tanh(q_hidden.unsqueeze(-2) + k_hidden.unsqueeze(-3))
    return features @ v  # (..., L, S, A) x (A,) -> (..., L, S)


# --------------------------------------------------------------------------------------------
# Modules holding the parameters of the learned score functions (chapter 2)
# --------------------------------------------------------------------------------------------


def _check_module_inputs(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None) -> None:
    """Shared checks of the attention modules' forward: S matches, mask is bool and broadcasts."""
    check_tensor("value", value, min_dim=2, finite=True)
    if key.size(-2) != value.size(-2):
        raise ValueError(
            f"key and value must have the same length S (dim -2), got key {tuple(key.shape)} "
            f"and value {tuple(value.shape)}"
        )
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor) or attn_mask.dtype != torch.bool:
            raise TypeError(
                "attn_mask must be a bool tensor (True = may attend), "
                f"got {getattr(attn_mask, 'dtype', type(attn_mask))}"
            )
        batch = _broadcast_batch("query", query, "key", key)
        check_attn_mask(attn_mask, query, (*batch, query.size(-2), key.size(-2)))


class GeneralAttention(nn.Module):
    """Bilinear ("general") attention: weights ``softmax(q_i^T W k_j)`` over keys, then values.

    Luong, Pham & Manning (2015), "Effective Approaches to Attention-based Neural Machine
    Translation". Explained in chapter 2.

    Args:
        query_dim: Feature size of the queries, E_q.
        key_dim: Feature size of the keys, E_k.

    Shape:
        query ``(..., L, E_q)``, key ``(..., S, E_k)``, value ``(..., S, Ev)``, attn_mask (bool)
        broadcastable to ``(..., L, S)`` -> output ``(..., L, Ev)``, weights ``(..., L, S)``.
    """

    def __init__(self, query_dim: int, key_dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(query_dim, key_dim))  # W, (E_q, E_k)
        nn.init.xavier_uniform_(self.weight)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Return ``(output, weights)``; a fully masked row gives zero weights and output."""
        scores = general_scores(query, key, self.weight)  # (..., L, S)
        _check_module_inputs(query, key, value, attn_mask)
        weights = masked_softmax(scores, attn_mask).to(value.dtype)  # (..., L, S)
        return weights @ value, weights  # (..., L, S) x (..., S, Ev) -> (..., L, Ev)


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention: weights ``softmax(v^T tanh(W_q q_i + W_k k_j))``.

    Bahdanau, Cho & Bengio (2015), "Neural Machine Translation by Jointly Learning to Align and
    Translate". Explained in chapters 1 and 2. Forms an ``(..., L, S, A)`` tensor (see
    :func:`additive_scores`).

    Args:
        query_dim: Feature size of the queries (the decoder state), E_q.
        key_dim: Feature size of the keys (the encoder states), E_k.
        hidden_dim: Size A of the hidden layer of the scoring network.

    Shape:
        query ``(..., L, E_q)``, key ``(..., S, E_k)``, value ``(..., S, Ev)``, attn_mask (bool)
        broadcastable to ``(..., L, S)`` -> output ``(..., L, Ev)``, weights ``(..., L, S)``.
    """

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.query_proj = nn.Linear(query_dim, hidden_dim, bias=False)  # W_q, weight (A, E_q)
        self.key_proj = nn.Linear(key_dim, hidden_dim, bias=False)  # W_k, weight (A, E_k)
        self.score_vector = nn.Parameter(torch.empty(hidden_dim))  # v, (A,)
        nn.init.uniform_(self.score_vector, -1 / math.sqrt(hidden_dim), 1 / math.sqrt(hidden_dim))

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Return ``(output, weights)``; a fully masked row gives zero weights and output."""
        scores = additive_scores(query, key, self.query_proj.weight, self.key_proj.weight, self.score_vector)
        _check_module_inputs(query, key, value, attn_mask)
        weights = masked_softmax(scores, attn_mask).to(value.dtype)  # (..., L, S)
        return weights @ value, weights  # (..., L, S) x (..., S, Ev) -> (..., L, Ev)
