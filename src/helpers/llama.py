"""A Llama decoder built from the package's own parts, in one readable file (SmolLM2-135M's shape).

Llama (Touvron et al., 2023, "LLaMA: Open and Efficient Foundation Language Models", section 2.2)
is GPT's decoder with four changes, each a part of this package:

- pre-normalisation with **RMSNorm** (Zhang & Sennrich, 2019, "Root Mean Square Layer
  Normalization"): :class:`RMSNorm`;
- the **SwiGLU** feed-forward network (Shazeer, 2020, "GLU Variants Improve Transformer"):
  :class:`LlamaMLP`;
- **rotary position embeddings** (Su et al., 2021, RoFormer):
  :class:`~helpers.positional.RotaryEmbedding`, in the half-split pairing of Hugging Face's Llama
  (feature ``i`` with ``i + E/2``; :mod:`helpers.pretrained` explains why a GGUF file's weights
  must be permuted for it);
- **grouped-query attention** (Ainslie et al., 2023, "GQA"), which SmolLM2 uses (9 query heads,
  3 key/value heads): :class:`~helpers.multihead.MultiHeadAttention` with ``num_kv_heads``,
  decoding through any cache of the protocol :class:`~helpers.multihead.AttentionCache`
  (:class:`~helpers.multihead.KVCache`, :class:`~helpers.multihead.RollingKVCache`,
  :class:`~helpers.streaming.SinkKVCache`).

The input and output embeddings are one matrix (tied). :func:`helpers.pretrained.load_smollm2`
loads SmolLM2-135M-Instruct into it; its logits equal those of transformers' ``LlamaForCausalLM``
(tested). :meth:`LlamaForCausalLM.run` also returns each layer's attention weights and residual
stream, and takes a head mask (the ablations of chapter 7). Explained in chapter 7.

Shape legend:
    B     batch size
    L     number of new tokens (the input's length)
    S     keys each query sees: with a cache, the held positions and the new ones
    D     hidden_size, the width of the residual stream
    F     intermediate_size, the width of the SwiGLU network
    H     num_attention_heads (query heads); H_kv num_key_value_heads
    E     head_dim (D = H * E)
    N     num_hidden_layers
    V     vocab_size
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .checks import check_int, check_positive_int
from .kv_cache import AttentionCache, KVCache, check_cache
from .multihead import MultiHeadAttention
from .positional import RotaryEmbedding

__all__ = ["LlamaConfig", "RMSNorm", "LlamaMLP", "LlamaDecoderLayer", "LlamaOutput", "LlamaForCausalLM"]


@dataclass
class LlamaConfig:
    """The sizes of a Llama decoder; the defaults are SmolLM2-135M's (as its GGUF file gives them).

    Explained in chapter 7.
    """

    vocab_size: int = 49152  # V: tokens in the vocabulary
    hidden_size: int = 576  # D: width of the residual stream
    intermediate_size: int = 1536  # F: width of the SwiGLU network (its gate and up projections)
    num_hidden_layers: int = 30  # N: decoder layers
    num_attention_heads: int = 9  # H: query heads
    num_key_value_heads: int = 3  # H_kv: key/value heads, each shared by H / H_kv query heads (GQA)
    head_dim: int = 64  # E: size of one head; must equal D / H
    rope_theta: float = 100000.0  # RoPE's base: pair i turns by position * theta**(-2i / E)
    rms_norm_eps: float = 9.999999747378752e-06  # added to the mean square in RMSNorm (1e-5 stored as float32)
    max_position_embeddings: int = 8192  # the context the model was trained for (the file's value; not enforced)
    tie_word_embeddings: bool = True  # the output projection is the input embedding matrix
    bos_token_id: int | None = 1  # the tokenizer's "<|im_start|>" (SmolLM2 does not prepend it to a text)
    eos_token_id: int | None = 2  # "<|im_end|>": the end of a chat turn

    def __post_init__(self) -> None:
        for name in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                     "num_key_value_heads", "head_dim", "max_position_embeddings"):
            check_positive_int(name, getattr(self, name))
        if self.num_attention_heads * self.head_dim != self.hidden_size:
            raise ValueError(f"num_attention_heads * head_dim must equal hidden_size, got {self.num_attention_heads} "
                             f"* {self.head_dim} != {self.hidden_size}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"num_key_value_heads={self.num_key_value_heads} must divide "
                             f"num_attention_heads={self.num_attention_heads}")
        if not self.rope_theta > 0 or not self.rms_norm_eps > 0:
            raise ValueError(f"rope_theta and rms_norm_eps must be positive, got rope_theta={self.rope_theta}, "
                             f"rms_norm_eps={self.rms_norm_eps}")


class RMSNorm(nn.Module):
    """Root-mean-square normalisation: ``x / sqrt(mean(x^2) + eps) * weight``, no mean subtracted, no bias.

    Computed in float32 whatever the input's dtype, then cast back before the gain, as in Hugging
    Face's ``LlamaRMSNorm``. Paper: Zhang & Sennrich, 2019, equation 4. Explained in chapter 7.

    Args:
        dim: the size of the normalised (last) dimension.
        eps: added to the mean square.

    Shape:
        x: ``(..., dim)``; output: ``(..., dim)``.
    """

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(check_positive_int("dim", dim)))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        x32 = x.float()
        mean_square = x32.pow(2).mean(-1, keepdim=True)  # (..., 1)
        return self.weight * (x32 * torch.rsqrt(mean_square + self.eps)).to(x.dtype)  # (..., dim)

    def extra_repr(self) -> str:
        return f"{self.weight.size(0)}, eps={self.eps}"


class LlamaMLP(nn.Module):
    """The SwiGLU feed-forward network: ``down_proj(silu(gate_proj(x)) * up_proj(x))``.

    The gate (``silu(x W_gate)``, Swish with beta = 1) multiplies the up projection element-wise.
    Paper: Shazeer, 2020, "GLU Variants Improve Transformer", equation 6 (FFN_SwiGLU).
    Explained in chapter 7.

    Args:
        hidden_size: ``D``.
        intermediate_size: ``F``.

    Shape:
        x: ``(B, L, D)``; output: ``(B, L, D)``.
    """

    def __init__(self, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        gated = F.silu(self.gate_proj(x)) * self.up_proj(x)  # (B, L, F) * (B, L, F) -> (B, L, F)
        return self.down_proj(gated)  # (B, L, F) -> (B, L, D)


class LlamaDecoderLayer(nn.Module):
    """One pre-norm block: ``x + Attn(RMSNorm(x))``, then ``x + MLP(RMSNorm(x))``.

    The attention is the package's :class:`~helpers.multihead.MultiHeadAttention`: causal, with
    RoPE, grouped key/value heads, no biases. Explained in chapter 7.

    Args:
        config: the sizes.
    """

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = MultiHeadAttention(config.hidden_size, config.num_attention_heads,
                                            num_kv_heads=config.num_key_value_heads, bias=False)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = LlamaMLP(config.hidden_size, config.intermediate_size)

    def forward(
        self,
        x: Tensor,
        rope: RotaryEmbedding,
        *,
        kv_cache: AttentionCache | None = None,
        attn_mask: Tensor | None = None,
        head_mask: Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Runs the block on the residual stream.

        Args:
            x: the residual stream.
            rope: the model's rotary embedding.
            kv_cache: this layer's cache, for decoding (updated in place).
            attn_mask: a mask on top of the causal one (``True`` = may attend) or a float bias.
            head_mask: one factor per query head on its attention output (0 removes the head).
            need_weights: also return the attention weights.

        Returns:
            ``(x, weights)``: the new residual stream and the weights (``None`` unless asked).

        Shape:
            x: ``(B, L, D)``; attn_mask: ``(L, S)`` or ``(B, H, L, S)`` (broadcastable);
            head_mask: ``(H,)`` or ``(B, H)``; weights: ``(B, H, L, S)``.
        """
        attended, weights = self.self_attn(self.input_layernorm(x), is_causal=True, kv_cache=kv_cache, rope=rope,
                                           attn_mask=attn_mask, head_mask=head_mask,
                                           need_weights=need_weights)  # (B, L, D)
        x = x + attended  # (B, L, D)
        x = x + self.mlp(self.post_attention_layernorm(x))  # (B, L, D)
        return x, weights


