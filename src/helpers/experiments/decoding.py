"""Experiments of chapter 6.4: decoding with a KV cache, and multi-query / grouped-query attention.

- :func:`cache_equivalence`: greedy decoding with a KV cache gives the same tokens, and the same
  logits to float32 rounding, as recomputing the whole prefix at every step.
- :func:`decode_step_times`: the time to produce one token at position ``p``, with and without the
  cache, measured on a tiny model (one thread); :func:`fit_slope` fits its growth per position.
- :data:`MODEL_SHAPES`, :func:`cache_size_table`, :func:`decode_cost`: the KV cache of real-sized
  configurations, and bytes read against FLOPs per generated token (arithmetic intensity).
- :func:`grouped_decode_attention`, :func:`kv_head_times`: one decoding step of attention over a
  long cache against the number of key/value heads, measured.
- :func:`gqa_quality_runs`, :func:`mean_pool_kv_heads`: MHA, GQA and MQA versions of a tiny model
  trained on the same task, and an MHA model converted to GQA/MQA by mean-pooling its key/value
  heads, then briefly uptrained (Ainslie et al., 2023).

All seeded and sized for a 2-core CPU (one thread).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from helpers.attention import repeat_kv
from helpers.memory import kv_cache_bytes
from helpers.models import LogitsOnly, TinyConfig, TinyGPT
from helpers.multihead import KVCache
from helpers.train import num_threads, set_seed, train

from .. import seeding

__all__ = [
    "mean_spread",
    "cache_equivalence",
    "decode_step_times",
    "fit_slope",
    "ModelShape",
    "MODEL_SHAPES",
    "cache_size_table",
    "decode_cost",
    "RECENT_SHAPES",
    "prefill_cost",
    "grouped_decode_attention",
    "kv_head_times",
    "mean_pool_kv_heads",
    "CONVERSIONS",
    "convert_kv_heads",
    "QualityRun",
    "gqa_quality_runs",
]


def mean_spread(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, min, max)`` of a list of per-seed results."""
    return statistics.fmean(values), min(values), max(values)


def _random_gpt(positional: str, seed: int, *, vocab_size: int = 32, embed_dim: int = 32) -> TinyGPT:
    """A tiny GPT with weights larger than the 0.02 init, so that its greedy output varies."""
    seeding.manual_seed(seed)
    config = TinyConfig(vocab_size=vocab_size, embed_dim=embed_dim, num_heads=4, num_layers=2,
                        max_positions=128, positional=positional)
    model = TinyGPT(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.3)
    return model


