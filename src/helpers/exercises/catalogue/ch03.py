"""The messages of :mod:`helpers.exercises.ch03`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    # What a number is for (the field {what} of the messages below).
    "ch03.what.variance": {"en": "the variance", "zh": "方差"},
    "ch03.what.row_variance": {"en": "the variance ({n} queries, {s} keys each, d_k={d_k})",
                               "zh": "方差（{n} 个查询、每个 {s} 个键、d_k={d_k}）"},
    "ch03.what.scale": {"en": "the scale ({layout})", "zh": "缩放因子（{layout}）"},
    "ch03.what.entropy": {"en": "the entropy", "zh": "熵"},
    "ch03.number.expected": {
        "en": "expected a number for {what}, got {type} ({value})",
        "zh": "{what}应当是一个数，得到的却是 {type}（{value}）"},
    "ch03.number.finite": {
        "en": "{what} must be a finite number, got {value}",
        "zh": "{what}必须是有限的数，得到的却是 {value}"},
    # Every prediction: recorded before the result is shown (helpers.exercises.predictions).
    "ch03.predict.missing": {
        "en": "first record your prediction, before the result is shown: predict({key!r}, value) with {what} in "
              "place of value, then run the checker again. Nothing is shown until then.",
        "zh": "请先记录你的预测，在结果揭晓之前：用 predict({key!r}, 值)，把“值”换成{what}，"
              "然后再运行检查器。在此之前不会显示任何结果。"},
    "ch03.predict.number": {"en": "your number", "zh": "你的数"},
    "ch03.predict.nats": {"en": "your number (in nats)", "zh": "你的数（单位：奈特）"},
    "ch03.predict.choice": {"en": "one of 'smaller', 'same', 'larger'", "zh": "'smaller'、'same'、'larger' 之一"},
    "ch03.predict.counts": {
        "en": "a dict {{'scaled': n, 'no scale': m}} (how many learning rates each head can use)",
        "zh": "一个字典 {{'scaled': n, 'no scale': m}}（每种头各能用几个学习率）"},
    # Exercise 1: predict Var(q . k).
    "ch03.variance.passed": {
        "en": "your prediction was right: Var(q·k) = d_k σ⁴ = {d_k} × {sigma}⁴ = {right:g} (measured on fresh "
              "samples: {measured:.3g}): each product q_i k_i has variance σ²·σ², and independent variances add.",
        "zh": "你的预测是对的：Var(q·k) = d_k σ⁴ = {d_k} × {sigma}⁴ = {right:g}（在新抽取的样本上测得 "
              "{measured:.3g}）：每个乘积 q_i k_i 的方差是 σ²·σ²，而独立项的方差可以相加。"},
    "ch03.variance.late": {
        "en": "Var(q·k) = d_k σ⁴ = {d_k} × {sigma}⁴ = {right:g} (measured: {measured:.3g}), but this value was "
              "recorded after the result had been shown: it is a reading, not a prediction.",
        "zh": "Var(q·k) = d_k σ⁴ = {d_k} × {sigma}⁴ = {right:g}（测得 {measured:.3g}），但这个值是在结果揭晓之后"
              "才记录的：它是读出来的，不是预测。"},
    "ch03.variance.wrong": {
        "en": "your prediction was wrong: {diagnosis} {shown}",
        "zh": "你的预测不对：{diagnosis}{shown}"},
    "ch03.variance.shown": {
        "en": "Now that you have predicted: the checker measured {measured:.3g} on 20,000 pairs, and d_k σ⁴ = "
              "{right:g}.",
        "zh": "既然你已经预测过了：检查器在 20,000 对样本上测得 {measured:.3g}，而 d_k σ⁴ = {right:g}。"},
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
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the scores are still divided by √d_model: each "
              "head's dot product runs over head_dim features, so divide by √head_dim.",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：分数仍然除以 √d_model。"
              "每个头的点积只涉及 head_dim 个特征，所以应除以 √head_dim。"},
    "ch03.fix.unscaled": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the scores are not scaled at all now: divide q·k by "
              "√head_dim.",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：现在分数完全没有缩放：应把 q·k 除以 √head_dim。"},
    "ch03.fix.no_sqrt": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: you divide by head_dim; divide by its square root.",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：你除以的是 head_dim；应除以它的平方根。"},
    "ch03.fix.multiplier": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: you multiply by √head_dim; divide by it.",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：你乘上了 √head_dim；应当除以它。"},
    "ch03.fix.num_heads": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: you divide by √num_heads; the dot product runs over "
              "head_dim = d_model / num_heads features: divide by √head_dim.",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：你除以的是 √num_heads；点积涉及的是 "
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
    "ch03.fix.also_right": {"en": "", "zh": ""},
    "ch03.fix.also_scale": {
        "en": " The scale is not 1/√head_dim either.",
        "zh": "缩放也还不是 1/√head_dim。"},
    "ch03.fix.softmax_axis": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the softmax runs over the queries (dim=-2); each "
              "query's weights over the keys must sum to 1: softmax over the last dimension (dim=-1).{also}",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：softmax 是在查询上做的（dim=-2）；每个查询对各个键的"
              "权重之和必须为 1：应在最后一维上做 softmax（dim=-1）。{also}"},
    "ch03.fix.split": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the heads are split with a bare view to "
              "(B, H, L, E), which mixes heads with positions: view to (B, L, H, E), then transpose(1, 2).{also}",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：头是直接 view 成 (B, H, L, E) 切分的，"
              "这把头和位置混在了一起：应先 view 成 (B, L, H, E)，再 transpose(1, 2)。{also}"},
    "ch03.fix.merge": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the heads are merged with a bare reshape of "
              "(B, H, L, E); move them back next to the features first: transpose(1, 2), then reshape(B, L, D).{also}",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：头是把 (B, H, L, E) 直接 reshape 合并的；"
              "应先把头移回特征旁边：transpose(1, 2)，再 reshape(B, L, D)。{also}"},
    "ch03.fix.no_o_proj": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the output projection is missing: return "
              "layer.o_proj(out).{also}",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：缺了输出投影：应返回 layer.o_proj(out)。{also}"},
    "ch03.fix.transposed_scores": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads}: the score matrix is transposed (keys against "
              "queries, k @ qᵀ): row i must hold query i's scores, q @ k.transpose(-2, -1).{also}",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时：分数矩阵转置了（键对查询，k @ qᵀ）："
              "第 i 行必须是查询 i 的分数，即 q @ k.transpose(-2, -1)。{also}"},
    "ch03.fix.differs": {
        "en": "with embed_dim={embed_dim}, num_heads={num_heads} the output differs from the layer's (max error "
              "{max_error:.3g}), and not by one of the usual bugs (the scale, the softmax's axis, the head split, the "
              "merge, the output projection): compare your function line by line with the buggy one.",
        "zh": "当 embed_dim={embed_dim}、num_heads={num_heads} 时，输出与这一层的输出不同（最大误差 {max_error:.3g}），"
              "而且不是常见的那几种 bug（缩放、softmax 的维度、头的切分、合并、输出投影）：请把你的函数和有 bug 的"
              "那个逐行比较。"},
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
        "en": "your prediction was right: about {right:.2f} nats for {setting} (log {num_keys} = {log_keys:.2f} "
              "would be uniform, 0 one-hot).",
        "zh": "你的预测是对的：在 {setting} 的条件下约为 {right:.2f} 奈特"
              "（均匀分布为 log {num_keys} = {log_keys:.2f}，独热为 0）。"},
    "ch03.entropy.late": {
        "en": "about {right:.2f} nats for {setting}, but your value was recorded after the result had been shown: "
              "it is a reading, not a prediction.",
        "zh": "在 {setting} 的条件下约为 {right:.2f} 奈特，但你的值是在结果揭晓之后才记录的：它是读出来的，不是预测。"},
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
        "en": "for logits of shape {logits_shape} the Jacobian must have shape {expected}, one (S, S) matrix per row, "
              "got {shape}. torch.diag_embed(p) and p.unsqueeze(-1) * p.unsqueeze(-2) keep the batch dimensions.",
        "zh": "logits 的形状为 {logits_shape} 时，雅可比矩阵的形状必须是 {expected}，每一行一个 (S, S) 矩阵，"
              "得到的却是 {shape}。torch.diag_embed(p) 和 p.unsqueeze(-1) * p.unsqueeze(-2) 都会保留批的各维。"},
    "ch03.jacobian.overflow": {
        "en": "your Jacobian has NaN or inf entries: one row of the logits is saturated (logits of ±1000), and "
              "exp(1000) overflows. Compute p with torch.softmax (or subtract each row's max before exp).",
        "zh": "你的雅可比矩阵里有 NaN 或 inf：logits 中有一行是饱和的（logits 为 ±1000），exp(1000) 会溢出。"
              "请用 torch.softmax 计算 p（或在 exp 之前先减去每一行的最大值）。"},
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
    # Exercise 2: measure the spread the softmax sees (after a prediction).
    "ch03.row.bad_choice": {
        "en": "your prediction is {value}: record one of {choices} (the spread within a row compared with 3 d_k "
              "across pairs), e.g. predict('ch03.row_spread', 'same')",
        "zh": "你的预测是 {value}：请记录 {choices} 之一（行内的离散程度与跨样本对的 3 d_k 相比），"
              "例如 predict('ch03.row_spread', 'same')"},
    "ch03.row.across_pairs": {
        "en": "for d_k = {d_k}: {value:.4g} is the variance across all (query, key) pairs, every score of the batch "
              "pooled. The softmax sees one query against its own keys: take the variance over the keys of each row "
              "(dim=-1), then average over the queries.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是所有（查询, 键）对之间的方差，把整批的分数混在了一起。softmax 看到的是"
              "一个查询对它自己的那些键：在每一行的键上求方差（dim=-1），再对所有查询取平均。"},
    "ch03.row.over_queries": {
        "en": "for d_k = {d_k}: {value:.4g} is the variance over the queries (dim=0), one key slot at a time; a "
              "softmax row is one query against its keys: take the variance over the keys (dim=-1).",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是在查询之间（dim=0）求的方差，每次一个键的位置；softmax 的一行是一个"
              "查询对它的那些键：应在键上求方差（dim=-1）。"},
    "ch03.row.all_keys": {
        "en": "for d_k = {d_k}: {value:.4g} scores each query against every key of the batch; query i has its own "
              "keys, keys[i] (shape (S, E)): score it against those.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 让每个查询对整批的所有键打分；查询 i 有它自己的键 keys[i]"
              "（形状 (S, E)）：只对这些键打分。"},
    "ch03.row.zero_mean": {
        "en": "for d_k = {d_k}: {value:.4g} is what the entries give once their mean 1 is removed; the softmax sees "
              "the vectors as they are, N(1, 1).",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是去掉分量的均值 1 之后得到的；"
              "softmax 看到的是向量本来的样子，N(1, 1)。"},
    "ch03.row.second_moment": {
        "en": "for d_k = {d_k}: {value:.4g} is the mean of the squared scores, a second moment: subtract the row's "
              "mean (use .var(dim=-1), not .pow(2).mean()).",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是分数平方的均值，即二阶矩：要减去这一行的均值"
              "（用 .var(dim=-1)，而不是 .pow(2).mean()）。"},
    "ch03.row.std": {
        "en": "for d_k = {d_k}: {value:.4g} is a standard deviation; the question asks for the variance.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是标准差；题目问的是方差。"},
    "ch03.row.std_across": {
        "en": "for d_k = {d_k}: {value:.4g} is a standard deviation, and across all pairs.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是标准差，而且是跨所有样本对的。"},
    "ch03.row.formula": {
        "en": "for d_k = {d_k}: {value:.4g} is a formula of d_k, not a measurement: compute the scores of the "
              "vectors you are given and measure their spread.",
        "zh": "当 d_k = {d_k} 时：{value:.4g} 是 d_k 的公式，不是测量：请算出给你的向量的分数，再测量它们的离散程度。"},
    "ch03.row.off": {
        "en": "for {n} queries with {s} keys each (d_k = {d_k}) you returned {value:.4g}, which is not the mean "
              "within-row variance of these scores. Score each query against its own keys (keys[i] @ queries[i], "
              "or (queries.unsqueeze(1) * keys).sum(-1)), take .var() over the keys, and average over the queries.",
        "zh": "对 {n} 个查询、每个 {s} 个键（d_k = {d_k}），你返回的是 {value:.4g}，它不是这些分数行内方差的平均值。"
              "让每个查询对它自己的键打分（keys[i] @ queries[i]，或 (queries.unsqueeze(1) * keys).sum(-1)），"
              "在键上取 .var()，再对所有查询取平均。"},
    "ch03.row.predicted": {"en": "You predicted smaller: right.", "zh": "你预测的是更小：对了。"},
    "ch03.row.surprised": {
        "en": "You predicted {choice!r}: it is smaller.",
        "zh": "你预测的是 {choice!r}：实际上更小。"},
    "ch03.row.late": {
        "en": "(Your prediction was recorded after the result had been shown: it does not count as a prediction.)",
        "zh": "（你的预测是在结果揭晓之后才记录的：不算预测。）"},
    "ch03.row.passed": {
        "en": "{judged} Within a row the variance is |q|² ≈ 2 d_k (you measured {measured:.4g} at d_k = {d_k}, "
              "2 d_k = {twice}, against 3 d_k = {thrice} across pairs): the row's common shift q·E[k] is the missing "
              "d_k, and the softmax ignores it.",
        "zh": "{judged}行内的方差是 |q|² ≈ 2 d_k（你在 d_k = {d_k} 时测得 {measured:.4g}，2 d_k = {twice}，"
              "而跨样本对是 3 d_k = {thrice}）：少掉的那个 d_k 是这一行共同的平移 q·E[k]，softmax 不理会它。"},
    # Exercise 4: predict the usable learning rates, then read them off the runs.
    "ch03.lr.made_up_sweep": {"en": "a made-up sweep (seed {seed})", "zh": "虚构的扫描（种子 {seed}）"},
    "ch03.lr.labs_sweep": {"en": "the lab's sweep", "zh": "实验中的扫描"},
    "ch03.lr.no_prediction": {
        "en": "your prediction must be a dict {{'scaled': n, 'no scale': m}} with how many of the {count} learning "
              "rates each head can use (0 to {count}); got {prediction}",
        "zh": "你的预测必须是一个字典 {{'scaled': n, 'no scale': m}}，表示这 {count} 个学习率中"
              "每种头各有几个可用（0 到 {count}）；得到的是 {prediction}"},
    "ch03.lr.not_a_sweep": {
        "en": "the sweep must be the LearningRateSweep that ch03.run_learning_rate_sweep(...) returned, got a {type}",
        "zh": "sweep 必须是 ch03.run_learning_rate_sweep(...) 返回的 LearningRateSweep，得到的却是 {type}"},
    "ch03.lr.too_few_lrs": {
        "en": "the sweep has {count} learning rates: a range needs at least {minimum}, for both heads ('scaled' and "
              "'no scale')",
        "zh": "这次扫描只有 {count} 个学习率：一个范围至少需要 {minimum} 个，"
              "而且两种头（'scaled' 和 'no scale'）都要有"},
    "ch03.lr.too_few_seeds": {
        "en": "the sweep has {count} distinct seeds for {label!r} at lr {lr:g}: one seed proves nothing, run at least "
              "{minimum} different seeds at every learning rate",
        "zh": "这次扫描在 lr {lr:g} 处为 {label!r} 只用了 {count} 个不同的种子：一个种子什么也证明不了，"
              "每个学习率至少要跑 {minimum} 个不同的种子"},
    "ch03.lr.unfair": {
        "en": "the runs of {label!r} are not a fair control: at every learning rate both heads need the same seeds, "
              "steps, head size and target, each run trained at its learning rate, with its own scale",
        "zh": "{label!r} 的运行不是公平的对照：在每个学习率下，两种头都要用相同的种子、步数、头维度和目标，"
              "每次运行都以它自己的学习率和它自己的缩放来训练"},
    "ch03.lr.not_from_run": {
        "en": "this sweep is not one that ch03.run_learning_rate_sweep(...) returned in this session, or it was "
              "changed since: run the sweep with it and pass what it returned, as it returned it",
        "zh": "这个扫描不是本次会话中 ch03.run_learning_rate_sweep(...) 返回的，或者之后被改动过："
              "请用它来运行扫描，并原样传入它返回的结果"},
    "ch03.lr.not_trained": {
        "en": "the sweep's run {label!r}, lr {lr:g}, seed {seed} is not what training with its settings gives (the "
              "checker trained it again): pass the sweep that ch03.run_learning_rate_sweep(...) returned, as it "
              "returned it",
        "zh": "扫描中的运行 {label!r}、lr {lr:g}、seed {seed} 与按它的设置训练得到的结果不同（检查器重新训练了它）："
              "请原样传入 ch03.run_learning_rate_sweep(...) 返回的扫描"},
    "ch03.lr.any_seed": {
        "en": "on {name} ({label}) you keep a learning rate at which one seed reaches the threshold while another "
              "fails: usable means every seed reaches it (min, not max, of run.final_accuracy over the seeds)",
        "zh": "在{name}上（{label}），你保留了一个只有某个种子达到阈值、另一个种子却没达到的学习率："
              "可用意味着每个种子都达到阈值（对各种子的 run.final_accuracy 取 min，而不是 max）"},
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
        "en": "usable with the scale: {scaled}; without: {unscaled} (of {lrs}); your prediction was wrong: you "
              "predicted {predicted_scaled} and {predicted_unscaled}; the runs say {measured_scaled} and "
              "{measured_unscaled}.",
        "zh": "有缩放时可用：{scaled}；没有缩放时可用：{unscaled}（候选为 {lrs}）；你的预测不对：你预测的是 "
              "{predicted_scaled} 个和 {predicted_unscaled} 个，"
              "运行结果是 {measured_scaled} 个和 {measured_unscaled} 个。"},
    "ch03.lr.passed_late": {
        "en": "usable with the scale: {scaled}; without: {unscaled} (of {lrs}). Your prediction ({predicted_scaled} "
              "and {predicted_unscaled}) was recorded after the runs had been shown: it does not count as a "
              "prediction.",
        "zh": "有缩放时可用：{scaled}；没有缩放时可用：{unscaled}（候选为 {lrs}）。你的预测（{predicted_scaled} 个和 "
              "{predicted_unscaled} 个）是在运行结果显示之后才记录的：不算预测。"},
}

register(MESSAGES)
