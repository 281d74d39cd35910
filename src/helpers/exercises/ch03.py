"""Checkers for the exercises of chapter 3, "Why scale by sqrt(d_k)" (``notebooks/03-scaling-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a standard deviation for a variance, ``d_model`` for
``head_dim``, a missing square root, a sign, the variance across pairs for the one within a row.
A checker that takes a function runs it with the package's own implementation of the thing
practised switched off (:func:`helpers.exercises.guard.package_disabled`): an answer that
delegates to it fails, by name.

The lab's exercises, in its order:

1. :func:`check_predicted_variance`: ``Var(q . k)`` for entries of variance ``sigma^2`` (on paper).
2. :func:`check_row_spread`: design the measurement of the spread the softmax sees (an experiment).
3. :func:`check_softmax_jacobian`: write the softmax Jacobian ``diag(p) - p p^T``.
4. :func:`check_lr_prediction`: predict the usable learning rates, then read them off the runs.
5. :func:`check_attention_scale`: the right scale for a head layout (MHA, GQA, MQA).
6. :func:`check_multihead_fix`: find and fix the scaling bug in :func:`buggy_multihead_attention`.

Not in the lab (a teacher's extra): :func:`check_entropy_prediction`, the attention entropy for a
given ``d_k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from helpers import attention as _attention
from helpers import scores as _scores
from helpers.attention import scaled_dot_product_attention
from helpers.diagnostics import softmax_jacobian, softmax_jacobian_norm
from helpers.exercises import CheckResult
from helpers.exercises.messages import phrase, register
from helpers.exercises.reader import call_without_package
from helpers.experiments import dot_variance
from helpers.experiments.logit_scale import logit_scale_of
from helpers.experiments.recall import RecallRun
from helpers.experiments.scale_training import LearningRateSweep, recall_config
from helpers.multihead import MultiHeadAttention
from helpers.train import TrainingHistory

__all__ = [
    "check_predicted_variance",
    "check_row_spread",
    "check_softmax_jacobian",
    "check_lr_prediction",
    "check_attention_scale",
    "buggy_multihead_attention",
    "check_multihead_fix",
    "expected_entropy",
    "check_entropy_prediction",
]

MESSAGES = {
    # What a number is for (the field {what} of the messages below).
    "ch03.what.variance": {"en": "the variance", "zh": "方差"},
    "ch03.what.row_variance": {"en": "the variance (d_k={d_k}, seed={seed})", "zh": "方差（d_k={d_k}，seed={seed}）"},
    "ch03.what.scale": {"en": "the scale ({layout})", "zh": "缩放因子（{layout}）"},
    "ch03.what.entropy": {"en": "the entropy", "zh": "熵"},
    "ch03.number.expected": {
        "en": "expected a number for {what}, got {type} ({value})",
        "zh": "{what}应当是一个数，得到的却是 {type}（{value}）"},
    "ch03.number.finite": {
        "en": "{what} must be a finite number, got {value}",
        "zh": "{what}必须是有限的数，得到的却是 {value}"},
    # Exercise 1: predict Var(q . k).
    "ch03.variance.passed": {
        "en": "Var(q·k) = d_k σ⁴ = {d_k} × {sigma}⁴ = {right:g}: each product q_i k_i has variance σ²·σ², and "
              "independent variances add.",
        "zh": "Var(q·k) = d_k σ⁴ = {d_k} × {sigma}⁴ = {right:g}：每个乘积 q_i k_i 的方差是 σ²·σ²，"
              "而独立项的方差可以相加。"},
    "ch03.variance.std": {
        "en": "{value:g} is the standard deviation √(d_k σ⁴); the question asks for the variance, its square.",
        "zh": "{value:g} 是标准差 √(d_k σ⁴)；题目问的是方差，即它的平方。"},
    "ch03.variance.sigma_once": {
        "en": "{value:g} = d_k σ² counts σ² once; but both q_i and k_i have variance σ², so each product q_i k_i has "
              "variance E[q_i²] E[k_i²] = σ⁴.",
        "zh": "{value:g} = d_k σ² 只把 σ² 算了一次；但 q_i 和 k_i 的方差都是 σ²，所以每个乘积 q_i k_i 的方差是 "
              "E[q_i²] E[k_i²] = σ⁴。"},
    "ch03.variance.unit": {
        "en": "{value:g} = d_k is the answer for unit-variance entries; here the entries have variance σ² = "
              "{sigma_squared:g}, and that enters each product twice.",
        "zh": "{value:g} = d_k 是分量方差为 1 时的答案；这里分量的方差是 σ² = {sigma_squared:g}，"
              "它在每个乘积里出现两次。"},
    "ch03.variance.one_product": {
        "en": "{value:g} = σ⁴ is the variance of one product q_i k_i; q·k adds d_k = {d_k} of them.",
        "zh": "{value:g} = σ⁴ 是一个乘积 q_i k_i 的方差；q·k 是 d_k = {d_k} 个这样的乘积之和。"},
    "ch03.variance.squared": {
        "en": "{value:g} = d_k² σ⁴: variances of independent terms add, so d_k terms give d_k times the variance of "
              "one, not d_k² (that would be the variance of d_k copies of one term).",
        "zh": "{value:g} = d_k² σ⁴：独立项的方差相加，所以 d_k 项之和的方差是一项的 d_k 倍，而不是 d_k² 倍"
              "（那是同一项复制 d_k 份相加后的方差）。"},
    "ch03.variance.sqrt": {
        "en": "{value:g} = √d_k σ² is the standard deviation; the variance is its square.",
        "zh": "{value:g} = √d_k σ² 是标准差；方差是它的平方。"},
    "ch03.variance.sigma_for_variance": {
        "en": "{value:g} = d_k σ uses the standard deviation where a variance belongs: each product has variance "
              "σ² · σ² = σ⁴.",
        "zh": "{value:g} = d_k σ 在该用方差的地方用了标准差：每个乘积的方差是 σ² · σ² = σ⁴。"},
    "ch03.variance.other": {
        "en": "{value:g} is not it. Write q·k = Σ q_i k_i, find the variance of one product (mean 0, so it is "
              "E[q_i²] E[k_i²]), then add the d_k independent terms.",
        "zh": "{value:g} 不对。把 q·k 写成 Σ q_i k_i，先求一个乘积的方差（均值为 0，所以它等于 E[q_i²] E[k_i²]），"
              "再把 d_k 个独立项加起来。"},
    # Exercise 5: the right scale for a head layout.
    "ch03.scale.model_dim": {
        "en": "for {layout}: you scale by 1/√embed_dim = 1/√{embed_dim}: the √d_model bug. Each head's dot product "
              "runs over head_dim = {head_dim} features, so divide by √head_dim.",
        "zh": "当 {layout} 时：你乘的是 1/√embed_dim = 1/√{embed_dim}，这正是 √d_model 的 bug。"
              "每个头的点积只涉及 head_dim = {head_dim} 个特征，所以应除以 √head_dim。"},
    "ch03.scale.multiplier": {
        "en": "for {layout}: you return √head_dim = {value:g}; the scores are *divided* by √head_dim, so the factor "
              "is 1/√head_dim.",
        "zh": "当 {layout} 时：你返回的是 √head_dim = {value:g}；分数是要*除以* √head_dim 的，"
              "所以因子是 1/√head_dim。"},
    "ch03.scale.no_sqrt": {
        "en": "for {layout}: you return 1/head_dim = {value:g}: that shrinks the variance of the scores to "
              "1/head_dim. The standard deviation of q·k is √head_dim, so divide by the square root.",
        "zh": "当 {layout} 时：你返回的是 1/head_dim = {value:g}，这会把分数的方差缩小到 1/head_dim。"
              "q·k 的标准差是 √head_dim，所以应除以平方根。"},
    "ch03.scale.kv_heads": {
        "en": "for {layout}: you divide by √(embed_dim/num_kv_heads) = √{kv_dim}: key/value heads are shared "
              "between query heads, but each dot product still has head_dim = {head_dim} terms.",
        "zh": "当 {layout} 时：你除以的是 √(embed_dim/num_kv_heads) = √{kv_dim}。键/值头由多个查询头共用，"
              "但每个点积仍然只有 head_dim = {head_dim} 项。"},
    "ch03.scale.num_heads": {
        "en": "for {layout}: you divide by √num_heads; the dot product runs over head_dim = embed_dim/num_heads = "
              "{head_dim} features: divide by √head_dim.",
        "zh": "当 {layout} 时：你除以的是 √num_heads；点积涉及的是 head_dim = embed_dim/num_heads = {head_dim} "
              "个特征：应除以 √head_dim。"},
    "ch03.scale.two_mistakes": {
        "en": "for {layout}: you return √embed_dim = {value:g}: two mistakes, a multiplier instead of a divisor and "
              "embed_dim instead of head_dim = {head_dim}.",
        "zh": "当 {layout} 时：你返回的是 √embed_dim = {value:g}，错了两处：把除数当成了乘数，"
              "又用 embed_dim 代替了 head_dim = {head_dim}。"},
    "ch03.scale.wrong": {
        "en": "for {layout} the factor on q·k should be 1/√head_dim = {right:.6g}, got {value:.6g}.",
        "zh": "当 {layout} 时，q·k 上的因子应为 1/√head_dim = {right:.6g}，得到的却是 {value:.6g}。"},
    "ch03.scale.passed": {
        "en": "1/√head_dim with head_dim = embed_dim / num_heads, for MHA, GQA and MQA alike: the number of "
              "key/value heads does not change the size of a dot product.",
        "zh": "1/√head_dim，其中 head_dim = embed_dim / num_heads，MHA、GQA 和 MQA 都是如此："
              "键/值头的个数不会改变点积的长度。"},
    # Exercise 6: find and fix the scaling bug.
    "ch03.fix.model_scale": {
        "en": "with d_model={embed_dim}, num_heads={num_heads}: the scores are still divided by √d_model: each "
              "head's dot product runs over head_dim features, so divide by √head_dim.",
        "zh": "当 d_model={embed_dim}、num_heads={num_heads} 时：分数仍然除以 √d_model。"
              "每个头的点积只涉及 head_dim 个特征，所以应除以 √head_dim。"},
    "ch03.fix.unscaled": {
        "en": "with d_model={embed_dim}, num_heads={num_heads}: the scores are not scaled at all now: divide q·k by "
              "√head_dim.",
        "zh": "当 d_model={embed_dim}、num_heads={num_heads} 时：现在分数完全没有缩放：应把 q·k 除以 √head_dim。"},
    "ch03.fix.no_sqrt": {
        "en": "with d_model={embed_dim}, num_heads={num_heads}: you divide by head_dim; divide by its square root.",
        "zh": "当 d_model={embed_dim}、num_heads={num_heads} 时：你除以的是 head_dim；应除以它的平方根。"},
    "ch03.fix.multiplier": {
        "en": "with d_model={embed_dim}, num_heads={num_heads}: you multiply by √head_dim; divide by it.",
        "zh": "当 d_model={embed_dim}、num_heads={num_heads} 时：你乘上了 √head_dim；应当除以它。"},
    "ch03.fix.num_heads": {
        "en": "with d_model={embed_dim}, num_heads={num_heads}: you divide by √num_heads; the dot product runs over "
              "head_dim = d_model / num_heads features: divide by √head_dim.",
        "zh": "当 d_model={embed_dim}、num_heads={num_heads} 时：你除以的是 √num_heads；点积涉及的是 "
              "head_dim = d_model / num_heads 个特征：应除以 √head_dim。"},
    "ch03.fix.not_tensor": {
        "en": "your function returned a {type}; return the output tensor (B, L, D)",
        "zh": "你的函数返回的是 {type}；应返回输出张量 (B, L, D)"},
    "ch03.fix.returned_none": {
        "en": "your function returned a {type}; return the output tensor (B, L, D) (did you forget `return`?)",
        "zh": "你的函数返回的是 {type}；应返回输出张量 (B, L, D)（是不是忘了写 `return`？）"},
    "ch03.fix.shape": {
        "en": "the output must have the input's shape (B, L, D) = {expected}, got {got}",
        "zh": "输出的形状必须与输入相同，即 (B, L, D) = {expected}，得到的却是 {got}"},
    "ch03.fix.differs": {
        "en": "with d_model={embed_dim}, num_heads={num_heads} the output differs from the layer's (max error "
              "{max_error:.3g}). Fix only the scale line: the head split (view, then transpose(1, 2)) and the merge "
              "were right.",
        "zh": "当 d_model={embed_dim}、num_heads={num_heads} 时，输出与这一层的输出不同（最大误差 {max_error:.3g}）。"
              "只改缩放那一行：头的切分（先 view，再 transpose(1, 2)）与合并原本都是对的。"},
    "ch03.fix.passed": {
        "en": "the bug was the scale: q·k / √d_model. Each head's dot product has head_dim = d_model / num_heads "
              "terms, so the right divisor is √head_dim.",
        "zh": "bug 在缩放：q·k / √d_model。每个头的点积只有 head_dim = d_model / num_heads 项，"
              "所以正确的除数是 √head_dim。"},
    # Extra (not in the lab): predict the entropy for a given d_k.
    "ch03.entropy.setting_scaled": {
        "en": "d_k = {d_k}, {num_keys} keys, scores ÷ √d_k",
        "zh": "d_k = {d_k}、{num_keys} 个键、分数除以 √d_k"},
    "ch03.entropy.setting_unscaled": {
        "en": "d_k = {d_k}, {num_keys} keys, scores not scaled",
        "zh": "d_k = {d_k}、{num_keys} 个键、分数不缩放"},
    "ch03.entropy.passed": {
        "en": "about {right:.2f} nats for {setting} (log {num_keys} = {log_keys:.2f} would be uniform, 0 one-hot).",
        "zh": "在 {setting} 的条件下约为 {right:.2f} 奈特（均匀分布为 log {num_keys} = {log_keys:.2f}，独热为 0）。"},
    "ch03.entropy.negative": {
        "en": "an entropy is never negative: H(p) = -Σ p log p with 0 ≤ p ≤ 1. Check the sign.",
        "zh": "熵不可能是负数：H(p) = -Σ p log p，其中 0 ≤ p ≤ 1。检查一下符号。"},
    "ch03.entropy.bits": {
        "en": "{value:.3f} looks like the entropy in bits (log base 2); the book measures nats (natural log): use "
              "torch.log, not torch.log2.",
        "zh": "{value:.3f} 看起来是以比特为单位的熵（以 2 为底的对数）；本书用的是奈特（自然对数）："
              "应使用 torch.log，而不是 torch.log2。"},
    "ch03.entropy.unscaled": {
        "en": "{value:.3f} is the entropy of *unscaled* scores; the question divides the scores by √d_k.",
        "zh": "{value:.3f} 是*未缩放*的分数的熵；题目中的分数除以了 √d_k。"},
    "ch03.entropy.scaled": {
        "en": "{value:.3f} is the entropy *with* the scale (scores ÷ √d_k, standard deviation 1); the question is "
              "about unscaled scores, whose standard deviation is √d_k = {sqrt_d_k:.3g}.",
        "zh": "{value:.3f} 是*有*缩放时的熵（分数除以 √d_k，标准差为 1）；题目问的是未缩放的分数，"
              "它们的标准差是 √d_k = {sqrt_d_k:.3g}。"},
    "ch03.entropy.std_d_k": {
        "en": "{value:.3f} is what scores of standard deviation d_k = {d_k} give: the variance of q·k is d_k, so its "
              "standard deviation is √d_k = {sqrt_d_k:.3g}.",
        "zh": "{value:.3f} 是标准差为 d_k = {d_k} 的分数给出的熵：q·k 的方差是 d_k，"
              "所以它的标准差是 √d_k = {sqrt_d_k:.3g}。"},
    "ch03.entropy.uniform": {
        "en": "{value:.3f} = log {num_keys} is the entropy of uniform weights; with {setting} the weights are far "
              "from uniform.",
        "zh": "{value:.3f} = log {num_keys} 是均匀权重的熵；在 {setting} 的条件下，权重远非均匀。"},
    "ch03.entropy.too_high": {
        "en": "{value:.3f} nats is too high: the weights are more peaked than that. Simulate it: draw queries and "
              "keys with N(0, 1) entries, take softmax over the keys, and average -Σ p log p over many rows.",
        "zh": "{value:.3f} 奈特太高了：权重比这更尖。模拟一下：抽取分量服从 N(0, 1) 的查询和键，"
              "在键上做 softmax，再对许多行取 -Σ p log p 的平均。"},
    "ch03.entropy.too_low": {
        "en": "{value:.3f} nats is too low: the weights are less peaked than that. Simulate it: draw queries and "
              "keys with N(0, 1) entries, take softmax over the keys, and average -Σ p log p over many rows.",
        "zh": "{value:.3f} 奈特太低了：权重没有这么尖。模拟一下：抽取分量服从 N(0, 1) 的查询和键，"
              "在键上做 softmax，再对许多行取 -Σ p log p 的平均。"},
    # Exercise 3: the softmax Jacobian.
    "ch03.jacobian.not_tensor": {
        "en": "your function returned a {type}; return the Jacobian as a tensor (..., S, S)",
        "zh": "你的函数返回的是 {type}；应以张量 (..., S, S) 的形式返回雅可比矩阵"},
    "ch03.jacobian.returned_none": {
        "en": "your function returned a {type}; return the Jacobian as a tensor (..., S, S) (did you forget "
              "`return`?)",
        "zh": "你的函数返回的是 {type}；应以张量 (..., S, S) 的形式返回雅可比矩阵（是不是忘了写 `return`？）"},
    "ch03.jacobian.shape": {
        "en": "for logits of shape (2, 3, 5) the Jacobian must have shape (2, 3, 5, 5), one (S, S) matrix per row, "
              "got {shape}. torch.diag_embed(p) and p.unsqueeze(-1) * p.unsqueeze(-2) keep the batch dimensions.",
        "zh": "logits 的形状为 (2, 3, 5) 时，雅可比矩阵的形状必须是 (2, 3, 5, 5)，每一行一个 (S, S) 矩阵，"
              "得到的却是 {shape}。torch.diag_embed(p) 和 p.unsqueeze(-1) * p.unsqueeze(-2) 都会保留批的各维。"},
    "ch03.jacobian.passed": {
        "en": "J = diag(p) − p pᵀ. Its rows sum to 0 (softmax is unchanged when every logit moves together), and it "
              "vanishes when p is one-hot.",
        "zh": "J = diag(p) − p pᵀ。它每一行的和为 0（所有 logits 一起平移时，softmax 不变）；"
              "p 为独热向量时，它为零。"},
    "ch03.jacobian.sign": {
        "en": "the sign is flipped: ∂p_i/∂z_i = p_i(1 − p_i) is positive, so J = diag(p) − p pᵀ, not p pᵀ − diag(p).",
        "zh": "符号反了：∂p_i/∂z_i = p_i(1 − p_i) 是正的，所以 J = diag(p) − p pᵀ，而不是 p pᵀ − diag(p)。"},
    "ch03.jacobian.only_diag": {
        "en": "only diag(p): you dropped the − p pᵀ term (raising one logit also lowers every other weight, since "
              "the weights sum to 1).",
        "zh": "只有 diag(p)：你漏掉了 − p pᵀ 这一项（权重之和为 1，所以抬高一个 logit 也会压低其他所有权重）。"},
    "ch03.jacobian.only_outer": {
        "en": "only − p pᵀ: the diagonal needs + p_i as well, J = diag(p) − p pᵀ.",
        "zh": "只有 − p pᵀ：对角线上还要加上 p_i，即 J = diag(p) − p pᵀ。"},
    "ch03.jacobian.logits": {
        "en": "you used the logits z where the probabilities p = softmax(z) belong.",
        "zh": "你在该用概率 p = softmax(z) 的地方用了 logits z。"},
    "ch03.jacobian.not_outer": {
        "en": "p pᵀ must be an outer product (S, S): p.unsqueeze(-1) * p.unsqueeze(-2).",
        "zh": "p pᵀ 必须是一个 (S, S) 的外积：p.unsqueeze(-1) * p.unsqueeze(-2)。"},
    "ch03.jacobian.only_diagonal_entries": {
        "en": "only the diagonal p_i(1 − p_i): the off-diagonal entries −p_i p_j are missing.",
        "zh": "只有对角线 p_i(1 − p_i)：缺了非对角元素 −p_i p_j。"},
    "ch03.jacobian.differs": {
        "en": "the Jacobian differs from diag(p) − p pᵀ (max error {max_error:.3g}); compute p = softmax(z) along the "
              "last dimension first.",
        "zh": "雅可比矩阵与 diag(p) − p pᵀ 不同（最大误差 {max_error:.3g}）；先沿最后一维算出 p = softmax(z)。"},
    # Exercise 2: design the measurement of the spread the softmax sees.
    "ch03.row.across_pairs": {
        "en": "for d_k = {d_k}: {value:.4g} ≈ 3 d_k is the variance across independent (query, key) pairs. The "
              "softmax sees one query against its own keys: fix q, draw many keys, take the variance over the keys, "
              "then average over queries.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} ≈ 3 d_k 是独立的（查询, 键）对之间的方差。softmax 看到的是一个查询"
              "对它自己的那些键：固定 q，抽取许多键，在键上求方差，再对所有查询取平均。"},
    "ch03.row.zero_mean": {
        "en": "for d_k = {d_k}: {value:.4g} ≈ d_k is what zero-mean entries give; here the entries are N(1, 1).",
        "zh": "当 d_k = {d_k} 时：{value:.4g} ≈ d_k 是零均值分量给出的结果；这里的分量服从 N(1, 1)。"},
    "ch03.row.second_moment": {
        "en": "for d_k = {d_k}: {value:.4g} ≈ d_k² + 3 d_k is E[(q·k)²], a second moment: subtract the mean (use "
              ".var(), not .pow(2).mean()).",
        "zh": "当 d_k = {d_k} 时：{value:.4g} ≈ d_k² + 3 d_k 是 E[(q·k)²]，即二阶矩：要减去均值"
              "（用 .var()，而不是 .pow(2).mean()）。"},
    "ch03.row.std": {
        "en": "for d_k = {d_k}: {value:.4g} ≈ √(2 d_k) is a standard deviation; the question asks for the variance.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} ≈ √(2 d_k) 是标准差；题目问的是方差。"},
    "ch03.row.std_across": {
        "en": "for d_k = {d_k}: {value:.4g} ≈ √(3 d_k): a standard deviation, and across pairs.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} ≈ √(3 d_k)：这是标准差，而且是跨样本对的。"},
    "ch03.row.off": {
        "en": "for d_k = {d_k} (seed {seed}) you measured {value:.4g}; the mean within-row variance should be near "
              "{right:g}. Draw queries and keys with entries torch.randn(...) + 1, score each query against its own "
              "keys, take .var() over the keys and average over the queries (a few hundred rows are enough).",
        "zh": "当 d_k = {d_k}（seed {seed}）时，你测得 {value:.4g}；行内方差的平均值应在 {right:g} 附近。"
              "用 torch.randn(...) + 1 抽取查询和键的分量，让每个查询对它自己的键打分，在键上取 .var()，"
              "再对所有查询取平均（几百行就够了）。"},
    "ch03.row.formula": {
        "en": "the two seeds give exactly the same number: that is a formula, not a measurement. Draw the vectors "
              "with a generator seeded by `seed`.",
        "zh": "两个种子给出的数完全相同：这是公式，不是测量。请用以 `seed` 为种子的生成器抽取向量。"},
    "ch03.row.passed": {
        "en": "within a row the variance is |q|² ≈ 2 d_k (you measured {measured:.4g} at d_k = 128, against 3 d_k = "
              "384 across pairs): the row's common shift q·E[k] is the missing d_k, and the softmax ignores it.",
        "zh": "行内的方差是 |q|² ≈ 2 d_k（你在 d_k = 128 时测得 {measured:.4g}，而跨样本对是 3 d_k = 384）："
              "少掉的那个 d_k 是这一行共同的平移 q·E[k]，softmax 不理会它。"},
    # Exercise 4: predict the usable learning rates, then read them off the runs.
    "ch03.lr.made_up_sweep": {"en": "a made-up sweep", "zh": "虚构的扫描"},
    "ch03.lr.labs_sweep": {"en": "the lab's sweep", "zh": "实验中的扫描"},
    "ch03.lr.no_prediction": {
        "en": "first write your prediction, before the runs: a dict {{'scaled': n, 'no scale': m}} with how many of "
              "the {count} learning rates each head can use (0 to {count}); got {prediction}",
        "zh": "先写下你的预测，在运行之前：一个字典 {{'scaled': n, 'no scale': m}}，表示这 {count} 个学习率中"
              "每种头各有几个可用（0 到 {count}）；得到的是 {prediction}"},
    "ch03.lr.not_a_list": {
        "en": "return a list of learning rates (floats), got {result}",
        "zh": "应返回由学习率（浮点数）组成的列表，得到的是 {result}"},
    "ch03.lr.mean_over_seeds": {
        "en": "on {name} ({label}) you keep a learning rate whose *mean* over seeds passes the threshold while one "
              "seed fails: usable means every seed reaches it (min, not mean, of run.final_accuracy over the seeds)",
        "zh": "在{name}上（{label}），你保留了一个各种子*平均*达到阈值、却有一个种子没达到的学习率："
              "可用意味着每个种子都达到阈值（对各种子的 run.final_accuracy 取 min，而不是 mean）"},
    "ch03.lr.wrong": {
        "en": "on {name} ({label}) the usable learning rates are {right}, you returned {returned}: keep the lrs where "
              "every run in sweep.runs[label][i] has final_accuracy >= sweep.threshold",
        "zh": "在{name}上（{label}），可用的学习率是 {right}，你返回的是 {returned}：应保留这样的学习率，"
              "sweep.runs[label][i] 中的每次运行都满足 final_accuracy >= sweep.threshold"},
    "ch03.lr.passed_predicted": {
        "en": "usable with the scale: {scaled}; without: {unscaled} (of {lrs}); your prediction was right.",
        "zh": "有缩放时可用：{scaled}；没有缩放时可用：{unscaled}（候选为 {lrs}）；你的预测是对的。"},
    "ch03.lr.passed_surprised": {
        "en": "usable with the scale: {scaled}; without: {unscaled} (of {lrs}); you predicted {predicted_scaled} and "
              "{predicted_unscaled}; the runs say {measured_scaled} and {measured_unscaled}.",
        "zh": "有缩放时可用：{scaled}；没有缩放时可用：{unscaled}（候选为 {lrs}）；你预测的是 {predicted_scaled} 个和 "
              "{predicted_unscaled} 个，运行结果是 {measured_scaled} 个和 {measured_unscaled} 个。"},
}
"""This chapter's messages in the checkers' catalogue, ``{key: {language: template}}``."""
register(MESSAGES)


def _as_number(answer: Any, what: dict[str, str], language: str | None) -> tuple[float | None, CheckResult | None]:
    if isinstance(answer, Tensor) and answer.numel() == 1:
        answer = answer.item()
    if answer is None or isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return None, CheckResult.of(False, "ch03.number.expected", language, what=what, type=type(answer).__name__,
                                    value=repr(answer))
    if not math.isfinite(answer):
        return None, CheckResult.of(False, "ch03.number.finite", language, what=what, value=repr(answer))
    return float(answer), None


def _near(value: float, target: float, rtol: float) -> bool:
    return abs(value - target) <= rtol * abs(target) + 1e-12


# --------------------------------------------------------------------------------------------
# Exercise 1: predict Var(q . k)
# --------------------------------------------------------------------------------------------


def check_predicted_variance(answer: Any, *, d_k: int = 64, sigma: float = 0.5,
                             language: str | None = None) -> CheckResult:
    """Check a predicted ``Var(q . k)`` for independent entries ``q_i, k_i ~ N(0, sigma^2)``.

    The right answer is ``d_k * sigma^4``: each product ``q_i k_i`` has variance
    ``E[q_i^2] E[k_i^2] = sigma^2 * sigma^2``, and the ``d_k`` independent products add up.

    Args:
        answer: The reader's number.
        d_k: The vectors' size in the question.
        sigma: The entries' standard deviation in the question.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (a standard deviation, one factor of ``sigma^2``,
        ``d_k`` squared, a missing sum).
    """
    value, failure = _as_number(answer, phrase("ch03.what.variance"), language)
    if failure is not None:
        return failure
    right = d_k * sigma**4
    if _near(value, right, 0.02):
        return CheckResult.of(True, "ch03.variance.passed", language, d_k=d_k, sigma=sigma, right=right)
    wrong = [
        (math.sqrt(right), "std"),
        (d_k * sigma**2, "sigma_once"),
        (float(d_k), "unit"),
        (sigma**4, "one_product"),
        (d_k**2 * sigma**4, "squared"),
        (math.sqrt(d_k) * sigma**2, "sqrt"),
        (d_k * sigma, "sigma_for_variance"),
    ]
    for candidate, mistake in wrong:
        if _near(value, candidate, 0.02):
            return CheckResult.of(False, f"ch03.variance.{mistake}", language, value=value, d_k=d_k,
                                  sigma_squared=sigma**2)
    return CheckResult.of(False, "ch03.variance.other", language, value=value)


# --------------------------------------------------------------------------------------------
# Exercise 5: the right scale for a head layout
# --------------------------------------------------------------------------------------------

_LAYOUTS = [(512, 8, 8), (768, 12, 12), (256, 16, 4), (64, 4, 1), (96, 1, 1)]
_SCALE_SOURCES = (logit_scale_of, _scores.scaled_dot_scores, _attention.scaled_dot_product_attention,
                  MultiHeadAttention)


def check_attention_scale(fn: Callable[[int, int, int], float], *, language: str | None = None) -> CheckResult:
    """Check ``fn(embed_dim, num_heads, num_kv_heads) -> scale`` on several head layouts.

    The factor on ``q . k`` must be ``1 / sqrt(head_dim)`` with ``head_dim = embed_dim /
    num_heads``: each head's dot product runs over ``head_dim`` features, whatever the number of
    key/value heads (GQA and MQA share keys between query heads but do not change their size).

    The package's own scales are switched off while ``fn`` runs (``logit_scale_of``, the
    default scale of ``scaled_dot_scores`` and ``scaled_dot_product_attention``, and
    ``MultiHeadAttention``): reading the answer off them fails, by name.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (``d_model`` for ``head_dim``, a missing square root,
        a multiplier instead of a divisor, the key/value heads).
    """
    for embed_dim, num_heads, num_kv_heads in _LAYOUTS:
        layout = f"embed_dim={embed_dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}"
        result, failure = call_without_package(fn, embed_dim, num_heads, num_kv_heads, disabled=_SCALE_SOURCES,
                                               language=language)
        if failure is not None:
            return failure
        value, failure = _as_number(result, phrase("ch03.what.scale", layout=layout), language)
        if failure is not None:
            return failure
        head_dim = embed_dim // num_heads
        right = 1 / math.sqrt(head_dim)
        if _near(value, right, 1e-6):
            continue
        kv_dim = embed_dim // num_kv_heads
        wrong = [
            (1 / math.sqrt(embed_dim), "model_dim"),
            (math.sqrt(head_dim), "multiplier"),
            (1 / head_dim, "no_sqrt"),
            (1 / math.sqrt(kv_dim), "kv_heads"),
            (1 / math.sqrt(num_heads), "num_heads"),
            (math.sqrt(embed_dim), "two_mistakes"),
        ]
        for candidate, mistake in wrong:
            if _near(value, candidate, 1e-6):
                return CheckResult.of(False, f"ch03.scale.{mistake}", language, layout=layout, value=value,
                                      embed_dim=embed_dim, head_dim=head_dim, kv_dim=kv_dim)
        return CheckResult.of(False, "ch03.scale.wrong", language, layout=layout, right=right, value=value)
    return CheckResult.of(True, "ch03.scale.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 6: find and fix the scaling bug
# --------------------------------------------------------------------------------------------


def buggy_multihead_attention(x: Tensor, layer: MultiHeadAttention) -> Tensor:
    """Multi-head self-attention with ``layer``'s weights, and one bug (exercise 6 of the lab).

    Find it: the output differs from ``layer(x)[0]``. The bug is easy to write and nothing
    fails when it is there; chapter 3 measures what it costs.

    Args:
        x: Input tokens.
        layer: A :class:`~helpers.multihead.MultiHeadAttention` (no GQA) whose projections to use.

    Returns:
        The attention output.

    Shape:
        x ``(B, L, D)`` -> ``(B, L, D)``.
    """
    batch, length, d_model = x.shape
    num_heads = layer.num_heads
    head_dim = d_model // num_heads
    q = layer.q_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    k = layer.k_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    v = layer.v_proj(x).view(batch, length, num_heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)  # (B, H, L, E) x (B, H, E, L) -> (B, H, L, L)
    weights = torch.softmax(scores, dim=-1)  # (B, H, L, L)
    out = weights @ v  # (B, H, L, L) x (B, H, L, E) -> (B, H, L, E)
    out = out.transpose(1, 2).reshape(batch, length, d_model)  # (B, L, D): heads concatenated
    return layer.o_proj(out)  # (B, L, D)


_ATTENTION_IMPLEMENTATIONS = (MultiHeadAttention, _attention.scaled_dot_product_attention, _attention.attention_weights,
                              _scores.scaled_dot_scores)


def _attention_with(x: Tensor, layer: MultiHeadAttention, scale: float) -> Tensor:
    """``layer``'s self-attention with the factor ``scale`` on ``q . k``, via the package's kernel."""
    batch, length, d_model = x.shape
    heads, head_dim = layer.num_heads, layer.head_dim
    q = layer.q_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    k = layer.k_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    v = layer.v_proj(x).view(batch, length, heads, head_dim).transpose(1, 2)  # (B, H, L, E)
    out = scaled_dot_product_attention(q, k, v, scale=scale)  # (B, H, L, E)
    return layer.o_proj(out.transpose(1, 2).reshape(batch, length, d_model))  # (B, L, D)


def check_multihead_fix(fn: Callable[[Tensor, MultiHeadAttention], Tensor], *,
                        language: str | None = None) -> CheckResult:
    """Check the reader's fix of :func:`buggy_multihead_attention`: ``fn(x, layer) -> output``.

    Compared with ``layer(x)[0]`` (:class:`~helpers.multihead.MultiHeadAttention`) on two
    layouts; a wrong output is matched against the usual wrong scales and a head-splitting
    mistake. The reference is computed first; then the reader's function runs with the package's
    attention switched off (``MultiHeadAttention``, ``scaled_dot_product_attention``,
    ``attention_weights``, ``scaled_dot_scores``): ``layer(x)[0]`` is not a fix.

    Args:
        fn: The reader's function, with the signature of :func:`buggy_multihead_attention`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake.
    """
    for embed_dim, num_heads in ((96, 8), (48, 3)):  # head_dim**2 != d_model, so every wrong scale differs
        torch.manual_seed(3)
        layer = MultiHeadAttention(embed_dim, num_heads).double()
        x = torch.randn(2, 5, embed_dim, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
        head_dim = embed_dim // num_heads
        with torch.no_grad():  # the reference and the usual mistakes, before the package is switched off
            expected, _ = layer(x)
            wrong = [
                (_attention_with(x, layer, 1 / math.sqrt(embed_dim)), "model_scale"),
                (_attention_with(x, layer, 1.0), "unscaled"),
                (_attention_with(x, layer, 1 / head_dim), "no_sqrt"),
                (_attention_with(x, layer, math.sqrt(head_dim)), "multiplier"),
                (_attention_with(x, layer, 1 / math.sqrt(num_heads)), "num_heads"),
            ]
            result, failure = call_without_package(fn, x, layer, disabled=_ATTENTION_IMPLEMENTATIONS,
                                                   language=language)
        if failure is not None:
            return failure
        if isinstance(result, tuple) and result and isinstance(result[0], Tensor):
            result = result[0]  # (output, weights), as MultiHeadAttention returns
        if not isinstance(result, Tensor):
            key = "ch03.fix.returned_none" if result is None else "ch03.fix.not_tensor"
            return CheckResult.of(False, key, language, type=type(result).__name__)
        if result.shape != expected.shape:
            return CheckResult.of(False, "ch03.fix.shape", language, expected=tuple(expected.shape),
                                  got=tuple(result.shape))
        if torch.allclose(result.double(), expected, atol=1e-8):
            continue
        for candidate, mistake in wrong:
            if torch.allclose(result.double(), candidate, atol=1e-8):
                return CheckResult.of(False, f"ch03.fix.{mistake}", language, embed_dim=embed_dim,
                                      num_heads=num_heads)
        max_error = float((result.double() - expected).abs().max())
        return CheckResult.of(False, "ch03.fix.differs", language, embed_dim=embed_dim, num_heads=num_heads,
                              max_error=max_error)
    return CheckResult.of(True, "ch03.fix.passed", language)


# --------------------------------------------------------------------------------------------
# Extra (not in the lab): predict the entropy for a given d_k
# --------------------------------------------------------------------------------------------


def _mean_entropy(scores: Tensor) -> float:
    p = torch.softmax(scores, dim=-1)  # (N, S)
    return float(-torch.special.xlogy(p, p).sum(-1).mean())


@lru_cache(maxsize=32)
def expected_entropy(d_k: int, num_keys: int = 16, *, scaled: bool = False, num_rows: int = 40_000) -> float:
    """Mean entropy (nats) of ``softmax(q . k_j * scale)`` over ``num_keys`` keys, N(0, 1) entries.

    A Monte Carlo estimate with ``num_rows`` rows and a fixed seed (standard error about 0.003
    nats). Given ``q``, the scores ``q . k_j`` are independent ``N(0, |q|^2)`` with
    ``|q|^2 ~ chi^2(d_k)``, so the rows are drawn that way (cheap for any ``d_k``); the global
    random state is left as it was. Explained in chapter 3.

    Args:
        d_k: Size of queries and keys.
        num_keys: Keys per row.
        scaled: Divide the scores by ``sqrt(d_k)``.
        num_rows: Rows averaged.

    Returns:
        The mean entropy in nats.
    """
    if not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be a positive int, got {d_k!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(12345)
        squared_norm = torch.distributions.Chi2(torch.tensor(float(d_k), dtype=torch.float64)).sample((num_rows, 1))
        scores = torch.randn(num_rows, num_keys, dtype=torch.float64) * squared_norm.sqrt()  # (N, S)
    if scaled:
        scores = scores / math.sqrt(d_k)
    return _mean_entropy(scores)


@lru_cache(maxsize=32)
def _entropy_at_std(std: float, num_keys: int, num_rows: int = 40_000) -> float:
    """Mean entropy of rows of ``num_keys`` independent ``N(0, std^2)`` scores."""
    gen = torch.Generator().manual_seed(54321)
    return _mean_entropy(torch.randn(num_rows, num_keys, generator=gen, dtype=torch.float64) * std)


def check_entropy_prediction(answer: Any, *, d_k: int = 256, num_keys: int = 16, scaled: bool = False,
                             language: str | None = None) -> CheckResult:
    """Check a predicted mean attention entropy (nats) for random queries and keys of size ``d_k``.

    The reference is :func:`expected_entropy`; an answer within 0.03 nats (or 3%) passes, so a
    reader's own simulation with a few thousand rows is enough.

    Args:
        answer: The reader's number.
        d_k: Size of queries and keys in the question.
        num_keys: Keys per softmax row.
        scaled: Whether the question's scores are divided by ``sqrt(d_k)``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (scaled vs unscaled, bits vs nats, variance vs standard
        deviation, the uniform entropy).
    """
    value, failure = _as_number(answer, phrase("ch03.what.entropy"), language)
    if failure is not None:
        return failure
    right = expected_entropy(d_k, num_keys, scaled=scaled)
    tolerance = max(0.03, 0.03 * right)
    setting = phrase("ch03.entropy.setting_scaled" if scaled else "ch03.entropy.setting_unscaled", d_k=d_k,
                      num_keys=num_keys)
    if abs(value - right) <= tolerance:
        return CheckResult.of(True, "ch03.entropy.passed", language, right=right, setting=setting, num_keys=num_keys,
                              log_keys=math.log(num_keys))
    if value < 0:
        return CheckResult.of(False, "ch03.entropy.negative", language)
    if abs(value - right / math.log(2)) <= tolerance / math.log(2):
        return CheckResult.of(False, "ch03.entropy.bits", language, value=value)
    other = expected_entropy(d_k, num_keys, scaled=not scaled)
    if abs(value - other) <= tolerance:
        if scaled:
            return CheckResult.of(False, "ch03.entropy.unscaled", language, value=value)
        return CheckResult.of(False, "ch03.entropy.scaled", language, value=value, sqrt_d_k=math.sqrt(d_k))
    if not scaled and abs(value - _entropy_at_std(float(d_k), num_keys)) <= tolerance:
        return CheckResult.of(False, "ch03.entropy.std_d_k", language, value=value, d_k=d_k, sqrt_d_k=math.sqrt(d_k))
    if abs(value - math.log(num_keys)) <= 0.02:
        return CheckResult.of(False, "ch03.entropy.uniform", language, value=value, num_keys=num_keys,
                              setting=setting)
    return CheckResult.of(False, "ch03.entropy.too_high" if value > right else "ch03.entropy.too_low", language,
                          value=value)


# --------------------------------------------------------------------------------------------
# Exercise 3: the softmax Jacobian
# --------------------------------------------------------------------------------------------


def check_softmax_jacobian(fn: Callable[[Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(logits) -> J`` with ``J[..., i, j] = d p_i / d z_j = p_i (delta_ij - p_j)``.

    Tried on a batch of rows ``(2, 3, 5)``; compared with :func:`helpers.diagnostics.softmax_jacobian`
    (itself tested against autograd), which is switched off while ``fn`` runs.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (a missing ``diag(p)`` or ``p p^T``, a sign, logits used
        for probabilities, a lost batch dimension).
    """
    logits = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    expected = softmax_jacobian(logits).double()  # (2, 3, 5, 5)
    result, failure = call_without_package(fn, logits.clone(), disabled=(softmax_jacobian, softmax_jacobian_norm),
                                           language=language)
    if failure is not None:
        return failure
    if not isinstance(result, Tensor):
        key = "ch03.jacobian.returned_none" if result is None else "ch03.jacobian.not_tensor"
        return CheckResult.of(False, key, language, type=type(result).__name__)
    if result.shape != expected.shape:
        return CheckResult.of(False, "ch03.jacobian.shape", language, shape=tuple(result.shape))
    result = result.double()
    if torch.allclose(result, expected, atol=1e-6):
        return CheckResult.of(True, "ch03.jacobian.passed", language)
    p = torch.softmax(logits, dim=-1)
    outer = p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., S, S)
    z_outer = logits.unsqueeze(-1) * logits.unsqueeze(-2)
    wrong = [
        (-expected, "sign"),
        (torch.diag_embed(p), "only_diag"),
        (-outer, "only_outer"),
        (torch.diag_embed(logits) - z_outer, "logits"),
        (torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-1).transpose(-2, -1).sum(-1, keepdim=True),
         "not_outer"),
        (torch.diag_embed(p * (1 - p)), "only_diagonal_entries"),
    ]
    for candidate, mistake in wrong:
        if candidate.shape == result.shape and torch.allclose(result, candidate, atol=1e-6):
            return CheckResult.of(False, f"ch03.jacobian.{mistake}", language)
    return CheckResult.of(False, "ch03.jacobian.differs", language,
                          max_error=float((result - expected).abs().max()))