@dataclass
class LlamaOutput:
    """What :meth:`LlamaForCausalLM.run` returns.

    Attributes:
        logits: the next-token scores at every position, ``(B, L, V)``.
        attentions: ``{layer index: weights (B, H, L, S)}`` for the layers asked for (float32,
            each row sums to 1); empty unless asked.
        hidden_states: the residual stream entering each layer, then the last layer's output
            before the final norm: ``N + 1`` tensors ``(B, L, D)``; empty unless asked.
    """

    logits: Tensor
    attentions: dict[int, Tensor] = field(default_factory=dict)
    hidden_states: list[Tensor] = field(default_factory=list)


class LlamaForCausalLM(nn.Module):
    """A Llama decoder with its language-model head: token ids in, next-token logits out.

    ``embed_tokens`` -> ``N`` :class:`LlamaDecoderLayer` -> ``norm`` (RMSNorm) -> ``lm_head``
    (tied to ``embed_tokens`` when ``config.tie_word_embeddings``). Names follow Hugging Face's
    ``LlamaForCausalLM`` without its ``model.`` prefix. Paper: Touvron et al., 2023, section 2.2.
    Explained in chapter 7.

    Args:
        config: the sizes (SmolLM2-135M's by default).
    """

    def __init__(self, config: LlamaConfig | None = None) -> None:
        super().__init__()
        config = LlamaConfig() if config is None else config
        if not isinstance(config, LlamaConfig):
            raise TypeError(f"config must be a LlamaConfig, got {type(config).__name__}")
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(LlamaDecoderLayer(config) for _ in range(config.num_hidden_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.rotary_emb = RotaryEmbedding(config.head_dim, config.rope_theta)
        self.tie_weights()

    def tie_weights(self) -> None:
        """Makes ``lm_head`` use the embedding matrix (when ``config.tie_word_embeddings``)."""
        if self.config.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    @classmethod
    def from_state_dict(
        cls, config: LlamaConfig, state_dict: Mapping[str, Tensor], *, device: torch.device | str | None = None
    ) -> LlamaForCausalLM:
        """Builds the model around the given tensors, without initialising weights first.

        The model is made on the ``meta`` device and takes the tensors themselves
        (``load_state_dict(assign=True)``): no second copy, no random initialisation of 135M
        weights. ``lm_head.weight`` may be left out when the embeddings are tied.

        Args:
            config: the sizes.
            state_dict: ``{parameter name: tensor}``, names as in ``model.state_dict()``.
            device: where to move the model (default: where the tensors are).

        Returns:
            The model, in eval mode.
        """
        with torch.device("meta"):
            model = cls(config)
        tensors = dict(state_dict)
        if config.tie_word_embeddings:
            tensors.setdefault("lm_head.weight", tensors["embed_tokens.weight"])
        model.load_state_dict(tensors, strict=True, assign=True)
        model.tie_weights()  # assign=True gave lm_head a Parameter of its own
        model.rotary_emb = RotaryEmbedding(config.head_dim, config.rope_theta,
                                           device=tensors["embed_tokens.weight"].device)  # its buffer is not saved
        if device is not None:
            model.to(device)
        return model.eval()

    def new_caches(self, factory: Callable[[], AttentionCache] = KVCache) -> list[AttentionCache]:
        """One cache per layer: ``model.new_caches(lambda: RollingKVCache(256))``.

        Args:
            factory: makes one cache (default a plain :class:`~helpers.multihead.KVCache`).

        Returns:
            ``N`` caches, in the order of the layers.
        """
        return [check_cache("factory()", factory()) for _ in self.layers]

    def forward(
        self,
        input_ids: Tensor,
        *,
        caches: Sequence[AttentionCache] | None = None,
        attn_mask: Tensor | None = None,
        head_mask: Tensor | None = None,
    ) -> Tensor:
        """The next-token logits at every position (see :meth:`run` for the arguments).

        Shape:
            input_ids: ``(B, L)``; output: ``(B, L, V)``.
        """
        return self.run(input_ids, caches=caches, attn_mask=attn_mask, head_mask=head_mask).logits

    def run(
        self,
        input_ids: Tensor,
        *,
        caches: Sequence[AttentionCache] | None = None,
        attn_mask: Tensor | None = None,
        head_mask: Tensor | None = None,
        need_weights: bool | Sequence[int] = False,
        output_hidden_states: bool = False,
    ) -> LlamaOutput:
        """Runs the decoder, and keeps what chapter 7 looks at: attention weights, the residual stream.

        Args:
            input_ids: the tokens (one text per row, same length, no padding).
            caches: one cache per layer (:meth:`new_caches`), for decoding: the input then holds
                the tokens after those cached, whose RoPE positions the caches give. A cache
                that takes fewer tokens per update (a :class:`~helpers.streaming.SinkKVCache`
                takes one) is fed the input in blocks of that size, which gives StreamingLLM's
                decoding of a long text token by token.
            attn_mask: a mask every layer applies on top of the causal one (``True`` = may
                attend; e.g. :func:`~helpers.masks.sliding_window_mask`), or a float bias; not
                with an input fed in blocks.
            head_mask: one factor per layer and query head on the head's attention output, before
                ``o_proj``: 0 removes the head (ablation), 1 keeps it (Michel et al., 2019).
            need_weights: ``True`` for every layer's attention weights, or the layer indices to
                keep (each is ``B * H * L * S`` floats: 1.1 GB for all 30 layers at 1,024 tokens).
                Not available when the input is split into blocks.
            output_hidden_states: also keep the residual stream entering each layer.

        Returns:
            A :class:`LlamaOutput`.

        Shape:
            input_ids: ``(B, L)``; attn_mask: ``(L, S)`` or ``(B, H, L, S)`` (broadcastable);
            head_mask: ``(N, H)`` or ``(B, N, H)``; logits: ``(B, L, V)``.
        """
        batch, length = self._check_input_ids(input_ids)
        layers = self._weights_layers(need_weights)
        caches = self._check_caches(caches)
        head_masks = self._split_head_mask(head_mask, batch)
        block = length
        for cache in caches or ():
            if cache.max_update_length is not None:
                block = min(block, cache.max_update_length)
        if block < length and (layers or attn_mask is not None):
            raise ValueError(f"need_weights and attn_mask are not available when the input is fed in blocks of "
                             f"{block} token(s) (the caches' max_update_length): call the model on one block at a time")
        outputs = [self._run_block(input_ids[:, start:start + block], caches, attn_mask, head_masks, layers,
                                   output_hidden_states) for start in range(0, length, block)]
        if len(outputs) == 1:
            return outputs[0]
        return LlamaOutput(
            logits=torch.cat([o.logits for o in outputs], dim=1),  # (B, L, V)
            hidden_states=[torch.cat(states, dim=1) for states in zip(*(o.hidden_states for o in outputs))],
        )

    def _run_block(
        self,
        input_ids: Tensor,
        caches: Sequence[AttentionCache] | None,
        attn_mask: Tensor | None,
        head_masks: list[Tensor | None],
        layers: set[int],
        output_hidden_states: bool,
    ) -> LlamaOutput:
        """One pass of the decoder over ``input_ids`` (the whole input, or one block of it)."""
        attentions: dict[int, Tensor] = {}
        hidden_states: list[Tensor] = []
        x = self.embed_tokens(input_ids)  # (B, L) -> (B, L, D)
        for index, layer in enumerate(self.layers):
            if output_hidden_states:
                hidden_states.append(x)
            x, weights = layer(x, self.rotary_emb, kv_cache=None if caches is None else caches[index],
                               attn_mask=attn_mask, head_mask=head_masks[index],
                               need_weights=index in layers)  # (B, L, D)
            if weights is not None:
                attentions[index] = weights  # (B, H, L, S)
        if output_hidden_states:
            hidden_states.append(x)
        logits = self.lm_head(self.norm(x))  # (B, L, D) -> (B, L, V)
        return LlamaOutput(logits=logits, attentions=attentions, hidden_states=hidden_states)

    @torch.no_grad()
    def generate(
        self,
        input_ids: Tensor,
        max_new_tokens: int,
        *,
        caches: Sequence[AttentionCache] | None = None,
        use_cache: bool = True,
        eos_token_id: int | None = None,
        head_mask: Tensor | None = None,
    ) -> Tensor:
        """Greedy decoding: appends the most likely next token ``max_new_tokens`` times.

        With the cache (the default), the prompt is run once and each new token then costs one
        position per layer; without it (``use_cache=False``) the whole text is run again at every
        step, which gives the same tokens, slower (chapter 7 times both).

        Args:
            input_ids: the prompt (one per row, same length).
            max_new_tokens: how many tokens to add.
            caches: one cache per layer (default: fresh :class:`~helpers.multihead.KVCache`); a
                rolling or sink cache bounds the memory. Caches that already hold a prefix
                continue it: ``input_ids`` are then the tokens after it.
            use_cache: ``False`` to recompute the whole text at every step (no ``caches`` then).
            eos_token_id: stop a row at this token (rows that stopped repeat it until all have);
                ``None`` never stops early.
            head_mask: as in :meth:`run`, at every step.

        Returns:
            The prompt followed by the new tokens.

        Shape:
            input_ids: ``(B, L)``; output: ``(B, L + T)``, ``T <= max_new_tokens``.
        """
        check_int("max_new_tokens", max_new_tokens, minimum=0)
        if eos_token_id is not None:
            check_int("eos_token_id", eos_token_id, minimum=0)
        if not use_cache and caches is not None:
            raise ValueError("caches were given with use_cache=False: pass one or the other")
        self._check_input_ids(input_ids)
        if use_cache and caches is None:
            caches = self.new_caches()
        tokens = [input_ids]
        finished = torch.zeros(input_ids.size(0), dtype=torch.bool, device=input_ids.device)  # (B,)
        logits = self(input_ids, caches=caches, head_mask=head_mask)[:, -1]  # (B, V): after the prompt
        for step in range(max_new_tokens):
            next_token = logits.argmax(dim=-1)  # (B,)
            if eos_token_id is not None:
                next_token = next_token.masked_fill(finished, eos_token_id)  # (B,)
                finished = finished | (next_token == eos_token_id)
            tokens.append(next_token[:, None])  # (B, 1)
            if step == max_new_tokens - 1 or (eos_token_id is not None and bool(finished.all())):
                break
            if use_cache:
                logits = self(next_token[:, None], caches=caches, head_mask=head_mask)[:, -1]  # (B, V)
            else:
                logits = self(torch.cat(tokens, dim=1), head_mask=head_mask)[:, -1]  # (B, V): all again
        return torch.cat(tokens, dim=1)  # (B, L + T)

    def _check_input_ids(self, input_ids: object) -> tuple[int, int]:
        if not isinstance(input_ids, Tensor):
            raise TypeError(f"input_ids must be a torch.Tensor of token ids, got {type(input_ids).__name__}")
        if input_ids.dim() != 2 or input_ids.size(1) == 0 or input_ids.is_floating_point() or input_ids.is_complex():
            raise ValueError(f"input_ids must be an integer tensor of shape (B, L) with L >= 1, got "
                             f"{input_ids.dtype} {tuple(input_ids.shape)}")
        return input_ids.size(0), input_ids.size(1)

    def _weights_layers(self, need_weights: bool | Sequence[int]) -> set[int]:
        count = len(self.layers)
        if isinstance(need_weights, bool):
            return set(range(count)) if need_weights else set()
        if not isinstance(need_weights, Sequence) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < count for i in need_weights
        ):
            raise ValueError(f"need_weights must be a bool or layer indices in 0..{count - 1}, got {need_weights!r}")
        return set(need_weights)

    def _check_caches(self, caches: Sequence[AttentionCache] | None) -> Sequence[AttentionCache] | None:
        if caches is None:
            return None
        if not isinstance(caches, Sequence) or len(caches) != len(self.layers):
            got = f"{len(caches)} caches" if isinstance(caches, Sequence) else type(caches).__name__
            raise ValueError(f"caches must be a list of {len(self.layers)} caches (one per layer; "
                             f"model.new_caches() makes them), got {got}")
        for index, cache in enumerate(caches):
            check_cache(f"caches[{index}]", cache)
        return caches

    def _split_head_mask(self, head_mask: Tensor | None, batch: int) -> list[Tensor | None]:
        count, heads = len(self.layers), self.config.num_attention_heads
        if head_mask is None:
            return [None] * count
        if not isinstance(head_mask, Tensor):
            raise TypeError(f"head_mask must be a torch.Tensor or None, got {type(head_mask).__name__}")
        if head_mask.shape == (count, heads):
            return list(head_mask.unbind(0))  # N x (H,)
        if head_mask.shape == (batch, count, heads):
            return list(head_mask.unbind(1))  # N x (B, H)
        raise ValueError(f"head_mask must have shape (N, H) = {(count, heads)} or (B, N, H) = "
                         f"{(batch, count, heads)}, got {tuple(head_mask.shape)}")

    def extra_repr(self) -> str:
        c = self.config
        return (f"layers={c.num_hidden_layers}, hidden_size={c.hidden_size}, heads={c.num_attention_heads}, "
                f"kv_heads={c.num_key_value_heads}, vocab_size={c.vocab_size}")