@torch.no_grad()
def cache_equivalence(
    positionals: Sequence[str] = ("learned", "rope", "alibi"), *, prompt_len: int = 8, new_tokens: int = 40,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Cached against uncached decoding, for tiny GPTs with several position encodings.

    Returns:
        ``{positional: {"same_tokens": 1.0 or 0.0, "max_logit_gap": ..., "distinct_tokens": ...}}``:
        whether greedy generation with and without the cache gives the same tokens; the largest
        difference between the logits of the incremental pass (prompt, then one token at a time
        through the cache) and those of one full pass over the final sequence; and how many
        different tokens were generated (so that "the same" is not trivially a constant).
    """
    out: dict[str, dict[str, float]] = {}
    with num_threads(1):
        for positional in positionals:
            model = _random_gpt(positional, seed)
            prompt = torch.randint(0, 32, (2, prompt_len), generator=seeding.generator(seed))
            cached = model.generate(prompt, new_tokens, use_cache=True)  # (B, L0 + T)
            full = model.generate(prompt, new_tokens, use_cache=False)  # (B, L0 + T)
            caches = model.new_kv_caches()
            steps = [model(cached[:, :prompt_len], kv_caches=caches).output]  # (B, L0, V)
            for t in range(prompt_len, cached.size(1)):
                steps.append(model(cached[:, t:t + 1], kv_caches=caches).output)  # (B, 1, V)
            incremental = torch.cat(steps, dim=1)  # (B, L0 + T, V)
            whole = model(cached).output  # (B, L0 + T, V)
            out[positional] = {
                "same_tokens": float(torch.equal(cached, full)),
                "max_logit_gap": (incremental - whole).abs().max().item(),
                "distinct_tokens": float(cached[:, prompt_len:].unique().numel()),
            }
    return out


def _best_times(fns: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """The smallest of ``repeats`` wall-clock timings of each ``fn()``, in seconds (after one warm-up each).

    The functions are timed in turn within each repeat, not one after the other: a busy spell of
    the machine (another process, a second notebook of the build) then slows every contender of a
    comparison alike instead of the one that happened to run during it.
    """
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


@torch.no_grad()
def decode_step_times(
    positions: Sequence[int] = (128, 384, 640, 896, 1152, 1408, 1664, 1920), *, embed_dim: int = 64,
    num_layers: int = 2, repeats: int = 7, seed: int = 0,
) -> dict[str, list[float]]:
    """Seconds to produce the next token at each position ``p``, with and without the KV cache.

    Without the cache the model runs over all ``p`` tokens of the prefix; with it, over one new
    token whose keys and values are appended to the ``p - 1`` cached ones. Best of ``repeats``
    timings, one thread.

    Returns:
        ``{"positions": [...], "without cache": [...], "with cache": [...]}`` (seconds).
    """
    set_seed(seed)
    config = TinyConfig(vocab_size=32, embed_dim=embed_dim, num_heads=4, num_layers=num_layers,
                        max_positions=max(positions) + 1, positional="learned")
    model = TinyGPT(config).eval()
    tokens = torch.randint(0, 32, (1, max(positions)), generator=seeding.generator(seed))
    without, with_cache = [], []
    with num_threads(1):
        for p in positions:
            caches = model.new_kv_caches()
            model(tokens[:, :p - 1], kv_caches=caches)  # prefill p - 1 positions
            saved = [(c.key, c.value) for c in caches]

            def step(p: int = p, caches: list[KVCache] = caches, saved: list = saved) -> None:
                for c, (k, v) in zip(caches, saved):
                    c.key, c.value = k, v  # back to p - 1 cached positions
                model(tokens[:, p - 1:p], kv_caches=caches)

            full, cached = _best_times([lambda p=p: model(tokens[:, :p]), step], repeats)
            without.append(full)
            with_cache.append(cached)
    return {"positions": [float(p) for p in positions], "without cache": without, "with cache": with_cache}


def fit_slope(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares line ``y = slope * x + intercept``; returns ``(slope, intercept)``."""
    slope, intercept = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    return float(slope), float(intercept)


@dataclass(frozen=True)
class ModelShape:
    """The sizes of a decoder that set its KV cache and its cost per generated token.

    ``ffn_matrices`` is 3 for a gated (SwiGLU) feed-forward network, 2 for a plain one.
    ``sliding_window`` is the number of most recent tokens each layer attends to (``None``: all);
    a rolling cache then never holds more than that many (:meth:`cache_tokens`).
    """

    name: str
    num_layers: int
    embed_dim: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    ffn_dim: int
    ffn_matrices: int
    vocab_size: int
    sliding_window: int | None = None

    def cache_tokens(self, length: int) -> int:
        """Tokens a (rolling) KV cache holds after ``length`` tokens, ``min(length, sliding_window)``."""
        return length if self.sliding_window is None else min(length, self.sliding_window)

    @property
    def params_per_layer(self) -> int:
        """Weights of one block (q and o projections, k and v projections, feed-forward; norms ignored)."""
        attention = 2 * self.embed_dim * self.num_heads * self.head_dim
        attention += 2 * self.embed_dim * self.num_kv_heads * self.head_dim
        return attention + self.ffn_matrices * self.embed_dim * self.ffn_dim

    @property
    def params(self) -> int:
        """All blocks plus the output projection (the embedding table is looked up, not multiplied)."""
        return self.num_layers * self.params_per_layer + self.vocab_size * self.embed_dim


MODEL_SHAPES = {
    "7B, MHA (Llama-2-7B-like)": ModelShape("7B, MHA (Llama-2-7B-like)", 32, 4096, 32, 32, 128, 11008, 3, 32000),
    "70B, GQA-8 (Llama-2-70B-like)": ModelShape("70B, GQA-8 (Llama-2-70B-like)", 80, 8192, 64, 8, 128, 28672, 3,
                                                32000),
    "7B, MQA (Falcon-7B-like)": ModelShape("7B, MQA (Falcon-7B-like)", 32, 4544, 71, 1, 64, 18176, 2, 65024),
}
"""Three published shapes, 32 heads of 128 in 32 layers; 64 query and 8 key/value heads of 128 in
80 layers; 71 query heads of 64 sharing one key/value head in 32 layers."""

RECENT_SHAPES = {
    "8B, GQA-8 (Llama-3.1-8B-like)": ModelShape("8B, GQA-8 (Llama-3.1-8B-like)", 32, 4096, 32, 8, 128, 14336, 3,
                                                128256),
    "7B, GQA-8, window 4096 (Mistral-7B-like)": ModelShape("7B, GQA-8, window 4096 (Mistral-7B-like)", 32, 4096,
                                                           32, 8, 128, 14336, 3, 32000, sliding_window=4096),
}
"""Two shapes students use, from their published configurations (32 layers, 32 query heads sharing
8 key/value heads of 128, SwiGLU width 14336): Llama-3.1-8B (vocabulary 128256, context 131,072; Llama-3-8B
has the same shape with an 8k context) and Mistral-7B v0.1 (vocabulary 32000, every layer a sliding window of
4096 tokens)."""


def cache_size_table(
    lengths: Sequence[int], batches: Sequence[int], dtypes: Sequence[torch.dtype],
    shapes: dict[str, ModelShape] = MODEL_SHAPES,
) -> dict[tuple[int, torch.dtype], dict[str, list[float]]]:
    """KV cache in GiB, ``{(batch, dtype): {shape name: [GiB at each length]}}``.

    Computed with :func:`~helpers.memory.kv_cache_bytes`.
    """
    return {
        (batch, dtype): {
            name: [kv_cache_bytes(s.num_layers, s.num_kv_heads, s.head_dim, n, batch, dtype) / 2**30 for n in lengths]
            for name, s in shapes.items()
        }
        for batch in batches for dtype in dtypes
    }


def decode_cost(shape: ModelShape, seq_len: int, batch: int, bytes_per_element: int = 2) -> dict[str, float]:
    """FLOPs and bytes read from memory to generate one token for each of ``batch`` sequences.

    Each step multiplies every weight once per sequence (2 FLOPs per weight and sequence) but
    reads it once for the whole batch; attention over ``seq_len`` cached positions does
    ``4 * layers * H * E * seq_len`` FLOPs per sequence (scores and weighted sum) and reads that
    sequence's cache, ``kv_cache_bytes(...)``. Norms, softmax and activations are left out
    (they are small).

    Returns:
        ``{"weight_flops", "attention_flops", "weight_bytes", "cache_bytes", "intensity",
        "attention_intensity"}``: intensity is FLOPs per byte read, overall and for attention alone.
    """
    weight_flops = 2.0 * shape.params * batch
    attention_flops = 4.0 * shape.num_layers * shape.num_heads * shape.head_dim * seq_len * batch
    weight_bytes = float(shape.params * bytes_per_element)
    cache_bytes = 2.0 * shape.num_layers * shape.num_kv_heads * shape.head_dim * seq_len * batch * bytes_per_element
    return {
        "weight_flops": weight_flops,
        "attention_flops": attention_flops,
        "weight_bytes": weight_bytes,
        "cache_bytes": cache_bytes,
        "intensity": (weight_flops + attention_flops) / (weight_bytes + cache_bytes),
        "attention_intensity": attention_flops / cache_bytes,
    }


def prefill_cost(shape: ModelShape, prompt_len: int, batch: int = 1, bytes_per_element: int = 2
                 ) -> dict[str, float]:
    """FLOPs and bytes of processing a prompt of ``prompt_len`` tokens in one pass (the prefill).

    The weights are read once and multiplied by every prompt token (2 FLOPs per weight and
    token); causal attention does ``4 * layers * H * E`` FLOPs per (query, earlier key) pair,
    ``prompt_len * (prompt_len + 1) / 2`` pairs per sequence; the cache of the prompt is written
    once. The counting of :func:`decode_cost`, applied to ``prompt_len`` tokens at once.

    Args:
        shape: The model's sizes.
        prompt_len: Tokens of the prompt.
        batch: Sequences processed together.
        bytes_per_element: 2 for bfloat16/float16 weights and cache.

    Returns:
        ``{"flops", "bytes", "intensity"}``: intensity is FLOPs per byte moved.
    """
    if not isinstance(prompt_len, int) or prompt_len < 1:
        raise ValueError(f"prompt_len must be a positive int, got {prompt_len!r}")
    weight_flops = 2.0 * shape.params * prompt_len * batch
    pairs = shape.cache_tokens(prompt_len) * prompt_len if shape.sliding_window else prompt_len * (prompt_len + 1) / 2
    attention_flops = 4.0 * shape.num_layers * shape.num_heads * shape.head_dim * pairs * batch
    weight_bytes = float(shape.params * bytes_per_element)
    cache_bytes = 2.0 * shape.num_layers * shape.num_kv_heads * shape.head_dim * prompt_len * batch * bytes_per_element
    flops = weight_flops + attention_flops
    return {"flops": flops, "bytes": weight_bytes + cache_bytes, "intensity": flops / (weight_bytes + cache_bytes)}


def grouped_decode_attention(query: Tensor, key: Tensor, value: Tensor, *, scale: float | None = None) -> Tensor:
    """Attention of new queries over a cache, reading each key/value head once for its whole group.

    The ``H / H_kv`` query heads that share a key/value head are stacked as rows of one matrix
    product, instead of copying the key/value head ``H / H_kv`` times (:func:`~helpers.attention.repeat_kv`). Same
    result as ``scaled_dot_product_attention(query, repeat_kv(key), repeat_kv(value))``.

    Shape:
        query: ``(B, H, L, E)``; key: ``(B, H_kv, S, E)``; value: ``(B, H_kv, S, Ev)``;
        output: ``(B, H, L, Ev)``.
    """
    batch, heads, length, dim = query.shape
    kv_heads = key.size(1)
    if heads % kv_heads:
        raise ValueError(f"query heads ({heads}) must be a multiple of key/value heads ({kv_heads})")
    scale = dim ** -0.5 if scale is None else scale
    q = query.reshape(batch, kv_heads, heads // kv_heads * length, dim)  # (B, H_kv, G*L, E)
    scores = q @ key.transpose(-2, -1) * scale  # (B, H_kv, G*L, E) x (B, H_kv, E, S) -> (B, H_kv, G*L, S)
    weights = torch.softmax(scores.float(), dim=-1).to(value.dtype)  # (B, H_kv, G*L, S)
    out = weights @ value  # (B, H_kv, G*L, S) x (B, H_kv, S, Ev) -> (B, H_kv, G*L, Ev)
    return out.reshape(batch, heads, length, value.size(-1))  # (B, H, L, Ev)


@torch.no_grad()
def kv_head_times(
    kv_heads: Sequence[int] = (8, 4, 2, 1), *, num_heads: int = 8, head_dim: int = 64, seq_len: int = 4096,
    batch: int = 4, repeats: int = 9, seed: int = 0,
) -> dict[str, list[float]]:
    """One decoding step of attention (one new query per sequence) over ``seq_len`` cached positions.

    For each number of key/value heads: the cache's bytes, and the best-of-``repeats`` time of
    (a) :func:`grouped_decode_attention`, which reads each key/value head once, (b)
    ``repeat_kv`` followed by PyTorch's fused attention, which first copies every key/value head
    to all the query heads that share it, and (c) PyTorch's fused attention told about the groups
    (``enable_gqa=True``, what :class:`~helpers.multihead.MultiHeadAttention` uses), which leaves
    the sharing to the kernel. One thread, float32.

    Returns:
        ``{"kv_heads", "cache_bytes", "grouped", "repeat_kv", "enable_gqa"}`` (times in seconds).
    """
    gen = seeding.generator(seed)
    query = torch.randn(batch, num_heads, 1, head_dim, generator=gen)  # (B, H, 1, E)
    out: dict[str, list[float]] = {"kv_heads": [], "cache_bytes": [], "grouped": [], "repeat_kv": [], "enable_gqa": []}
    with num_threads(1):
        for h_kv in kv_heads:
            key = torch.randn(batch, h_kv, seq_len, head_dim, generator=gen)  # (B, H_kv, S, E)
            value = torch.randn(batch, h_kv, seq_len, head_dim, generator=gen)  # (B, H_kv, S, E)
            groups = num_heads // h_kv
            out["kv_heads"].append(float(h_kv))
            out["cache_bytes"].append(float(key.nbytes + value.nbytes))
            grouped, copied, shared = _best_times([
                lambda k=key, v=value: grouped_decode_attention(query, k, v),
                lambda k=key, v=value, g=groups: F.scaled_dot_product_attention(
                    query, repeat_kv(k, g), repeat_kv(v, g)),
                lambda k=key, v=value: F.scaled_dot_product_attention(query, k, v, enable_gqa=True),
            ], repeats)
            out["grouped"].append(grouped)
            out["repeat_kv"].append(copied)
            out["enable_gqa"].append(shared)
    return out


CONVERSIONS = ("mean", "first", "random")
"""How :func:`convert_kv_heads` may build each shared key/value head (the mean of its group's heads,
Ainslie et al.'s choice; the group's first head; or a fresh random initialisation, the control)."""


def convert_kv_heads(model: TinyGPT, num_kv_heads: int, how: str = "mean", *, seed: int = 0) -> TinyGPT:
    """A copy of an MHA ``model`` with ``num_kv_heads`` key/value heads, built from its own heads or not at all.

    Ainslie et al. (2023), section 2.1 and Figure 4: the key and value projections of the heads in
    a group become one head, by their mean (``"mean"``), by keeping the group's first head
    (``"first"``), or not from the checkpoint at all (``"random"``: the fresh initialisation of
    :class:`~helpers.models.TinyGPT`, seeded). Everything else is copied. Query head ``h`` then
    uses shared head ``h // (H / num_kv_heads)``, the group its own key/value head belonged to.

    Args:
        model: A multi-head model (``num_kv_heads`` equal to ``num_heads``).
        num_kv_heads: Key/value heads of the copy; must divide the model's ``num_heads``.
        how: One of :data:`CONVERSIONS`.
        seed: Seed of the fresh initialisation when ``how == "random"``.

    Returns:
        The converted model (a new :class:`~helpers.models.TinyGPT`).
    """
    if how not in CONVERSIONS:
        raise ValueError(f"how must be one of {CONVERSIONS}, got {how!r}")
    old = model.config
    heads = old.num_heads
    if not isinstance(num_kv_heads, int) or num_kv_heads < 1 or heads % num_kv_heads \
            or (old.num_kv_heads or heads) != heads:
        raise ValueError(f"model must be MHA with num_heads ({heads}) a multiple of num_kv_heads ({num_kv_heads})")
    config = TinyConfig(**{**vars(old), "num_kv_heads": num_kv_heads})
    seeding.manual_seed(seed)
    converted = TinyGPT(config)
    fresh = converted.state_dict()
    head_dim = old.embed_dim // heads
    state = {}
    for name, tensor in model.state_dict().items():
        if ".self_attn.k_proj." in name or ".self_attn.v_proj." in name:
            grouped = tensor.reshape(num_kv_heads, heads // num_kv_heads, head_dim, *tensor.shape[1:])
            if how == "mean":
                tensor = grouped.mean(dim=1)  # (H_kv, E, D) or (H_kv, E)
            elif how == "first":
                tensor = grouped[:, 0]  # (H_kv, E, D) or (H_kv, E)
            else:
                tensor = fresh[name]  # (H_kv*E, D) or (H_kv*E,)
            tensor = tensor.reshape(num_kv_heads * head_dim, *tensor.shape[2 if how != "random" else 1:])
        state[name] = tensor
    converted.load_state_dict(state)
    return converted


def mean_pool_kv_heads(model: TinyGPT, num_kv_heads: int) -> TinyGPT:
    """A copy of ``model`` with ``num_kv_heads`` key/value heads, each the mean of the heads it replaces.

    Ainslie et al. (2023), section 2.1: the key and value projection matrices of the heads in a
    group are mean-pooled into one; everything else is copied. Query head ``h`` then uses pooled
    head ``h // (H / num_kv_heads)``, the group its own key/value head belonged to. The same as
    ``convert_kv_heads(model, num_kv_heads, "mean")``.
    """
    return convert_kv_heads(model, num_kv_heads, "mean")


@dataclass
class QualityRun:
    """Held-out accuracy of one model on associative recall (chance: 1 / num_values)."""

    variant: str
    seed: int
    accuracy: float
    seconds: float


def gqa_quality_runs(
    seeds: Sequence[int] = (0, 1, 2), *, kv_heads: Sequence[int] = (4, 2, 1), num_heads: int = 4,
    seq_len: int = 16, vocab_size: int = 8, lags: tuple[int, ...] = (3,), embed_dim: int = 32,
    steps: int = 200, uptrain_steps: int = 10, batch: int = 32, lr: float = 3e-3, num_test: int = 512,
    conversions: Sequence[str] = ("mean",),
) -> dict[str, list[QualityRun]]:
    """Tiny GPTs with 4, 2 and 1 key/value heads trained on the same task, and MHA models converted.

    The task (:func:`helpers.experiments.position.recurrence_sequences`): by default
    ``x_t = x_{t-3}`` after three random tokens (8 symbols); ``lags=(1, 2, 5)`` asks for
    ``x_t = (x_{t-1} + x_{t-2} + x_{t-5}) mod V``, three tokens to find and combine. The accuracy is that
    of the next-token prediction on the predictable positions of held-out sequences. Every model
    has ``num_heads`` query heads and sees the same batches. The trained MHA model is also
    converted to each smaller number of key/value heads by :func:`convert_kv_heads` (one entry of
    ``conversions`` at a time), evaluated as it is ("converted") and after ``uptrain_steps`` more
    steps on fresh batches ("uptrained"; 10 of 200 steps is the 5 % of Ainslie et al.'s recipe).

    Returns:
        ``{variant: [QualityRun per seed]}`` with variants ``"MHA"``, ``"GQA-2"``, ``"MQA"`` (trained
        from scratch) and, for each conversion ``how`` and each smaller head count,
        ``"MHA → GQA-2 {how}"`` and ``"MHA → GQA-2 {how} uptrained"`` (the same for MQA); with
        ``how = "mean"`` the first is called ``"MHA → GQA-2 pooled"``.
    """
    from helpers.experiments.position import recurrence_sequences

    first = max(lags)
    test = recurrence_sequences(num_test, seq_len, vocab_size, seed=77_777, lags=lags)

    def name(h_kv: int) -> str:
        return "MHA" if h_kv == num_heads else ("MQA" if h_kv == 1 else f"GQA-{h_kv}")

    def accuracy(model: TinyGPT) -> float:
        model.eval()
        with torch.no_grad():
            pred = model(test[:, :-1]).output.argmax(-1)  # (N, L - 1)
        return (pred[:, first - 1:] == test[:, first:]).float().mean().item()

    def fit(model: TinyGPT, seed: int, n_steps: int, offset: int) -> None:
        def make_batch(step: int) -> tuple[Tensor, Tensor]:
            x = recurrence_sequences(batch, seq_len, vocab_size, seed=seed * 1_000_003 + offset + step, lags=lags)
            targets = x[:, 1:].clone()
            targets[:, :first - 1] = -100  # the random start is not predictable: not in the loss
            return x[:, :-1], targets

        train(LogitsOnly(model), make_batch, steps=n_steps, lr=lr, accuracy_fn=None, seed=seed + offset,
              warmup_steps=20 if offset == 0 else 0)

    runs: dict[str, list[QualityRun]] = {}
    with num_threads(1):
        for seed in seeds:
            trained: dict[int, TinyGPT] = {}
            for h_kv in kv_heads:
                start = time.process_time()
                set_seed(seed)
                config = TinyConfig(vocab_size=vocab_size, embed_dim=embed_dim, num_heads=num_heads, num_layers=2,
                                    num_kv_heads=h_kv, max_positions=seq_len, positional="learned")
                model = TinyGPT(config)
                fit(model, seed, steps, 0)
                trained[h_kv] = model
                runs.setdefault(name(h_kv), []).append(
                    QualityRun(name(h_kv), seed, accuracy(model), time.process_time() - start))
            for how in conversions:
                for h_kv in kv_heads:
                    if h_kv == num_heads:
                        continue
                    start = time.process_time()
                    converted = convert_kv_heads(trained[num_heads], h_kv, how, seed=seed + 1)
                    label = f"MHA → {name(h_kv)} {how}"
                    before = f"MHA → {name(h_kv)} pooled" if how == "mean" else label
                    runs.setdefault(before, []).append(
                        QualityRun(before, seed, accuracy(converted), time.process_time() - start))
                    fit(converted, seed, uptrain_steps, steps)  # the batches after the ones MHA saw
                    after = f"MHA → {name(h_kv)} uptrained" if how == "mean" else f"{label} uptrained"
                    runs.setdefault(after, []).append(
                        QualityRun(after, seed, accuracy(converted), time.process_time() - start))
    return runs