# --------------------------------------------------------------------------------------------
# Exercise 2: design the measurement of the spread the softmax sees
# --------------------------------------------------------------------------------------------

_ROW_SOURCES = (dot_variance.within_row_variance, dot_variance.theoretical_row_variance,
                dot_variance.theoretical_dot_variance, dot_variance.dot_product_variance)


def check_row_spread(fn: Callable[[int, int], float], *, language: str | None = None) -> CheckResult:
    """Check the reader's experiment ``fn(d_k, seed) -> variance`` of the scores *within a softmax row*.

    Queries and keys have independent ``N(1, 1)`` entries. The softmax of a row sees one query
    against its keys, so the spread that matters is ``Var_k(q . k | q) = |q|^2``, whose mean is
    ``2 d_k``; the variance across independent pairs is ``3 d_k``, the extra ``d_k`` being the
    row's common shift ``q . E[k]``, which the softmax ignores. The answer must be a measurement
    (two seeds give two different numbers, both within 12% of ``2 d_k``), and it may not call the
    package's variance functions (:mod:`helpers.experiments.dot_variance`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (the variance across pairs, zero-mean entries, an
        uncentred second moment, a standard deviation, a formula instead of a measurement).
    """
    values = {}
    for d_k, seed in ((32, 0), (32, 1), (128, 0)):
        result, failure = call_without_package(fn, d_k, seed, disabled=_ROW_SOURCES, language=language)
        if failure is not None:
            return failure
        value, failure = _as_number(result, phrase("ch03.what.row_variance", d_k=d_k, seed=seed), language)
        if failure is not None:
            return failure
        values[(d_k, seed)] = value
    for (d_k, seed), value in values.items():
        right = 2.0 * d_k
        if _near(value, right, 0.12):
            continue
        wrong = [
            (3.0 * d_k, "across_pairs"),
            (float(d_k), "zero_mean"),
            (d_k**2 + 3.0 * d_k, "second_moment"),
            (math.sqrt(2.0 * d_k), "std"),
            (math.sqrt(3.0 * d_k), "std_across"),
        ]
        for candidate, mistake in wrong:
            if _near(value, candidate, 0.12):
                return CheckResult.of(False, f"ch03.row.{mistake}", language, d_k=d_k, value=value)
        return CheckResult.of(False, "ch03.row.off", language, d_k=d_k, seed=seed, value=value, right=right)
    if values[(32, 0)] == values[(32, 1)]:
        return CheckResult.of(False, "ch03.row.formula", language)
    return CheckResult.of(True, "ch03.row.passed", language, measured=values[(128, 0)])


