"""Attention in linear time: kernel feature maps (linear attention, Performer) and Linformer.

Softmax attention needs every score ``exp(q_i . k_j)`` before it can normalise a row, hence the
``L x S`` matrix. Replace the kernel by a product of feature maps,
``sim(q, k) = phi(q) . phi(k)``, and the sum regroups:
``sum_j sim(q_i, k_j) v_j = phi(q_i)^T (sum_j phi(k_j) v_j^T)`` -- one ``F x Ev`` matrix shared by
every query, so time and memory are linear in the length. Linear attention picks a fixed
``phi`` (``elu + 1``); Performer picks random features whose products are, on average, exactly
``exp(q . k)``; Linformer instead projects the *length* of keys and values down to ``k``.
Causal linear attention is also a recurrent network: :func:`linear_attention_step` generates
token by token from a state of fixed size, the running sums ``S`` and ``z``.

Shape legend:
    B  batch          H   query heads      H_kv  key/value heads (divides H)
    L  query length   S   key/value length E     query/key head dim     Ev  value head dim
    F  feature dim    C   chunk length     nc    number of chunks        D   model dim

Explained in chapter 5.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import default_scale, repeat_kv
from .checks import check_positive_int, check_qkv, check_scale

__all__ = [
    "linear_attention",
    "linear_attention_step",
    "random_feature_projection",
    "positive_random_features",
    "performer_attention",
    "LinformerAttention",
]

FEATURE_MAPS: dict[str, Callable[[Tensor], Tensor]] = {
    "elu+1": lambda x: F.elu(x) + 1.0,  # Katharopoulos et al. 2020: positive, smooth
    "relu": F.relu,
}


def _kernel_attention(
    phi_q: Tensor, phi_k: Tensor, value: Tensor, *, is_causal: bool, eps: float, chunk_size: int
) -> Tensor:
    """``sum_j (phi_q_i . phi_k_j) v_j / (sum_j phi_q_i . phi_k_j + eps)``, over ``j <= i`` if causal.

    Non-causal: ``phi_q (phi_k^T V)``. Causal: chunks of ``C`` positions; inside a chunk the
    ``C x C`` masked kernel, before it the exclusive prefix sum of ``phi_k^T V`` over earlier
    chunks. Memory ``O(L * C + (L / C) * F * Ev)``.
    """
    batch, heads, q_len, feat = phi_q.shape
    if not is_causal:
        kv = torch.matmul(phi_k.transpose(-1, -2), value)  # (B, H, F, S) x (B, H, S, Ev) -> (B, H, F, Ev)
        num = torch.matmul(phi_q, kv)  # (B, H, L, F) x (B, H, F, Ev) -> (B, H, L, Ev)
        den = torch.matmul(phi_q, phi_k.sum(dim=2, keepdim=True).transpose(-1, -2))  # (B, H, L, 1)
        return num / (den + eps)
    chunk = min(chunk_size, q_len)
    nc = -(-q_len // chunk)
    pad = nc * chunk - q_len  # zero features contribute nothing to any sum
    q = F.pad(phi_q, (0, 0, 0, pad)).view(batch, heads, nc, chunk, feat)  # (B, H, nc, C, F)
    k = F.pad(phi_k, (0, 0, 0, pad)).view(batch, heads, nc, chunk, feat)  # (B, H, nc, C, F)
    v = F.pad(value, (0, 0, 0, pad)).view(batch, heads, nc, chunk, -1)  # (B, H, nc, C, Ev)
    kv = torch.matmul(k.transpose(-1, -2), v)  # (B, H, nc, F, C) x (B, H, nc, C, Ev) -> (B, H, nc, F, Ev)
    kv_before = F.pad(torch.cumsum(kv, dim=2)[:, :, :-1], (0, 0, 0, 0, 1, 0))  # exclusive prefix sum: (B, H, nc, F, Ev)
    z = k.sum(dim=3)  # (B, H, nc, F)
    z_before = F.pad(torch.cumsum(z, dim=2)[:, :, :-1], (0, 0, 1, 0))  # (B, H, nc, F)
    inner = torch.matmul(q, k.transpose(-1, -2)).tril()  # (B, H, nc, C, C), j <= i inside the chunk
    num = torch.matmul(inner, v) + torch.matmul(q, kv_before)  # (B, H, nc, C, Ev)
    den = inner.sum(dim=-1, keepdim=True) + torch.matmul(q, z_before.unsqueeze(-1))  # (B, H, nc, C, 1)
    out = num / (den + eps)
    return out.view(batch, heads, nc * chunk, -1)[:, :, :q_len]  # (B, H, L, Ev)


def _check_causal_lengths(query: Tensor, key: Tensor, is_causal: bool) -> None:
    if is_causal and query.shape[2] != key.shape[2]:
        raise ValueError(f"causal linear attention needs L == S, got L={query.shape[2]}, S={key.shape[2]}")


def _feature_map(feature_map: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    if isinstance(feature_map, str):
        if feature_map not in FEATURE_MAPS:
            raise ValueError(
                f"unknown feature_map {feature_map!r}; expected one of {sorted(FEATURE_MAPS)} or a callable"
            )
        return FEATURE_MAPS[feature_map]
    if callable(feature_map):
        return feature_map
    raise TypeError(f"feature_map must be a str or a callable, got {type(feature_map).__name__}")


def linear_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    feature_map: str | Callable[[Tensor], Tensor] = "elu+1",
    is_causal: bool = False,
    eps: float = 1e-6,
    chunk_size: int = 64,
) -> Tensor:
    """Linear attention: ``out_i = phi(q_i)^T sum_j phi(k_j) v_j^T / (phi(q_i)^T sum_j phi(k_j) + eps)``.

    Non-causal it is computed as ``phi(Q) (phi(K)^T V)``: ``O((L + S) * F * Ev)`` time, no
    ``L x S`` matrix. Causal (``j <= i``, needs ``L == S``) it is the same sum over a prefix,
    computed chunk by chunk with a running (prefix-summed) ``phi(K)^T V``: ``O(L)`` as well.
    There is no scale: the feature map replaces ``exp(q . k / sqrt(E))``.

    Paper: Katharopoulos et al., "Transformers are RNNs: Fast Autoregressive Transformers with
    Linear Attention" (2020). Explained in chapter 5.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        feature_map: ``"elu+1"`` (the paper's), ``"relu"``, or a callable applied elementwise
            that must return non-negative features.
        is_causal: Sum only over ``j <= i``.
        eps: Added to the denominator.
        chunk_size: Positions per chunk of the causal prefix sum.

    Returns:
        The attention output (in ``value``'s dtype; sums in at least float32).

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    n_rep = check_qkv(query, key, value)  # H / H_kv
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    _check_causal_lengths(query, key, is_causal)
    check_positive_int("chunk_size", chunk_size)
    phi = _feature_map(feature_map)
    dtype = torch.promote_types(query.dtype, torch.float32)  # float32 for half inputs, float64 stays
    phi_q, phi_k = phi(query.to(dtype)), phi(key.to(dtype))  # (B, H, L, E), (B, H, S, E)
    out = _kernel_attention(phi_q, phi_k, value.to(dtype), is_causal=is_causal, eps=eps, chunk_size=chunk_size)
    return out.to(value.dtype)


def linear_attention_step(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    state: tuple[Tensor, Tensor] | None = None,
    *,
    feature_map: str | Callable[[Tensor], Tensor] = "elu+1",
    eps: float = 1e-6,
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """Causal linear attention as a recurrent network, one token at a time.

    The state is two running sums over the tokens seen so far, updated by the new token ``t``
    and then read by its query::

        S_t = S_{t-1} + phi(k_t) v_t^T      z_t = z_{t-1} + phi(k_t)
        out_t = phi(q_t)^T S_t / (phi(q_t)^T z_t + eps)

    Its size (``F x Ev`` and ``F`` numbers per head) does not depend on ``t``, unlike a KV cache;
    each step costs the same. Fed the tokens in order, it gives exactly
    ``linear_attention(..., is_causal=True)`` (the parallel, chunked form used for training).

    Paper: Katharopoulos et al., "Transformers are RNNs: Fast Autoregressive Transformers with
    Linear Attention" (2020), section 3.4. Explained in chapter 5.3.

    Args:
        query: Query of the new token.
        key: Key of the new token.
        value: Value of the new token.
        state: ``(S, z)`` returned by the previous step; ``None`` before the first token.
        feature_map: As for :func:`linear_attention`.
        eps: Added to the denominator, as in :func:`linear_attention`.

    Returns:
        ``(out, (S, z))``: the output for the new token (in ``value``'s dtype) and the new state
        (sums in at least float32).

    Shape:
        query ``(B, H, 1, E)``, key ``(B, H_kv, 1, E)``, value ``(B, H_kv, 1, Ev)``, state
        ``S (B, H, F, Ev)``, ``z (B, H, F)`` -> out ``(B, H, 1, Ev)`` and the state.
    """
    n_rep = check_qkv(query, key, value)  # H / H_kv
    if query.shape[2] != 1 or key.shape[2] != 1:
        raise ValueError(f"one token per step: query and key need length 1, got {query.shape[2]} and {key.shape[2]}")
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, 1, E), (B, H, 1, Ev)
    phi = _feature_map(feature_map)
    dtype = torch.promote_types(query.dtype, torch.float32)
    phi_q, phi_k = phi(query.to(dtype)), phi(key.to(dtype))  # (B, H, 1, F), (B, H, 1, F)
    kv = torch.matmul(phi_k.transpose(-1, -2), value.to(dtype))  # (B, H, F, 1) x (B, H, 1, Ev) -> (B, H, F, Ev)
    if state is None:
        s, z = kv, phi_k[:, :, 0]  # (B, H, F, Ev), (B, H, F)
    else:
        if not (isinstance(state, tuple) and len(state) == 2):
            raise TypeError("state must be the (S, z) tuple returned by the previous step, or None")
        if state[0].shape != kv.shape or state[1].shape != phi_k[:, :, 0].shape:
            raise ValueError(
                f"state shapes {tuple(state[0].shape)}, {tuple(state[1].shape)} do not fit S {tuple(kv.shape)}, "
                f"z {tuple(phi_k[:, :, 0].shape)}"
            )
        s, z = state[0] + kv, state[1] + phi_k[:, :, 0]  # S_t = S_{t-1} + phi(k_t) v_t^T, z_t = z_{t-1} + phi(k_t)
    num = torch.matmul(phi_q, s)  # (B, H, 1, F) x (B, H, F, Ev) -> (B, H, 1, Ev)
    den = torch.matmul(phi_q, z.unsqueeze(-1))  # (B, H, 1, F) x (B, H, F, 1) -> (B, H, 1, 1)
    return (num / (den + eps)).to(value.dtype), (s, z)


def random_feature_projection(
    num_features: int,
    dim: int,
    *,
    orthogonal: bool = True,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Tensor:
    """Draw the Performer's random projection ``W``: rows ``w_r`` each marginally ``N(0, I_dim)``.

    With ``orthogonal=True`` the rows are orthogonal in blocks of ``dim`` (a Haar-random
    orthogonal matrix from the QR of a Gaussian one, sign-corrected) and each row is rescaled to
    the length of an independent Gaussian vector, so every row is still exactly ``N(0, I)`` --
    the estimator stays unbiased, with lower variance. Otherwise the rows are i.i.d. Gaussian.

    Paper: Choromanski et al., "Rethinking Attention with Performers" (2021). Explained in
    chapter 5.

    Args:
        num_features: Rows ``F`` (random features).
        dim: Columns ``E`` (head dim).
        orthogonal: Orthogonal blocks (FAVOR+) or i.i.d. rows.
        generator: Random generator, on any device: the draws are made on the generator's
            device (in float64), then moved to ``device``.
        dtype: Floating dtype of the result.
        device: Device of the result.

    Returns:
        The projection.

    Shape:
        ``(F, E)``.
    """
    check_positive_int("num_features", num_features)
    check_positive_int("dim", dim)
    draw = {"generator": generator, "dtype": torch.float64, "device": device if generator is None else generator.device}
    target = torch.empty(0, device=device).device  # device=None: the default device, not the generator's
    if not orthogonal:
        return torch.randn(num_features, dim, **draw).to(target, dtype)  # (F, E)
    num_blocks = -(-num_features // dim)
    gauss = torch.randn(num_blocks, dim, dim, **draw)  # (nb, E, E)
    q, r = torch.linalg.qr(gauss)  # batched QR: q (nb, E, E) orthogonal
    q = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)  # sign fix: Haar-random
    rows = q.transpose(-1, -2).reshape(num_blocks * dim, dim)[:num_features]  # (F, E) orthonormal per block
    lengths = torch.randn(num_features, dim, **draw).norm(dim=1)  # (F,) chi_E lengths
    return (rows * lengths[:, None]).to(target, dtype)  # (F, E)


def positive_random_features(x: Tensor, projection: Tensor) -> Tensor:
    """FAVOR+ positive features ``phi(x) = exp(W x - |x|^2 / 2) / sqrt(F)``.

    For ``W`` with ``N(0, I)`` rows, ``E[phi(q) . phi(k)] = exp(q . k)``: the softmax kernel,
    estimated without bias by positive numbers (no cancelling signs, unlike ``sin``/``cos``
    features). Not stabilised: :func:`performer_attention` subtracts maxima that cancel.

    Args:
        x: Vectors in the last dim.
        projection: From :func:`random_feature_projection`.

    Returns:
        The features.

    Shape:
        x ``(..., E)``, projection ``(F, E)`` -> ``(..., F)``. Explained in chapter 5.
    """
    if projection.dim() != 2 or projection.shape[1] != x.shape[-1]:
        raise ValueError(f"projection must be (F, E={x.shape[-1]}), got {tuple(projection.shape)}")
    logits = torch.matmul(x, projection.T) - x.pow(2).sum(dim=-1, keepdim=True) / 2  # (..., F)
    return logits.exp() / math.sqrt(projection.shape[0])


def performer_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    *,
    num_features: int,
    orthogonal: bool = True,
    generator: torch.Generator | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """Performer (FAVOR+): softmax attention estimated with positive random features.

    ``exp(scale * q . k)`` is replaced by ``phi(q') . phi(k')`` with ``q' = q * sqrt(scale)``,
    ``k' = k * sqrt(scale)`` and ``phi`` from :func:`positive_random_features`, then computed
    as linear attention: ``O(L * F * E)``, no ``L x S`` matrix. For numerical safety the query
    features are divided by their row maximum and the key features by one maximum over all keys;
    both factors cancel between numerator and denominator. Each kernel entry is estimated without
    bias, with a relative variance ``(exp(|q' + k'|^2) - 1) / F`` for i.i.d. features (Lemma 2 of
    the paper); the normalised output, a ratio of two estimates, is biased; its error falls as
    ``F`` grows (chapter 5.4 measures both).

    Paper: Choromanski et al., "Rethinking Attention with Performers" (2021). Explained in
    chapter 5.

    Args:
        query: Queries.
        key: Keys.
        value: Values.
        num_features: Random features ``F``.
        orthogonal: Orthogonal random features (lower variance).
        generator: Random generator for the projection.
        is_causal: Sum only over ``j <= i`` (needs ``L == S``).
        scale: Score scale of the approximated softmax; default ``1 / sqrt(E)``.

    Returns:
        The approximate attention output.

    Shape:
        query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)`` ->
        ``(B, H, L, Ev)``.
    """
    n_rep = check_qkv(query, key, value)  # H / H_kv
    key, value = repeat_kv(key, n_rep), repeat_kv(value, n_rep)  # (B, H, S, E), (B, H, S, Ev)
    _check_causal_lengths(query, key, is_causal)
    check_positive_int("num_features", num_features)
    check_scale("scale", scale)
    dtype = torch.promote_types(query.dtype, torch.float32)  # float32 for half inputs, float64 stays
    root = math.sqrt(default_scale(query.size(-1)) if scale is None else scale)
    w = random_feature_projection(
        num_features, query.shape[-1], orthogonal=orthogonal, generator=generator, dtype=dtype, device=query.device
    )  # (F, E)
    q, k = query.to(dtype) * root, key.to(dtype) * root
    q_logits = torch.matmul(q, w.T) - q.pow(2).sum(-1, keepdim=True) / 2  # (B, H, L, F)
    k_logits = torch.matmul(k, w.T) - k.pow(2).sum(-1, keepdim=True) / 2  # (B, H, S, F)
    phi_q = (q_logits - q_logits.amax(dim=-1, keepdim=True).detach()).exp()  # per-row factor cancels
    phi_k = (k_logits - k_logits.amax(dim=(-2, -1), keepdim=True).detach()).exp()  # one factor per (B, H)
    tiny = torch.finfo(dtype).tiny
    out = _kernel_attention(phi_q, phi_k, value.to(dtype), is_causal=is_causal, eps=tiny, chunk_size=64)
    return out.to(value.dtype)


class LinformerAttention(nn.Module):
    """Linformer self-attention: keys and values projected from length ``n`` down to ``k``.

    ``head_i = softmax(Q_i (E K_i)^T / sqrt(d)) (F V_i)`` with learned ``E, F`` of shape
    ``(k, seq_len)`` (``e_proj``, ``f_proj``), shared by all heads (the paper's head-wise
    sharing); ``share_kv=True`` uses one matrix for both. Scores are ``L x k``: linear in the
    length for a fixed ``k``. A shorter input uses the first ``L`` columns of ``E`` and ``F``.
    Not causal (the projection mixes all positions).

    Paper: Wang et al., "Linformer: Self-Attention with Linear Complexity" (2020). Explained in
    chapter 5.

    Args:
        seq_len: Maximum sequence length ``n``.
        k: Projected length.
        embed_dim: Model dimension ``D``.
        num_heads: Heads (must divide ``embed_dim``).
        share_kv: Use the same projection for keys and values.
        bias: Biases in ``q_proj/k_proj/v_proj/o_proj``.
        device: Device of the parameters (as for ``torch.nn`` layers).
        dtype: Dtype of the parameters.

    Shape:
        input ``(B, L, D)`` with ``L <= seq_len`` -> ``(B, L, D)``.
    """

    def __init__(
        self,
        seq_len: int,
        k: int,
        embed_dim: int,
        num_heads: int,
        *,
        share_kv: bool = False,
        bias: bool = True,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        for name, val in (("seq_len", seq_len), ("k", k), ("embed_dim", embed_dim), ("num_heads", num_heads)):
            check_positive_int(name, val)
        if embed_dim % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide embed_dim={embed_dim}")
        self.seq_len, self.k, self.num_heads, self.head_dim = seq_len, k, num_heads, embed_dim // num_heads
        factory = {"device": device, "dtype": dtype}  # as for torch.nn layers
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.o_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.e_proj = nn.Linear(seq_len, k, bias=False, **factory)  # E: (k, n)
        self.f_proj = self.e_proj if share_kv else nn.Linear(seq_len, k, bias=False, **factory)  # F: (k, n)
        nn.init.xavier_normal_(self.e_proj.weight)
        nn.init.xavier_normal_(self.f_proj.weight)

    def forward(self, hidden_states: Tensor) -> Tensor:
        """Self-attention over ``hidden_states`` with keys and values projected to length ``k``.

        Args:
            hidden_states: The input sequence, ``L <= seq_len``.

        Returns:
            The attention output after ``o_proj``.

        Shape:
            ``(B, L, D)`` -> ``(B, L, D)``; the scores are ``(B, H, L, k)``.
        """
        if hidden_states.dim() != 3 or hidden_states.shape[-1] != self.q_proj.in_features:
            raise ValueError(
                f"hidden_states must be (B, L, D={self.q_proj.in_features}), got {tuple(hidden_states.shape)}"
            )
        batch, length, embed = hidden_states.shape
        if length > self.seq_len:
            raise ValueError(f"sequence length L={length} exceeds seq_len={self.seq_len}")
        split = (batch, length, self.num_heads, self.head_dim)
        q = self.q_proj(hidden_states).view(split).transpose(1, 2)  # (B, H, L, hd)
        k = self.k_proj(hidden_states).view(split).transpose(1, 2)  # (B, H, L, hd)
        v = self.v_proj(hidden_states).view(split).transpose(1, 2)  # (B, H, L, hd)
        e, f = self.e_proj.weight[:, :length], self.f_proj.weight[:, :length]  # (k, L)
        k = torch.matmul(e, k)  # (k, L) x (B, H, L, hd) -> (B, H, k, hd)
        v = torch.matmul(f, v)  # (k, L) x (B, H, L, hd) -> (B, H, k, hd)
        out = F.scaled_dot_product_attention(q, k, v)  # (B, H, L, k) scores -> (B, H, L, hd)
        return self.o_proj(out.transpose(1, 2).reshape(batch, length, embed))  # (B, L, D)
