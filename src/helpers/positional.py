"""Position information for attention: sinusoidal, learned, T5 relative, ALiBi and RoPE.

Attention on its own is permutation-equivariant: shuffle the tokens and the outputs are
shuffled the same way. Each scheme below puts order back in a different place -- added to the
input (sinusoidal, learned), added to the scores (T5 relative bias, ALiBi), or rotated into
the queries and keys (RoPE). Explained in chapter 6.

Shape legend:
    B   batch size
    H   number of heads
    L   number of queries (target length)
    S   number of keys (source length)
    P   number of positions
    D   model (embedding) dimension
    E   head dimension (``head_dim``)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .checks import check_int, check_positive_int

__all__ = [
    "sinusoidal_encoding",
    "LearnedPositionalEmbedding",
    "relative_position_bucket",
    "T5RelativeBias",
    "alibi_slopes",
    "alibi_bias",
    "transformer_xl_scores",
    "RotaryEmbedding",
    "rotate_half",
    "apply_rotary_pos_emb",
]


# ----------------------------------------------------------------------------------------------
# Absolute positions, added to the token embeddings
# ----------------------------------------------------------------------------------------------


def sinusoidal_encoding(
    num_positions: int,
    embed_dim: int,
    *,
    base: float = 10000.0,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """Fixed sinusoidal position encodings of "Attention Is All You Need".

    ``PE[pos, 2i] = sin(pos / base**(2i / embed_dim))`` and ``PE[pos, 2i + 1] = cos(pos / base**(2i / embed_dim))``:
    sine on the even feature indices, cosine on the odd ones, interleaved (not two halves).
    Each sine/cosine pair turns at its own frequency, so that ``PE[pos + k]`` is a fixed
    rotation of ``PE[pos]`` for every ``pos``. For an odd ``embed_dim`` the last column is a sine.

    Paper: Vaswani et al., 2017, "Attention Is All You Need", section 3.5.
    Explained in chapter 6.

    Args:
        num_positions: number of positions ``P`` (rows), positions ``0 .. P - 1``.
        embed_dim: model dimension ``D`` (columns).
        base: the wavelength scale (10000 in the paper).
        device: device of the result (computed there, in float64).
        dtype: floating dtype of the result.

    Returns:
        The encodings, in ``dtype`` (float32 by default).

    Shape:
        output: ``(P, D)``
    """
    check_positive_int("num_positions", num_positions)
    check_positive_int("embed_dim", embed_dim)
    if base <= 0:
        raise ValueError(f"base must be positive, got {base}")
    position = torch.arange(num_positions, dtype=torch.float64, device=device).unsqueeze(1)  # (P, 1)
    two_i = torch.arange(0, embed_dim, 2, dtype=torch.float64, device=device)  # (ceil(D/2),)
    angle = position / base ** (two_i / embed_dim)  # (P, ceil(D/2))
    encoding = torch.empty(num_positions, embed_dim, dtype=torch.float64, device=device)
    encoding[:, 0::2] = torch.sin(angle)  # (P, ceil(D/2))
    encoding[:, 1::2] = torch.cos(angle[:, : embed_dim // 2])  # (P, floor(D/2))
    return encoding.to(dtype)


class LearnedPositionalEmbedding(nn.Module):
    """A trained table of one vector per absolute position (BERT, GPT-2).

    It cannot say anything about a position it never saw: asking for a position at or past
    ``max_positions`` raises a ``ValueError`` instead of indexing out of range.

    Paper: Gehring et al., 2017, "Convolutional Sequence to Sequence Learning"; used by
    Devlin et al., 2019 (BERT) and Radford et al., 2019 (GPT-2). Explained in chapter 6.

    Args:
        max_positions: number of positions the table holds.
        embed_dim: model dimension ``D``.
        device: device of the table (as for ``torch.nn`` layers).
        dtype: dtype of the table.
    """

    def __init__(
        self,
        max_positions: int,
        embed_dim: int,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        check_positive_int("max_positions", max_positions)
        check_positive_int("embed_dim", embed_dim)
        self.max_positions = max_positions
        self.embed_dim = embed_dim
        self.weight = nn.Parameter(torch.empty(max_positions, embed_dim, device=device, dtype=dtype))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, positions: int | Tensor, *, offset: int = 0) -> Tensor:
        """Looks up the vectors of some positions.

        Args:
            positions: a length ``L`` (positions ``offset .. offset + L - 1``) or an integer
                tensor of positions.
            offset: first position when ``positions`` is an int (the number of tokens already
                decoded when a KV cache is used).

        Returns:
            The position vectors, to be added to the token embeddings.

        Shape:
            output: ``(L, D)`` for an int, ``(*positions.shape, D)`` for a tensor.
        """
        low = high = None  # the range of the positions, where it can be known
        if isinstance(positions, int):
            low, high = offset, offset + positions - 1
            positions = torch.arange(offset, offset + positions, device=self.weight.device)  # (L,)
        if positions.is_floating_point():
            raise TypeError(f"positions must be integers, got dtype {positions.dtype}")
        if low is None and positions.numel() > 0 and positions.device.type != "meta":  # meta: no values
            low, high = int(positions.min()), int(positions.max())
        if low is not None and positions.numel() > 0:
            if low < 0 or high >= self.max_positions:
                raise ValueError(
                    f"positions must lie in [0, {self.max_positions}) (max_positions={self.max_positions}), "
                    f"got positions from {low} to {high}; a learned table has no vector past its end"
                )
        return self.weight[positions]  # (*positions.shape, D)

    def extra_repr(self) -> str:
        return f"max_positions={self.max_positions}, embed_dim={self.embed_dim}"


# ----------------------------------------------------------------------------------------------
# Relative positions, added to the scores
# ----------------------------------------------------------------------------------------------


def relative_position_bucket(
    relative_position: Tensor,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> Tensor:
    """Maps a relative position ``key_pos - query_pos`` to one of T5's buckets.

    The rule (Mesh TensorFlow / T5): with ``bidirectional``, half of the buckets are for keys
    after the query (``relative_position > 0``) and half for keys at or before it; otherwise
    keys after the query all fall in bucket 0. Inside each half, with ``n = |offset|`` and
    ``max_exact = half // 2``: distances ``n < max_exact`` get a bucket each, larger distances
    share logarithmically wider buckets,
    ``max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (half - max_exact))``,
    capped at ``half - 1``: everything at ``max_distance`` or beyond shares the last bucket, and so do
    some nearer offsets, from where the formula first reaches ``half - 1`` (with T5's 32 buckets and
    ``max_distance=128``: distance 91 in an encoder, 113 in a decoder; chapter 6.5).

    Paper: Raffel et al., 2020, "Exploring the Limits of Transfer Learning with a Unified
    Text-to-Text Transformer" (T5), section 2.1; Shaw et al., 2018 for relative positions.
    Explained in chapter 6.

    Args:
        relative_position: integer tensor of ``key_position - query_position``.
        bidirectional: whether keys after the query get their own buckets (encoder) or not
            (causal decoder).
        num_buckets: total number of buckets.
        max_distance: distance from which all offsets share the last bucket (which may start nearer).

    Returns:
        Bucket indices in ``[0, num_buckets)``, dtype ``torch.long``.

    Shape:
        output: same as ``relative_position``
    """
    if relative_position.is_floating_point():
        raise TypeError(f"relative_position must be an integer tensor, got dtype {relative_position.dtype}")
    check_positive_int("num_buckets", num_buckets)
    check_positive_int("max_distance", max_distance)
    relative_position = relative_position.long()
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).long() * num_buckets  # keys after the query
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)  # keys after the query -> distance 0
    max_exact = num_buckets // 2
    if max_exact < 1 or max_distance <= max_exact:
        raise ValueError(
            f"need num_buckets >= {4 if bidirectional else 2} and max_distance > max_exact = {max_exact}, "
            f"got num_buckets={num_buckets * (2 if bidirectional else 1)}, max_distance={max_distance}"
        )
    is_small = distance < max_exact
    # clamp(min=1) only keeps log() finite where is_small already chose the exact bucket
    log_ratio = torch.log(distance.clamp(min=1).float() / max_exact) / math.log(max_distance / max_exact)
    bucket_if_large = max_exact + (log_ratio * (num_buckets - max_exact)).long()
    bucket_if_large = bucket_if_large.clamp(max=num_buckets - 1)
    return buckets + torch.where(is_small, distance, bucket_if_large)


class T5RelativeBias(nn.Module):
    """T5's learned relative position bias: one scalar per (bucket, head), added to the scores.

    Paper: Raffel et al., 2020 (T5), section 2.1. Explained in chapter 6.

    Args:
        num_heads: number of heads ``H``; each head learns its own bias per bucket.
        bidirectional: ``True`` for an encoder, ``False`` for a causal decoder.
        num_buckets: number of buckets (32 in T5).
        max_distance: offsets at or past this distance share the last bucket (128 in T5); the last
            bucket can start nearer (see :func:`relative_position_bucket`).
        device: device of the bias table (as for ``torch.nn`` layers); the bias is made there.
        dtype: dtype of the bias table.
    """

    def __init__(
        self,
        num_heads: int,
        *,
        bidirectional: bool = True,
        num_buckets: int = 32,
        max_distance: int = 128,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        check_positive_int("num_heads", num_heads)
        # validates num_buckets / max_distance once, at construction
        relative_position_bucket(torch.zeros(1, dtype=torch.long), bidirectional, num_buckets, max_distance)
        self.num_heads = num_heads
        self.bidirectional = bidirectional
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.relative_attention_bias = nn.Embedding(num_buckets, num_heads, device=device, dtype=dtype)

    def forward(self, query_length: int, key_length: int, *, query_offset: int = 0) -> Tensor:
        """Computes the additive bias for ``L`` queries and ``S`` keys.

        Args:
            query_length: ``L``.
            key_length: ``S``; keys sit at positions ``0 .. S - 1``.
            query_offset: position of the first query (queries at ``offset .. offset + L - 1``),
                e.g. ``S - L`` when decoding with a KV cache.

        Returns:
            A float bias to pass as ``attn_mask`` (a float mask is added to the scores).

        Shape:
            output: ``(1, H, L, S)``
        """
        device = self.relative_attention_bias.weight.device
        query_position = torch.arange(query_offset, query_offset + query_length, device=device)  # (L,)
        key_position = torch.arange(key_length, device=device)  # (S,)
        relative_position = key_position[None, :] - query_position[:, None]  # (L, S)
        bucket = relative_position_bucket(relative_position, self.bidirectional, self.num_buckets, self.max_distance)
        bias = self.relative_attention_bias(bucket)  # (L, S, H)
        return bias.permute(2, 0, 1).unsqueeze(0)  # (1, H, L, S)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, bidirectional={self.bidirectional}, "
            f"num_buckets={self.num_buckets}, max_distance={self.max_distance}"
        )


def alibi_slopes(
    num_heads: int, *, device: torch.device | str | None = None, dtype: torch.dtype = torch.float32
) -> Tensor:
    """The per-head slopes of ALiBi.

    For ``H`` a power of two the slopes are the geometric sequence that starts at and has ratio
    ``2**(-8 / H)``: for 8 heads ``1/2, 1/4, ..., 1/256``. Otherwise, with ``n`` the largest
    power of two below ``H``, the slopes are those of ``n`` heads followed by the first
    ``H - n`` of every other slope (indices 0, 2, 4, ...) of ``2n`` heads -- the rule of the
    paper's reference code. For 6 heads: ``1/4, 1/16, 1/64, 1/256, 1/2, 1/8``.

    Paper: Press et al., 2022, "Train Short, Test Long: Attention with Linear Biases Enables
    Input Length Extrapolation" (ALiBi), section 3. Explained in chapter 6.

    Args:
        num_heads: number of heads ``H``.
        device: device of the result.
        dtype: floating dtype of the result.

    Returns:
        The slopes, in ``dtype`` (float32 by default).

    Shape:
        output: ``(H,)``
    """
    check_positive_int("num_heads", num_heads)

    def power_of_two_slopes(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    closest_power_of_two = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = power_of_two_slopes(closest_power_of_two)
    if closest_power_of_two != num_heads:
        slopes += power_of_two_slopes(2 * closest_power_of_two)[0::2][: num_heads - closest_power_of_two]
    return torch.tensor(slopes, dtype=dtype, device=device)


def alibi_bias(
    num_heads: int,
    query_length: int,
    key_length: int,
    *,
    is_causal: bool = False,
    query_offset: int = 0,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """ALiBi's additive bias ``-slope_h * distance(query, key)``.

    Query ``i`` sits at position ``query_offset + i`` and key ``j`` at position ``j``: with the
    default ``query_offset=0`` the two are aligned at their first token (top-left, as every
    ``is_causal`` of the package; the table in :mod:`helpers.masks`); when decoding ``L`` new
    tokens after ``S - L`` cached ones, pass ``query_offset=S - L`` (as :class:`T5RelativeBias`
    takes it). With ``is_causal=True`` the bias for a key ``j`` at or before the query is
    ``-slope * (pos_i - j)`` and keys after the query get ``-inf``, so the bias is the causal
    mask as well (the paper's causal form). With ``is_causal=False`` (the default, as everywhere
    in the package) it is the symmetric ``-slope * |pos_i - j|``, one common bidirectional
    extension.

    Paper: Press et al., 2022 (ALiBi), section 3. Explained in chapter 6.

    Args:
        num_heads: number of heads ``H``.
        query_length: ``L``.
        key_length: ``S``.
        is_causal: whether keys after the query are masked with ``-inf``.
        query_offset: position of the first query (queries at ``offset .. offset + L - 1``),
            ``>= 0``.
        device: device of the result (pass the queries' device).
        dtype: floating dtype of the result (a float ``attn_mask`` must have the queries' dtype).

    Returns:
        A bias to pass as ``attn_mask``, in ``dtype`` (float32 by default).

    Shape:
        output: ``(1, H, L, S)``
    """
    check_positive_int("query_length", query_length)
    check_positive_int("key_length", key_length)
    check_int("query_offset", query_offset, 0)
    compute_dtype = torch.promote_types(dtype, torch.float32)  # distances stay exact integers
    slopes = alibi_slopes(num_heads, device=device, dtype=compute_dtype)  # (H,)
    query_position = torch.arange(query_offset, query_offset + query_length, device=device)  # (L,)
    key_position = torch.arange(key_length, device=device)  # (S,)
    distance = (query_position[:, None] - key_position[None, :]).to(compute_dtype)  # (L, S), > 0 for past keys
    bias = -slopes[:, None, None] * distance.abs()  # (H, L, S)
    if is_causal:
        bias = bias.masked_fill(distance < 0, float("-inf"))  # (H, L, S)
    return bias.unsqueeze(0).to(dtype)  # (1, H, L, S)


def transformer_xl_scores(
    query: Tensor,
    key: Tensor,
    w_r: Tensor,
    u: Tensor,
    v: Tensor,
    *,
    query_offset: int | None = None,
    base: float = 10000.0,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The four terms of Transformer-XL's relative attention score, one tensor each.

    With ``q_i`` the query at position ``p_i``, ``k_j`` the key at position ``j`` and ``R_{p_i-j}``
    the sinusoidal encoding of the offset (:func:`sinusoidal_encoding`'s interleaved layout,
    extended to negative offsets by the same formula; the paper's code puts the sines before the
    cosines, a fixed permutation that the learned ``W_R`` absorbs), the score is the sum of

    - (a) content-content ``q_i . k_j``,
    - (b) content-position ``q_i . W_R R_{p_i-j}``: what this query wants at that distance,
    - (c) global content bias ``u . k_j``: how much any query wants this key,
    - (d) global position bias ``v . W_R R_{p_i-j}``: how much any query wants that distance.

    Only the offset ``p_i - j`` enters, never ``p_i`` or ``j`` alone, so (d) is the same along every
    diagonal and (b) changes along one only with the query's content; this is what let
    Transformer-XL reuse the keys of a cached segment. The terms are not scaled or masked: the
    paper divides their sum by ``sqrt(E)`` and masks keys after the query. A readable version
    that builds ``W_R R`` for every (query, key) pair, not the paper's "relative shift" trick.

    Paper: Dai et al., 2019, "Transformer-XL: Attentive Language Models Beyond a Fixed-Length
    Context", section 3.3 (terms (a)-(d) of the relative score). Explained in chapter 6.5.

    Args:
        query: ``q_i = W_q x_i`` per head.
        key: ``k_j = W_{k,E} x_j`` per head.
        w_r: ``W_{k,R}``, projecting an offset's ``D_r``-dimensional sinusoid to each head.
        u: the learned global content bias per head.
        v: the learned global position bias per head.
        query_offset: position of the first query; ``S - L`` when ``None`` (the queries are the
            last ``L`` positions, after ``S - L`` cached ones).
        base: the sinusoid's wavelength scale.

    Returns:
        ``(a, b, c, d)``, the four terms in the order of the paper; their sum is the score.

    Shape:
        query: ``(B, H, L, E)``; key: ``(B, H, S, E)``; w_r: ``(H, D_r, E)``; u, v: ``(H, E)``;
        each output: ``(B, H, L, S)``.

    Raises:
        ValueError: If the shapes do not fit together (the message names the argument).
    """
    if query.dim() != 4 or key.dim() != 4 or query.shape[:2] != key.shape[:2] or query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must be (B, H, L, E) and (B, H, S, E), got query {tuple(query.shape)} "
                         f"and key {tuple(key.shape)}")
    _, num_heads, query_length, head_dim = query.shape
    key_length = key.shape[2]
    if w_r.dim() != 3 or w_r.shape[0] != num_heads or w_r.shape[2] != head_dim:
        raise ValueError(f"w_r must be (H, D_r, E) = ({num_heads}, D_r, {head_dim}), got {tuple(w_r.shape)}")
    for name, bias in (("u", u), ("v", v)):
        if bias.shape != (num_heads, head_dim):
            raise ValueError(f"{name} must be (H, E) = ({num_heads}, {head_dim}), got {tuple(bias.shape)}")
    if query_offset is None:
        query_offset = key_length - query_length
    query_position = torch.arange(query_offset, query_offset + query_length, device=query.device)  # (L,)
    offset = query_position[:, None] - torch.arange(key_length, device=query.device)[None, :]  # (L, S): p_i - j
    table = sinusoidal_encoding(int(offset.abs().max()) + 1, w_r.shape[1], base=base, device=query.device,
                                dtype=query.dtype)  # (P, D_r)
    r = table[offset.abs()]  # (L, S, D_r): R_{|p_i - j|}
    sign = torch.ones(w_r.shape[1], dtype=query.dtype, device=query.device)
    sign[0::2] = -1.0  # sin(-x) = -sin(x) on the even features, cos(-x) = cos(x) on the odd ones
    r = torch.where((offset < 0)[..., None], r * sign, r)  # (L, S, D_r): R_{p_i - j}
    relative_key = torch.einsum("lsd,hde->hlse", r, w_r)  # (H, L, S, E): W_R R_{p_i - j}
    content = query @ key.transpose(-2, -1)  # (B, H, L, S)
    content_position = torch.einsum("bhle,hlse->bhls", query, relative_key)  # (B, H, L, S)
    content_bias = torch.einsum("he,bhse->bhs", u, key)[:, :, None, :].expand_as(content)  # (B, H, L, S)
    position_bias = torch.einsum("he,hlse->hls", v, relative_key)[None].expand_as(content)  # (B, H, L, S)
    return content, content_position, content_bias, position_bias


# ----------------------------------------------------------------------------------------------
# Rotary position embedding (RoPE), rotated into queries and keys
# ----------------------------------------------------------------------------------------------


class RotaryEmbedding(nn.Module):
    """Cosines and sines of the rotary position embedding (RoPE).

    Convention: half-split, as in GPT-NeoX and Hugging Face Llama. Feature ``i`` is paired with
    feature ``i + E/2`` and the pair is rotated by the angle ``position * theta_i`` with
    ``theta_i = base**(-2i / E)``. The paper pairs neighbours ``(2i, 2i + 1)`` instead
    (interleaved). The two are the same rotation applied to a fixed permutation of the
    features; since ``q_proj`` and ``k_proj`` are learned, the permutation is absorbed into their
    weights and the models are equivalent, but checkpoints are not interchangeable without
    permuting those weights.

    Paper: Su et al., 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    section 3.4. Explained in chapter 6.

    Args:
        head_dim: ``E``, must be even.
        base: the wavelength scale (10000 in the paper).
        device: device of the frequencies (a buffer: ``module.to(device)`` moves it too); the
            cosines and sines are made there.
    """

    inv_freq: Tensor

    def __init__(self, head_dim: int, base: float = 10000.0, *, device: torch.device | str | None = None) -> None:
        super().__init__()
        check_positive_int("head_dim", head_dim)
        if head_dim % 2:
            raise ValueError(f"head_dim must be even for RoPE (features are rotated in pairs), got {head_dim}")
        if base <= 0:
            raise ValueError(f"base must be positive, got {base}")
        self.head_dim = head_dim
        self.base = base
        exponent = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim  # (E/2,)
        inv_freq = 1.0 / base**exponent  # (E/2,)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, positions: int | Tensor, *, offset: int = 0) -> tuple[Tensor, Tensor]:
        """Computes ``cos`` and ``sin`` of the rotation angles of some positions.

        Args:
            positions: a length ``L`` (positions ``offset .. offset + L - 1``), or integer
                positions of shape ``(L,)`` or ``(B, L)`` (Hugging Face's ``position_ids``).
            offset: first position when ``positions`` is an int.

        Returns:
            ``(cos, sin)``, float32, each with the angle of pair ``i`` repeated at ``i`` and
            ``i + E/2``; pass them to :func:`apply_rotary_pos_emb`.

        Shape:
            cos, sin: ``(1, L, E)`` for an int or ``(L,)`` positions, ``(B, L, E)`` for ``(B, L)``.
        """
        if isinstance(positions, int):
            positions = torch.arange(offset, offset + positions, device=self.inv_freq.device)  # (L,)
        if positions.dim() == 1:
            positions = positions.unsqueeze(0)  # (1, L)
        if positions.dim() != 2:
            raise ValueError(f"positions must have shape (L,) or (B, L), got {tuple(positions.shape)}")
        angle = positions.to(self.inv_freq.device, torch.float32).unsqueeze(-1) * self.inv_freq  # (B, L, E/2)
        angle = torch.cat((angle, angle), dim=-1)  # (B, L, E)
        return angle.cos(), angle.sin()

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, base={self.base}"


def rotate_half(x: Tensor) -> Tensor:
    """Rotates each half-split pair by 90 degrees: ``(x1, x2) -> (-x2, x1)``.

    With ``x1 = x[..., :E/2]`` and ``x2 = x[..., E/2:]``, this is the multiplication by ``i``
    of the complex numbers ``x1 + i x2``. Explained in chapter 6.

    Args:
        x: any tensor with an even last dimension.

    Returns:
        ``cat(-x2, x1)``.

    Shape:
        x: ``(..., E)``; output: ``(..., E)``
    """
    if x.shape[-1] % 2:
        raise ValueError(f"x must have an even last dimension, got shape {tuple(x.shape)}")
    x1, x2 = x.chunk(2, dim=-1)  # (..., E/2) each
    return torch.cat((-x2, x1), dim=-1)  # (..., E)


def apply_rotary_pos_emb(
    q: Tensor, k: Tensor, cos: Tensor, sin: Tensor, unsqueeze_dim: int = 1
) -> tuple[Tensor, Tensor]:
    """Rotates queries and keys by their positions' angles (half-split RoPE).

    ``x * cos + rotate_half(x) * sin`` rotates every pair ``(x_i, x_{i + E/2})`` by
    ``position * theta_i``, so that ``<R_m q, R_n k>`` depends on ``m - n`` only.

    Paper: Su et al., 2021 (RoFormer), equation 34. Explained in chapter 6.

    Args:
        q: queries.
        k: keys (their number of heads may differ from the queries').
        cos: from :class:`RotaryEmbedding`.
        sin: from :class:`RotaryEmbedding`.
        unsqueeze_dim: where to insert the head axis into ``cos`` and ``sin``: 1 for
            ``(B, H, L, E)`` inputs, 2 for ``(B, L, H, E)``.

    Returns:
        ``(q_rotated, k_rotated)`` in the dtype of ``q`` and ``k``.

    Shape:
        q: ``(B, H, L, E)``; k: ``(B, H_kv, L, E)``; cos, sin: ``(B or 1, L, E)``;
        outputs: as ``q`` and ``k``.
    """
    if cos.shape != sin.shape:
        raise ValueError(f"cos and sin must have the same shape, got {tuple(cos.shape)} and {tuple(sin.shape)}")
    if q.shape[-1] != cos.shape[-1] or k.shape[-1] != cos.shape[-1]:
        raise ValueError(
            f"q, k and cos must share the last dimension E, got q {tuple(q.shape)}, k {tuple(k.shape)}, "
            f"cos {tuple(cos.shape)}"
        )
    cos = cos.unsqueeze(unsqueeze_dim)  # (B, 1, L, E)
    sin = sin.unsqueeze(unsqueeze_dim)  # (B, 1, L, E)
    q_rotated = q * cos.to(q.dtype) + rotate_half(q) * sin.to(q.dtype)  # (B, H, L, E)
    k_rotated = k * cos.to(k.dtype) + rotate_half(k) * sin.to(k.dtype)  # (B, H_kv, L, E)
    return q_rotated, k_rotated