# --------------------------------------------------------------------------------------------
# Exercise 4: predict the usable learning rates, then read them off the runs
# --------------------------------------------------------------------------------------------


def _fake_run(final: float) -> RecallRun:
    return RecallRun("x", recall_config(4), 0, TrainingHistory(accuracy=[final] * 50), 0)


def _probe_sweep() -> LearningRateSweep:
    """A made-up sweep where the mean over seeds and the worst seed disagree at one learning rate."""
    finals = {"scaled": [(0.95, 0.97, 0.99), (0.99, 0.85, 0.99), (0.5, 0.6, 0.4)],
              "no scale": [(0.91, 0.93, 0.92), (0.2, 0.3, 0.1), (0.1, 0.1, 0.1)]}
    return LearningRateSweep(4, [1e-4, 1e-3, 1e-2],
                             {label: [[_fake_run(a) for a in per_lr] for per_lr in runs]
                              for label, runs in finals.items()},
                             0.9)


def check_lr_prediction(fn: Callable[[LearningRateSweep, str], list[float]], sweep: LearningRateSweep,
                        prediction: Any, *, language: str | None = None) -> CheckResult:
    """Check ``fn(sweep, label) -> usable learning rates``, and compare the reader's prediction with the runs.

    A learning rate is usable when *every* seed's final accuracy reaches ``sweep.threshold``
    (one seed in three failing is a learning rate nobody can rely on). The function is tried on a
    made-up sweep where the mean over seeds and the worst seed disagree, then on the lab's
    ``sweep``; :meth:`~helpers.experiments.scale_training.LearningRateSweep.usable` is switched off meanwhile.
    ``prediction``, written before the runs, is ``{"scaled": n, "no scale": m}``: how many of ``sweep.lrs`` each head
    can use. A wrong prediction does not fail the exercise; the verdict says how far off it was.

    Args:
        fn: The reader's function.
        sweep: The lab's :class:`~helpers.experiments.scale_training.LearningRateSweep`.
        prediction: The reader's prediction.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names a missing prediction, the mean over seeds, a threshold on steps to target...
    """
    count = len(sweep.lrs)
    if (not isinstance(prediction, dict) or set(prediction) != {"scaled", "no scale"}
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= count for v in prediction.values())):
        return CheckResult.of(False, "ch03.lr.no_prediction", language, count=count, prediction=repr(prediction))
    disabled = (LearningRateSweep.usable, LearningRateSweep.usable_decades)
    for probe, name in ((_probe_sweep(), phrase("ch03.lr.made_up_sweep")), (sweep, phrase("ch03.lr.labs_sweep"))):
        for label in ("scaled", "no scale"):
            result, failure = call_without_package(fn, probe, label, disabled=disabled, language=language)
            if failure is not None:
                return failure
            if not isinstance(result, (list, tuple)) or not all(isinstance(v, (int, float)) for v in result):
                return CheckResult.of(False, "ch03.lr.not_a_list", language, result=repr(result))
            right = probe.usable(label)
            if sorted(float(v) for v in result) == right:
                continue
            mean_based = [lr for lr, a in zip(probe.lrs, probe.final_accuracy(label)) if a >= probe.threshold]
            if sorted(float(v) for v in result) == mean_based:
                return CheckResult.of(False, "ch03.lr.mean_over_seeds", language, name=name, label=repr(label))
            return CheckResult.of(False, "ch03.lr.wrong", language, name=name, label=repr(label), right=str(right),
                                  returned=str(list(result)))
    measured = {label: len(sweep.usable(label)) for label in ("scaled", "no scale")}
    key = "ch03.lr.passed_predicted" if measured == prediction else "ch03.lr.passed_surprised"
    return CheckResult.of(True, key, language, scaled=str(sweep.usable("scaled")),
                          unscaled=str(sweep.usable("no scale")), lrs=str(sweep.lrs),
                          predicted_scaled=prediction["scaled"], predicted_unscaled=prediction["no scale"],
                          measured_scaled=measured["scaled"], measured_unscaled=measured["no scale"])
