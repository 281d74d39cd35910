"""Checkers for the exercises of chapter 2, "Why a dot product" (``notebooks/02-dot-product-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a transpose, a sign, a missing normalisation, a scale.

- :func:`check_dot_scores`: dot-product scores as one batched matrix product.
- :func:`check_dot_flops`: the operation count of ``Q K^T``.
- :func:`check_euclidean_scores`: Euclidean distance turned into a usable score.
- :func:`check_vectorised_cosine`: a looped cosine similarity, vectorised.
- :func:`check_why_additive_is_slower`: reading the measured cost table.
- :func:`check_cosine_bound`: predict, before a run, the most weight cosine scores can give one slot.
- :func:`check_temperature_ablation`: design the run that tells whether the cosine's trouble is
  its bounded range or its division by lengths.

A checker that compares the reader's code with a function of the package runs the reader's
code with that function switched off (:func:`helpers.exercises.guard.package_disabled`): an
answer that calls it fails, naming the function.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from ``MESSAGES``, this chapter's part of the checkers' catalogue
(``helpers.exercises.messages``), as :mod:`helpers.exercises.ch04` does.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import fields
from typing import Any, Callable

import torch
from torch import Tensor

from helpers.exercises import CheckResult
from helpers.exercises.guard import package_disabled
from helpers.exercises.messages import LANGUAGES, register
from helpers.exercises.reader import allclose, as_tensor, call_without_package, reader_globals
from helpers.experiments import score_cost, score_learning
from helpers.experiments.recall import RecallConfig, train_recall
from helpers.scores import cosine_scores, dot_scores, neg_euclidean_scores, scaled_dot_scores
from helpers.train import num_threads

__all__ = [
    "check_dot_scores",
    "check_dot_flops",
    "check_euclidean_scores",
    "check_vectorised_cosine",
    "ADDITIVE_OPTIONS",
    "check_why_additive_is_slower",
    "looped_cosine_scores",
    "check_cosine_bound",
    "check_temperature_ablation",
]


def _inputs(*shapes: tuple[int, ...], seed: int = 0) -> list[Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=gen, dtype=torch.float64) for shape in shapes]


MESSAGES = {
    "ch02.what.scores": {"en": "scores", "zh": "分数"},
    # Exercise 1: dot-product scores
    "ch02.dot.transpose_hint": {
        "en": "{failure}. With (B, H, L, E) queries and (B, H, S, E) keys, transpose only the last two dimensions of "
              "the key: key.transpose(-2, -1) is (B, H, E, S). key.T (or .t()) reverses every dimension.",
        "zh": "{failure}。查询为 (B, H, L, E)、键为 (B, H, S, E) 时，只应转置键的最后两维："
              "key.transpose(-2, -1) 的形状是 (B, H, E, S)。key.T（或 .t()）会把所有维度的顺序都反过来。"},
    "ch02.dot.transposed": {
        "en": "your scores have shape {shape} = (B, H, S, L): you computed K Qᵀ. Rows must be queries and columns "
              "keys: query @ key.transpose(-2, -1).",
        "zh": "你的分数形状是 {shape} = (B, H, S, L)：你算的是 K Qᵀ。行必须是查询，列必须是键："
              "query @ key.transpose(-2, -1)。"},
    "ch02.dot.shape": {
        "en": "for query (2, 3, 5, 8) and key (2, 3, 7, 8) the scores must have shape (B, H, L, S) = (2, 3, 5, 7), "
              "got {got}. Multiply query (..., L, E) by key.transpose(-2, -1) (..., E, S).",
        "zh": "查询为 (2, 3, 5, 8)、键为 (2, 3, 7, 8) 时，分数的形状应为 (B, H, L, S) = (2, 3, 5, 7)，"
              "得到的是 {got}。应把 query (..., L, E) 乘以 key.transpose(-2, -1) (..., E, S)。"},
    "ch02.dot.scaled": {
        "en": "your scores are divided by √E: that is the scaled dot product of chapter 3. Here we want the plain "
              "dot product q·k.",
        "zh": "你的分数除以了 √E：那是第 3 章的缩放点积。这里要的是普通的点积 q·k。"},
    "ch02.dot.batch_mixed": {
        "en": "the scores pair queries with the keys of another batch element or head: keep the batch dimensions "
              "aligned (matmul broadcasts them for you).",
        "zh": "这些分数把查询与另一个批元素或另一个头的键配成了对：请让批的各维保持对齐（matmul 会替你广播它们）。"},
    "ch02.dot.values": {
        "en": "the shape is right but the values are not q·k (largest error {error:.3g}). Each score is the sum over "
              "E of query[..., i, :] * key[..., j, :].",
        "zh": "形状对了，但数值不是 q·k（最大误差 {error:.3g}）。每个分数是 query[..., i, :] * key[..., j, :] "
              "沿 E 求和的结果。"},
    "ch02.dot.matrices_failed": {
        "en": "right on 4-D inputs, but on plain (L, E) and (S, E) matrices {failure}. Use key.transpose(-2, -1), "
              "which works for any number of leading dimensions.",
        "zh": "在四维输入上是对的，但在普通的 (L, E) 和 (S, E) 矩阵上，{failure}。请用 key.transpose(-2, -1)，"
              "无论前面有多少维它都适用。"},
    "ch02.dot.matrices_wrong": {
        "en": "right on (B, H, L, E) inputs but wrong on plain (L, E) matrices (shape {shape}): the transpose must "
              "act on the last two dimensions only, whatever comes before them.",
        "zh": "在 (B, H, L, E) 输入上是对的，在普通的 (L, E) 矩阵上却错了（形状为 {shape}）："
              "无论前面有哪些维，转置都只能作用在最后两维上。"},
    "ch02.dot.passed": {
        "en": "query @ key.transpose(-2, -1) gives all L×S scores of every batch element and head in one matrix "
              "product.",
        "zh": "query @ key.transpose(-2, -1) 用一次矩阵乘法就给出了每个批元素、每个头的全部 L×S 个分数。"},
    # Exercise 2: the operation count of Q K^T
    "ch02.flops.none": {
        "en": "your function returned None: return the number of operations",
        "zh": "你的函数返回了 None：请返回运算次数"},
    "ch02.flops.not_number": {
        "en": "return a number (int), got {type}",
        "zh": "应返回一个数（int），得到的是 {type}"},
    "ch02.flops.multiplies_only": {
        "en": "for L={L}, S={S}, E={E} you counted {result} = L·S·E: the multiplications only. Each of the E terms "
              "of a dot product is a multiply and an add: 2·L·S·E.",
        "zh": "当 L={L}、S={S}、E={E} 时，你数出的是 {result} = L·S·E：只数了乘法。点积的 E 项中，"
              "每一项都是一次乘法加一次加法：2·L·S·E。"},
    "ch02.flops.scores_only": {
        "en": "{result} = L·S counts the scores, not the work: each score is a dot product of length E (E multiplies "
              "and E adds).",
        "zh": "{result} = L·S 数的是分数的个数，而不是工作量：每个分数都是长度为 E 的点积（E 次乘法和 E 次加法）。"},
    "ch02.flops.l_and_s": {
        "en": "for L={L}, S={S} you got {result}: L and S are different here (queries against keys); the count is "
              "2·L·S·E.",
        "zh": "当 L={L}、S={S} 时，你得到的是 {result}：这里 L 和 S 不相等（查询对键）；次数是 2·L·S·E。"},
    "ch02.flops.e_squared": {
        "en": "{result} has E² in it: one dot product of length E costs E multiplies and E adds, not E².",
        "zh": "{result} 里含有 E²：一个长度为 E 的点积需要 E 次乘法和 E 次加法，而不是 E² 次。"},
    "ch02.flops.wrong": {
        "en": "for L={L}, S={S}, E={E} you got {result}, expected 2·L·S·E = {expected}.",
        "zh": "当 L={L}、S={S}、E={E} 时，你得到的是 {result}，应为 2·L·S·E = {expected}。"},
    "ch02.flops.passed": {
        "en": "2·L·S·E: L·S dot products of length E, one multiply and one add per term.",
        "zh": "2·L·S·E：L·S 个长度为 E 的点积，每一项一次乘法、一次加法。"},
    # Exercises 3 and 4: (L, S) scores
    "ch02.scores.transposed": {
        "en": "your scores have shape (S, L) = ({S}, {L}): rows must be queries, columns keys.",
        "zh": "你的分数形状是 (S, L) = ({S}, {L})：行必须是查询，列必须是键。"},
    "ch02.scores.shape": {
        "en": "for query ({L}, {E}) and key ({S}, {E}) the scores must have shape (L, S) = ({L}, {S}), got {got}.",
        "zh": "查询为 ({L}, {E})、键为 ({S}, {E}) 时，分数的形状应为 (L, S) = ({L}, {S})，得到的是 {got}。"},
    # Exercise 3: Euclidean distance as a score
    "ch02.euclidean.sign": {
        "en": "sign: your scores grow with the distance, so softmax gives the most weight to the FARTHEST key. "
              "Softmax favours large scores: negate the distance.",
        "zh": "符号反了：你的分数随距离增大，所以 softmax 把最大的权重给了最远的键。softmax 偏爱大的分数："
              "请给距离取负。"},
    "ch02.euclidean.not_squared": {
        "en": "the order is right (nearer key, higher score), but these are minus the distances ‖q−k‖, not the "
              "squared distances: the reference (and its fast expansion ‖q‖² − 2q·k + ‖k‖²) uses −‖q−k‖².",
        "zh": "顺序对了（键越近，分数越高），但这是负的距离 −‖q−k‖，不是平方距离：参考实现"
              "（以及它的快速展开式 ‖q‖² − 2q·k + ‖k‖²）用的是 −‖q−k‖²。"},
    "ch02.euclidean.not_finite": {
        "en": "some scores are inf or NaN, where a key equals the query (distance 0): 1/d blows up there. Use "
              "−‖q−k‖², which is 0 for an identical key.",
        "zh": "有些分数是 inf 或 NaN，就在键与查询相同（距离为 0）的地方：1/d 在那里会爆掉。请用 −‖q−k‖²，"
              "键与查询相同时它为 0。"},
    "ch02.euclidean.passed": {
        "en": "−‖q−k‖²: larger for nearer keys, 0 for an identical key; softmax now puts the most weight on the "
              "nearest key.",
        "zh": "−‖q−k‖²：键越近分数越大，与查询相同的键得 0；现在 softmax 把最大的权重放在最近的键上。"},
    "ch02.euclidean.passed_shifted": {
        "en": "your scores differ from −‖q−k‖² by a constant for each query (like 2q·k − ‖k‖², which drops "
              "−‖q‖²): softmax ignores that constant, so the weights are the same.",
        "zh": "你的分数与 −‖q−k‖² 只差一个随查询而定的常数（比如 2q·k − ‖k‖²，它省去了 −‖q‖²）："
              "softmax 会忽略这个常数，所以权重完全相同。"},
    "ch02.euclidean.values": {
        "en": "the values are not −‖q−k‖² (largest error {error:.3g}): for each query i and key j, sum the squared "
              "differences over the features, then negate.",
        "zh": "数值不是 −‖q−k‖²（最大误差 {error:.3g}）：对每个查询 i 和键 j，把各个特征上差的平方加起来，再取负。"},
    # Exercise 4: a looped cosine similarity, vectorised
    "ch02.cosine.plain_dot": {
        "en": "these are plain dot products: divide each score by ‖q_i‖·‖k_j‖.",
        "zh": "这些是普通的点积：每个分数还要除以 ‖q_i‖·‖k_j‖。"},
    "ch02.cosine.queries_only": {
        "en": "you normalised the queries but not the keys: also divide by ‖k_j‖ (a row vector of key norms, shape "
              "(1, S), broadcasts along the rows).",
        "zh": "你只归一化了查询，没有归一化键：还要除以 ‖k_j‖（由键的范数组成的行向量，形状为 (1, S)，"
              "会沿各行广播）。"},
    "ch02.cosine.keys_only": {
        "en": "you normalised the keys but not the queries: also divide by ‖q_i‖ (a column of query norms, shape "
              "(L, 1)).",
        "zh": "你只归一化了键，没有归一化查询：还要除以 ‖q_i‖（由查询的范数组成的一列，形状为 (L, 1)）。"},
    "ch02.cosine.squared_norms": {
        "en": "you divided by the squared norms (q·q and k·k): divide by the norms, their square roots.",
        "zh": "你除以的是范数的平方（q·q 和 k·k）：应除以范数，也就是它们的平方根。"},
    "ch02.cosine.values": {
        "en": "the values are not the cosine similarities (largest error {error:.3g}). Check that the norms are "
              "taken over the feature dimension (dim=-1) and broadcast as (L, 1) for queries and (1, S) for keys.",
        "zh": "数值不是余弦相似度（最大误差 {error:.3g}）。请检查范数是否沿特征维（dim=-1）计算，"
              "并且查询的范数按 (L, 1)、键的范数按 (1, S) 广播。"},
    "ch02.cosine.zero_failed": {
        "en": "right on ordinary vectors, but with a zero query vector {failure}",
        "zh": "在普通向量上是对的，但遇到零查询向量时，{failure}"},
    "ch02.cosine.nan": {
        "en": "a zero vector gives NaN (0/0): clamp each norm from below, norm.clamp_min(eps), as the loop does "
              "with max(norm, eps).",
        "zh": "零向量得到了 NaN（0/0）：请给每个范数设一个下限，norm.clamp_min(eps)，就像循环里用 "
              "max(norm, eps) 那样。"},
    "ch02.cosine.zero_scores": {
        "en": "with a zero query vector the scores must be 0 (the loop divides 0 by eps); got {got}.",
        "zh": "查询向量为零时，分数必须是 0（循环用 0 除以 eps）；得到的是 {got}。"},
    "ch02.cosine.slow": {
        "en": "the values are right, but at L = S = {size} your function takes {your_ms:.2f} ms against "
              "{loop_ms:.2f} ms for the pair loop: is it still looping over pairs? Compute all norms at once, then "
              "one matrix product.",
        "zh": "数值对了，但在 L = S = {size} 时，你的函数耗时 {your_ms:.2f} ms，逐对循环耗时 {loop_ms:.2f} ms："
              "是不是还在逐对循环？先一次算出所有范数，再做一次矩阵乘法。"},
    "ch02.cosine.passed": {
        "en": "right, zero-safe, and {speedup:.0f}× faster than the pair loop at L = S = {size}.",
        "zh": "结果正确，遇到零向量也安全，而且在 L = S = {size} 时比逐对循环快 {speedup:.0f} 倍。"},
    # Exercise 5: why additive scoring is slower
    "ch02.additive.a": {
        "en": "its parameters, 2·E·A + A numbers, do not depend on L or S, yet its time grows like the dot "
              "product's, with L·S, only much steeper in constant. What grows with L·S is the (L, S, A) tensor.",
        "zh": "它的参数共 2·E·A + A 个数，与 L 和 S 无关，可它的耗时却和点积一样随 L·S 增长，只是常数大得多。"
              "随 L·S 增长的是那个 (L, S, A) 张量。"},
    "ch02.additive.b": {
        "en": "the dot product turns each pair into one number inside one matrix product; additive scoring builds "
              "A numbers per pair (L·S·A in all), so its memory traffic and its tanh calls are A times the "
              "number of scores, and the last step (· v) is a matrix-vector product that cannot use the fast "
              "matrix-multiply kernels.",
        "zh": "点积在一次矩阵乘法里把每一对变成一个数；加性打分却为每一对构造 A 个数（共 L·S·A 个），"
              "所以它的内存读写和 tanh 调用都是分数个数的 A 倍，而且最后一步（· v）是矩阵–向量乘积，"
              "用不上快速的矩阵乘法内核。"},
    "ch02.additive.c": {
        "en": "helpers.scores.additive_scores has no Python loop: it broadcasts (L, 1, A) + (1, S, A). The table "
              "shows the difference: the loop over pairs is slower still, and grows with L·S times Python's "
              "per-call overhead.",
        "zh": "helpers.scores.additive_scores 里没有 Python 循环：它做的是广播 (L, 1, A) + (1, S, A)。"
              "表格显示了区别：逐对循环还要更慢，它的耗时按 L·S 乘以 Python 每次调用的开销增长。"},
    "ch02.additive.d": {
        "en": "partly: tanh is costlier than a multiply-add, but it is applied L·S·A times only because of the "
              "(L, S, A) tensor; that tensor, its memory and its traffic, is the root cause.",
        "zh": "只说对了一部分：tanh 确实比一次乘加昂贵，但它之所以要算 L·S·A 次，正是因为那个 (L, S, A) 张量；"
              "这个张量本身，连同它占用的内存和带来的读写，才是根本原因。"},
    "ch02.additive.one_letter": {
        "en": "answer with one letter, one of {letters}; got {got}.",
        "zh": "请用一个字母作答，{letters} 之一；收到的是 {got}。"},
    # Exercise 6: the cosine's bound, predicted
    "ch02.bound.not_number": {
        "en": "return a number (the weight, between 0 and 1), got {type}",
        "zh": "应返回一个数（权重，在 0 和 1 之间），得到的是 {type}"},
    "ch02.bound.perpendicular": {
        "en": "for S = {S} you got e/(e + {others}) = {result:.1%}: the other slots at cosine 0 (perpendicular). "
              "That is not the best case: they can go down to cosine −1, e^(−1) each in the denominator.",
        "zh": "S = {S} 时，你得到的是 e/(e + {others}) = {result:.1%}：这是把其他槽位放在余弦为 0"
              "（相互垂直）的位置。这不是最好的情况：它们的余弦可以低到 −1，在分母里各贡献 e^(−1)。"},
    "ch02.bound.others": {
        "en": "for S = {S}: the matching slot is one of the S slots, so there are S − 1 others, not S.",
        "zh": "S = {S} 时：匹配的槽位本身就是 S 个槽位之一，所以其他槽位有 S − 1 个，而不是 S 个。"},
    "ch02.bound.all_weight": {
        "en": "a perfect match does not get all the weight: its score is at most 1 and the others' at least −1, so "
              "e^1 competes with (S − 1)·e^(−1).",
        "zh": "完美的匹配也拿不到全部权重：它的分数至多为 1，其他槽位的至少为 −1，所以 e^1 要与 "
              "(S − 1)·e^(−1) 竞争。"},
    "ch02.bound.uniform": {
        "en": "1/S = {uniform:.1%} is the weight of equal scores, the worst case: the question asks for the best the "
              "bounded scores allow.",
        "zh": "1/S = {uniform:.1%} 是分数全部相等时的权重，也就是最坏的情况：题目问的是有界的分数所能允许的最好情况。"},
    "ch02.bound.wrong": {
        "en": "for S = {S} you got {result:.4g}, expected {expected:.4g}: the best case puts the match at cosine 1 "
              "and every other slot at −1.",
        "zh": "S = {S} 时，你得到的是 {result:.4g}，应为 {expected:.4g}：最好的情况是匹配的槽位余弦为 1，"
              "其他每个槽位都为 −1。"},
    "ch02.bound.passed": {
        "en": "e / (e + (S − 1)/e): {bound_24:.1%} for 24 slots, {bound_100:.1%} for 100. However well it learns, a "
              "plain cosine cannot focus: it needs a temperature.",
        "zh": "e / (e + (S − 1)/e)：24 个槽位时为 {bound_24:.1%}，100 个时为 {bound_100:.1%}。无论学得多好，"
              "朴素的余弦都无法聚焦：它需要温度。"},
    # Exercise 7: the temperature ablation, designed
    "ch02.ablation.not_config": {
        "en": "give a RecallConfig (start from score_learning.score_config('cosine') and dataclasses.replace one "
              "field), got {type}",
        "zh": "请给出一个 RecallConfig（从 score_learning.score_config('cosine') 出发，用 dataclasses.replace "
              "改一个字段），收到的是 {type}"},
    "ch02.ablation.other_score": {
        "en": "your run uses score={score}: the question is about the cosine, so keep it; another score function "
              "changes the division and the bound at once.",
        "zh": "你的运行用的是 score={score}：问题问的是余弦，所以要保留它；换一种打分函数，除法和上界会同时改变。"},
    "ch02.ablation.unchanged": {
        "en": "this is the chapter's plain-cosine run, which we know fails: change one thing, the one the question "
              "is about.",
        "zh": "这就是本章的朴素余弦运行，我们已经知道它会失败：请改一处，就改问题所问的那一处。"},
    "ch02.ablation.learned": {
        "en": "a learned scale is the chapter's own run, and it mixes two things (the factor, and how fast it is "
              "learned). Fix the factor (scale=..., learned_scale=False): one number, chosen by you, tests the "
              "bound alone.",
        "zh": "可学习的缩放因子就是本章自己做过的运行，它把两件事混在了一起（因子本身，以及它学得多快）。"
              "请固定这个因子（scale=...，learned_scale=False）：由你选定的一个数，单独检验上界。"},
    "ch02.ablation.other_fields": {
        "en": "your run changes {changed}: change only the factor on the scores (scale), or you will not know which "
              "change did it. More steps or fewer slots do not lift the bound of scores in [−1, 1].",
        "zh": "你的运行改了 {changed}：只改乘在分数上的因子（scale），否则你无法知道是哪一处改动起了作用。"
              "更多的步数或更少的槽位都抬不高 [−1, 1] 内分数的上界。"},
    "ch02.ablation.too_many_steps": {
        "en": "keep steps ≤ {max_steps}, so that the check runs in seconds.",
        "zh": "请让 steps ≤ {max_steps}，这样检查几秒钟就能跑完。"},
    "ch02.ablation.bound_too_low": {
        "en": "with the factor {factor:g} the scores span [−{factor:g}, {factor:g}] and the best one slot of "
              "{slots} can get is {best:.1%}, under {target:.0%}: still bounded too low to tell. Pick a factor "
              "whose bound is above the target (exercise 6, with e^factor for e).",
        "zh": "因子为 {factor:g} 时，分数的范围是 [−{factor:g}, {factor:g}]，{slots} 个槽位中的一个最多只能得到 "
              "{best:.1%}，低于 {target:.0%}：上界仍然太低，分辨不出来。请选一个上界高于目标的因子"
              "（用练习 6 的公式，把 e 换成 e^factor）。"},
    "ch02.ablation.did_not_learn": {
        "en": "a clean design (only the factor changes, bound {best:.1%}), but the run reached {accuracy:.1%} "
              "held-out accuracy after {steps} steps: with a factor this large the softmax saturates and learns "
              "slowly. Try a smaller one whose bound is still above the target.",
        "zh": "设计是干净的（只改了因子，上界为 {best:.1%}），但这次运行 {steps} 步后的留出集准确率只有 "
              "{accuracy:.1%}：因子这么大，softmax 会饱和，学得很慢。试一个小一些、但上界仍高于目标的因子。"},
    "ch02.ablation.passed": {
        "en": "cosine × {factor:g}: {accuracy:.1%} held-out accuracy after {steps} steps, where the plain cosine "
              "stays under 40%. Only the bound changed, not the division by the lengths: the bound was the problem.",
        "zh": "余弦 × {factor:g}：{steps} 步后留出集准确率为 {accuracy:.1%}，而朴素的余弦始终低于 40%。"
              "变的只有上界，除以长度这一步没变：问题出在上界。"},
}
"""This chapter's messages in the checkers' catalogue, ``{key: {language: template}}``."""
register(MESSAGES)

_SCORES = MESSAGES["ch02.what.scores"]  # the phrase "scores" in every language (for as_tensor)


def _in_every_language(verdict: CheckResult) -> dict[str, str]:
    """A verdict's message rendered in every language: a field of another message (a verdict on the
    reader's function, quoted inside this chapter's sentence), rendered in that one's language.
    English keeps its message as it always was; the others drop a final full stop (``。``), which the
    sentence around it supplies."""
    return {language: verdict.in_language(language).message.rstrip("" if language == LANGUAGES[0] else "。")
            for language in LANGUAGES}


_DOT = (dot_scores, scaled_dot_scores)
_FLOPS = (score_cost.score_flops, score_cost.flops_table)
_EUCLIDEAN = (neg_euclidean_scores,)
_COSINE = (cosine_scores,)
_BOUND = (score_learning.cosine_weight_bound,)


def _max_error(a: Tensor, b: Tensor) -> float:
    return float((a.double() - b.double()).abs().max())


# --------------------------------------------------------------------------------------------
# Exercise 1: dot-product scores as one batched matrix product
# --------------------------------------------------------------------------------------------


def check_dot_scores(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(query, key) -> scores``: every query against every key, ``q_i . k_j``.

    Tried on ``(B, H, L, E)`` queries and ``(B, H, S, E)`` keys with ``L != S``, then on plain
    ``(L, E)``/``(S, E)`` matrices (the same line of code must work for any number of leading
    dimensions). Compared with :func:`helpers.scores.dot_scores`, which the answer may not call
    (nor :func:`~helpers.scores.scaled_dot_scores`).

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (transposed result, wrong transpose, scale, batch mix-up).
    """
    query, key = _inputs((2, 3, 5, 8), (2, 3, 7, 8))
    expected = dot_scores(query, key)  # (2, 3, 5, 7)
    q2, k2 = _inputs((4, 6), (9, 6), seed=1)
    expected2 = dot_scores(q2, k2)  # (4, 9); the references first: the reader's code runs without them
    result, failure = call_without_package(fn, query, key, disabled=_DOT, language=language)
    if failure is not None:
        english = failure.in_language("en").message  # the hint depends on the error, not on the language
        if any(words in english for words in ("size mismatch", "must match", "shapes cannot", "dimension")):
            return CheckResult.of(False, "ch02.dot.transpose_hint", language, failure=_in_every_language(failure))
        return failure
    result, failure = as_tensor(result, _SCORES, language)
    if failure is not None:
        return failure
    if result.shape == expected.transpose(-2, -1).shape and allclose(result, expected.transpose(-2, -1)):
        return CheckResult.of(False, "ch02.dot.transposed", language, shape=tuple(result.shape))
    if result.shape != expected.shape:
        return CheckResult.of(False, "ch02.dot.shape", language, got=tuple(result.shape))
    if allclose(result, expected / math.sqrt(query.size(-1))):
        return CheckResult.of(False, "ch02.dot.scaled", language)
    if not allclose(result, expected):
        mixed = query @ key.flip(0).transpose(-2, -1)
        if allclose(result, mixed) or allclose(result, query @ key.flip(1).transpose(-2, -1)):
            return CheckResult.of(False, "ch02.dot.batch_mixed", language)
        return CheckResult.of(False, "ch02.dot.values", language, error=_max_error(result, expected))
    result2, failure = call_without_package(fn, q2, k2, disabled=_DOT, language=language)
    if failure is not None:
        return CheckResult.of(False, "ch02.dot.matrices_failed", language, failure=_in_every_language(failure))
    result2, failure = as_tensor(result2, _SCORES, language)
    if failure is not None:
        return failure
    if not allclose(result2, expected2):
        return CheckResult.of(False, "ch02.dot.matrices_wrong", language, shape=tuple(result2.shape))
    return CheckResult.of(True, "ch02.dot.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 2: the operation count of Q K^T
# --------------------------------------------------------------------------------------------


def check_dot_flops(fn: Callable[[int, int, int], int], *, language: str | None = None) -> CheckResult:
    """Check ``fn(L, S, E) -> int``: floating-point operations of ``Q K^T`` (one multiply and one
    add per term, so ``2 L S E``; the exact ``L S (2E - 1)`` is accepted too). The answer may not
    call :func:`helpers.experiments.score_cost.score_flops` or ``flops_table``.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (multiplies only, L and S confused, E forgotten).
    """
    cases = [(5, 7, 8), (16, 3, 64), (1, 10, 4)]
    for L, S, E in cases:
        result, failure = call_without_package(fn, L, S, E, disabled=_FLOPS, language=language)
        if failure is not None:
            return failure
        if result is None:
            return CheckResult.of(False, "ch02.flops.none", language)
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return CheckResult.of(False, "ch02.flops.not_number", language, type=type(result).__name__)
        right = {2 * L * S * E, L * S * (2 * E - 1)}
        if result in right:
            continue
        if result == L * S * E:
            return CheckResult.of(False, "ch02.flops.multiplies_only", language, L=L, S=S, E=E, result=result)
        if result == L * S:
            return CheckResult.of(False, "ch02.flops.scores_only", language, result=result)
        if result in (2 * L * L * E, 2 * S * S * E, L * L * E, S * S * E):
            return CheckResult.of(False, "ch02.flops.l_and_s", language, L=L, S=S, result=result)
        if result in (2 * L * S * E * E, L * S * E * E):
            return CheckResult.of(False, "ch02.flops.e_squared", language, result=result)
        return CheckResult.of(False, "ch02.flops.wrong", language, L=L, S=S, E=E, result=result,
                              expected=2 * L * S * E)
    return CheckResult.of(True, "ch02.flops.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 3: make Euclidean distance usable as a score
# --------------------------------------------------------------------------------------------


def _reader_scores(fn: Any, query: Tensor, key: Tensor, disabled: tuple[Any, ...],
                   language: str | None = None) -> tuple[Tensor | None, CheckResult | None]:
    """The reader's ``(L, S)`` scores for 2-D ``query``/``key`` (computed with the package's
    ``disabled`` functions switched off), or the verdict (in ``language``) on why there are none."""
    result, failure = call_without_package(fn, query, key, disabled=disabled, language=language)
    if failure is not None:
        return None, failure
    result, failure = as_tensor(result, _SCORES, language)
    if failure is not None:
        return None, failure
    (L, E), S = query.shape, key.size(0)
    if result.shape == (S, L):
        return None, CheckResult.of(False, "ch02.scores.transposed", language, S=S, L=L)
    if result.shape != (L, S):
        return None, CheckResult.of(False, "ch02.scores.shape", language, L=L, E=E, S=S, got=tuple(result.shape))
    return result, None


def check_euclidean_scores(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(query, key) -> scores`` built from Euclidean distance, to be fed to softmax.

    The reference is :func:`helpers.scores.neg_euclidean_scores`, ``-|q_i - k_j|^2``: larger
    for nearer keys, 0 for a key equal to the query. Scores that differ from it by a constant
    per query (e.g. ``2 q.k - |k|^2``) give the same softmax weights and are accepted, with a note.
    The answer may not call :func:`~helpers.scores.neg_euclidean_scores`.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (sign, square root, reciprocal, transposed).
    """
    query, key = _inputs((4, 3), (6, 3), seed=2)
    key[2] = query[1]  # one key equals a query: distance 0
    expected = neg_euclidean_scores(query, key)  # (4, 6)
    distance_sq = -expected
    result, failure = _reader_scores(fn, query, key, _EUCLIDEAN, language)
    if failure is not None:
        return failure
    result = result.double()
    if allclose(result, distance_sq) or allclose(result, distance_sq.sqrt()):
        return CheckResult.of(False, "ch02.euclidean.sign", language)
    if allclose(result, -distance_sq.sqrt()):
        return CheckResult.of(False, "ch02.euclidean.not_squared", language)
    if not torch.isfinite(result).all():
        return CheckResult.of(False, "ch02.euclidean.not_finite", language)
    if allclose(result, expected):
        return CheckResult.of(True, "ch02.euclidean.passed", language)
    shift = result - expected  # constant along each row <=> same softmax
    if torch.allclose(shift, shift[:, :1].expand_as(shift), rtol=1e-5, atol=1e-6):
        return CheckResult.of(True, "ch02.euclidean.passed_shifted", language)
    return CheckResult.of(False, "ch02.euclidean.values", language, error=_max_error(result, expected))


# --------------------------------------------------------------------------------------------
# Exercise 4: vectorise a looped cosine similarity
# --------------------------------------------------------------------------------------------


def looped_cosine_scores(query: Tensor, key: Tensor, eps: float = 1e-8) -> Tensor:
    """Cosine similarity of every query with every key, one pair at a time (the slow reference).

    A vector whose norm is below ``eps`` is divided by ``eps`` instead (so a zero vector scores 0),
    as in :func:`helpers.scores.cosine_scores`.

    Shape:
        query ``(L, E)``, key ``(S, E)`` -> ``(L, S)``.
    """
    L, S = query.size(0), key.size(0)
    scores = torch.empty(L, S, dtype=query.dtype)
    for i in range(L):
        for j in range(S):
            q_norm = max(float(query[i].norm()), eps)
            k_norm = max(float(key[j].norm()), eps)
            scores[i, j] = torch.dot(query[i], key[j]) / (q_norm * k_norm)
    return scores


def _best_of(fn: Callable[[], Any], repeats: int = 3) -> float:
    """Fastest of ``repeats`` calls on one PyTorch thread (threads fighting over a shared CPU
    can make a microsecond product take milliseconds)."""
    best = math.inf
    with num_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
    return best


def check_vectorised_cosine(fn: Callable[[Tensor, Tensor], Tensor], *, speed_size: int = 64,
                            language: str | None = None) -> CheckResult:
    """Check ``fn(query, key) -> scores``, a vectorised :func:`looped_cosine_scores`.

    Compared with :func:`helpers.scores.cosine_scores` on ``(L, E)``/``(S, E)`` inputs that
    include a zero vector (which must score 0, not NaN), then timed against the pair loop at
    ``L = S = speed_size``: it must be at least 10 times faster. The answer may not call
    :func:`~helpers.scores.cosine_scores`.

    Args:
        fn: The reader's function.
        speed_size: Size of the timing test.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (missing normalisation, squared norms, NaN, still a loop).
    """
    query, key = _inputs((5, 4), (7, 4), seed=3)
    expected = cosine_scores(query, key)
    zero_query = torch.cat([query, torch.zeros(1, 4, dtype=query.dtype)])  # (6, 4): the last query is zero
    expected_zero = cosine_scores(zero_query, key)  # the references first: the reader's code runs without them
    result, failure = _reader_scores(fn, query, key, _COSINE, language)
    if failure is not None:
        return failure
    q_norm = query.norm(dim=-1, keepdim=True)  # (L, 1)
    k_norm = key.norm(dim=-1)  # (S,)
    dots = query @ key.T  # (L, S)
    if allclose(result, dots):
        return CheckResult.of(False, "ch02.cosine.plain_dot", language)
    if allclose(result, dots / q_norm):
        return CheckResult.of(False, "ch02.cosine.queries_only", language)
    if allclose(result, dots / k_norm):
        return CheckResult.of(False, "ch02.cosine.keys_only", language)
    if allclose(result, dots / (q_norm**2 * k_norm**2)):
        return CheckResult.of(False, "ch02.cosine.squared_norms", language)
    if not allclose(result, expected):
        return CheckResult.of(False, "ch02.cosine.values", language, error=_max_error(result, expected))
    result_zero, failure = call_without_package(fn, zero_query, key, disabled=_COSINE, language=language)
    if failure is not None:
        return CheckResult.of(False, "ch02.cosine.zero_failed", language, failure=_in_every_language(failure))
    result_zero, failure = as_tensor(result_zero, _SCORES, language)
    if failure is not None:
        return failure
    if not torch.isfinite(result_zero).all():
        return CheckResult.of(False, "ch02.cosine.nan", language)
    if not allclose(result_zero, expected_zero):
        return CheckResult.of(False, "ch02.cosine.zero_scores", language, got=str(result_zero[-1].tolist()))
    big_q, big_k = _inputs((speed_size, 32), (speed_size, 32), seed=4)
    result_big, failure = call_without_package(fn, big_q, big_k, disabled=_COSINE, language=language)
    if failure is not None:
        return failure
    loop_time = _best_of(lambda: looped_cosine_scores(big_q, big_k), repeats=1)
    with package_disabled(*_COSINE, namespaces=reader_globals(fn)):
        your_time = _best_of(lambda: fn(big_q, big_k), repeats=5)
    if your_time * 10 > loop_time:
        return CheckResult.of(False, "ch02.cosine.slow", language, size=speed_size, your_ms=your_time * 1e3,
                              loop_ms=loop_time * 1e3)
    return CheckResult.of(True, "ch02.cosine.passed", language, speedup=loop_time / max(your_time, 1e-9),
                          size=speed_size)


# --------------------------------------------------------------------------------------------
# Exercise 5: why additive scoring is slower
# --------------------------------------------------------------------------------------------

ADDITIVE_OPTIONS: dict[str, str] = {
    "a": "It has more parameters (W_q, W_k and v) to multiply with.",
    "b": "It forms an (L, S, A) tensor: A numbers for every query-key pair, written to memory, passed through tanh "
         "and read back, where the dot product produces one number per pair from a single matrix product.",
    "c": "Its implementation loops over the query-key pairs in Python.",
    "d": "tanh is an expensive function; nothing else differs.",
}
"""The choices of the last exercise (why is additive scoring slower than the dot product?)."""

_ADDITIVE_RIGHT = "b"


def check_why_additive_is_slower(choice: str, *, language: str | None = None) -> CheckResult:
    """Check the answer to "why is additive scoring slower than the dot product?" (a, b, c or d).

    Args:
        choice: One of the keys of :data:`ADDITIVE_OPTIONS`.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, with why each wrong option is wrong.
    """
    letter = choice.strip().lower().strip("()") if isinstance(choice, str) else None
    if letter not in ADDITIVE_OPTIONS:
        return CheckResult.of(False, "ch02.additive.one_letter", language, letters=", ".join(sorted(ADDITIVE_OPTIONS)),
                              got=repr(choice))
    return CheckResult.of(letter == _ADDITIVE_RIGHT, f"ch02.additive.{letter}", language)


# --------------------------------------------------------------------------------------------
# Exercise 6: predict, before a run, the most weight cosine scores can give one slot
# --------------------------------------------------------------------------------------------


def check_cosine_bound(fn: Callable[[int], float], *, language: str | None = None) -> CheckResult:
    """Check ``fn(S) -> float``: the largest softmax weight that scores in ``[-1, 1]`` (cosines) can
    give one of ``S`` slots, ``e / (e + (S - 1) / e)`` (the match at +1, every other slot at -1).

    Tried at several S. The answer may not call
    :func:`helpers.experiments.score_learning.cosine_weight_bound`.

    Args:
        fn: The reader's function.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, naming the mistake (others at 0 instead of -1, S instead of S - 1, no bound).
    """
    e = math.e
    sizes = (24, 2, 100, 1)
    expected = {S: score_learning.cosine_weight_bound(S) for S in sizes}  # before the reference is switched off
    for S in sizes:
        result, failure = call_without_package(fn, S, disabled=_BOUND, language=language)
        if failure is not None:
            return failure
        if isinstance(result, Tensor) and result.numel() == 1:
            result = float(result)
        if not isinstance(result, (int, float)) or isinstance(result, bool):
            return CheckResult.of(False, "ch02.bound.not_number", language, type=type(result).__name__)
        result = float(result)
        if math.isclose(result, expected[S], rel_tol=1e-6):
            continue
        if S > 1 and math.isclose(result, e / (e + S - 1), rel_tol=1e-6):
            return CheckResult.of(False, "ch02.bound.perpendicular", language, S=S, others=S - 1, result=result)
        if math.isclose(result, e / (e + S / e), rel_tol=1e-6):
            return CheckResult.of(False, "ch02.bound.others", language, S=S)
        if S > 1 and math.isclose(result, 1.0):
            return CheckResult.of(False, "ch02.bound.all_weight", language)
        if S > 1 and math.isclose(result, 1 / S):
            return CheckResult.of(False, "ch02.bound.uniform", language, uniform=1 / S)
        return CheckResult.of(False, "ch02.bound.wrong", language, S=S, result=result, expected=expected[S])
    return CheckResult.of(True, "ch02.bound.passed", language, bound_24=expected[24], bound_100=expected[100])


# --------------------------------------------------------------------------------------------
# Exercise 7: design the run that separates the cosine's bound from its division by lengths
# --------------------------------------------------------------------------------------------

_ABLATION_MAX_STEPS = 600


def check_temperature_ablation(config: Any, *, seed: int = 0, target: float = 0.9,
                               language: str | None = None) -> CheckResult:
    """Check the reader's ablation: one :class:`~helpers.experiments.recall.RecallConfig` that differs
    from the chapter's plain-cosine run (``score_learning.score_config("cosine")``) only by a fixed
    factor on the scores, big enough that the bound no longer caps the weight under ``target``;
    then train it (seed ``seed``) and check that it learns (held-out accuracy at least ``target``).

    A run that learns shows that dividing by the lengths was not the problem: the bound was.

    Args:
        config: The reader's settings.
        seed: Seed of the check's training run.
        target: Held-out accuracy the run must reach.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        The verdict, which names what the design changes besides the factor, why the factor cannot
        tell, or what the run measured.
    """
    base = score_learning.score_config("cosine")
    if not isinstance(config, RecallConfig):
        return CheckResult.of(False, "ch02.ablation.not_config", language, type=type(config).__name__)
    changed = [f.name for f in fields(RecallConfig) if getattr(config, f.name) != getattr(base, f.name)]
    if config.score != "cosine":
        return CheckResult.of(False, "ch02.ablation.other_score", language, score=repr(config.score))
    if not changed:
        return CheckResult.of(False, "ch02.ablation.unchanged", language)
    if config.learned_scale:
        return CheckResult.of(False, "ch02.ablation.learned", language)
    if changed != ["scale"]:
        others = [name for name in changed if name != "scale"]
        return CheckResult.of(False, "ch02.ablation.other_fields", language, changed=", ".join(others))
    if config.steps > _ABLATION_MAX_STEPS:
        return CheckResult.of(False, "ch02.ablation.too_many_steps", language, max_steps=_ABLATION_MAX_STEPS)
    factor = float(config.scale)
    slots = 2 * config.num_pairs if config.slots == "tokens" else config.num_pairs
    best = math.exp(2 * factor) / (math.exp(2 * factor) + slots - 1)  # match at +factor, the others at -factor
    if best < target:
        return CheckResult.of(False, "ch02.ablation.bound_too_low", language, factor=factor, slots=slots, best=best,
                              target=target)
    run = train_recall(config, seed=seed, label="cosine, fixed factor")
    accuracy = run.final_test_accuracy
    if accuracy < target:
        return CheckResult.of(False, "ch02.ablation.did_not_learn", language, best=best, accuracy=accuracy,
                              steps=config.steps)
    return CheckResult.of(True, "ch02.ablation.passed", language, factor=factor, accuracy=accuracy,
                          steps=config.steps)
