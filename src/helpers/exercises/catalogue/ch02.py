"""The messages of :mod:`helpers.exercises.ch02`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

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
        "en": "for query {query} and key {key} the scores must have shape (B, H, L, S) = {expected}, "
              "got {got}. Multiply query (..., L, E) by key.transpose(-2, -1) (..., E, S).",
        "zh": "查询为 {query}、键为 {key} 时，分数的形状应为 (B, H, L, S) = {expected}，"
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
        "en": "the order is right (nearer key, higher score), but these are minus the distances, −‖q−k‖: the "
              "exercise asks for minus the squared distances, −‖q−k‖², as helpers.scores.neg_euclidean_scores "
              "returns them (and as its fast expansion ‖q‖² − 2q·k + ‖k‖² computes them): square, then negate.",
        "zh": "顺序对了（键越近，分数越高），但这是负的距离 −‖q−k‖：这道练习要的是负的平方距离 −‖q−k‖²，"
              "和 helpers.scores.neg_euclidean_scores 的返回值一样（它的快速展开式 ‖q‖² − 2q·k + ‖k‖² 算的也是它）："
              "先平方，再取负。"},
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
        "en": "right on ordinary vectors, but with a zero query vector and a zero key vector {failure}",
        "zh": "在普通向量上是对的，但遇到一个零查询向量和一个零键向量时，{failure}"},
    "ch02.cosine.nan": {
        "en": "a zero vector gives NaN (0/0): clamp each norm from below, norm.clamp_min(eps), as the loop does "
              "with max(norm, eps).",
        "zh": "零向量得到了 NaN（0/0）：请给每个范数设一个下限，norm.clamp_min(eps)，就像循环里用 "
              "max(norm, eps) 那样。"},
    "ch02.cosine.zero_scores": {
        "en": "query {query} and key {key} are zero vectors: every score in that row and that column must be 0 "
              "(the loop divides 0 by eps); got {got}.",
        "zh": "第 {query} 个查询和第 {key} 个键是零向量：那一行和那一列的每个分数都必须是 0"
              "（循环用 0 除以 eps）；得到的是 {got}。"},
    "ch02.cosine.big_wrong": {
        "en": "right on small inputs, but wrong on longer ones, L = {L}, S = {S}, E = {E} (largest error "
              "{error:.3g}): the function must not depend on the size of its inputs.",
        "zh": "在小输入上是对的，在更长的输入（L = {L}、S = {S}、E = {E}）上却错了（最大误差 {error:.3g}）："
              "函数的做法不能随输入的大小而变。"},
    "ch02.cosine.loops": {
        "en": "the values are right, but your function makes {small} calls for {small_l} queries and {small_s} "
              "keys and {big} calls for {big_l} and {big_s}: the number of calls grows with the number of "
              "vectors, so it still loops over them (pairs or rows). Compute all norms at once, then one matrix "
              "product: the same few calls at any size.",
        "zh": "数值对了，但你的函数对 {small_l} 个查询、{small_s} 个键调用了 {small} 次函数，对 {big_l} 个和 "
              "{big_s} 个调用了 {big} 次：调用次数随向量的个数增长，所以它仍在逐个循环（逐对或逐行）。"
              "先一次算出所有范数，再做一次矩阵乘法：无论多大，都只有那几次调用。"},
    "ch02.cosine.slow": {
        "en": "the values are right, but at L = {L}, S = {S} your function takes {your_ms:.2f} ms against "
              "{loop_ms:.2f} ms for the pair loop: is it still looping over pairs? Compute all norms at once, then "
              "one matrix product.",
        "zh": "数值对了，但在 L = {L}、S = {S} 时，你的函数耗时 {your_ms:.2f} ms，逐对循环耗时 {loop_ms:.2f} ms："
              "是不是还在逐对循环？先一次算出所有范数，再做一次矩阵乘法。"},
    "ch02.cosine.passed": {
        "en": "right, zero-safe, and {speedup:.0f}× faster than the pair loop at L = {L}, S = {S}.",
        "zh": "结果正确，遇到零向量也安全，而且在 L = {L}、S = {S} 时比逐对循环快 {speedup:.0f} 倍。"},
    # Exercise 5: why additive scoring is slower (the choices, then the feedback on each)
    "ch02.additive.option.a": {
        "en": "It has more parameters (W_q, W_k and v) to multiply with.",
        "zh": "它有更多的参数（W_q、W_k 和 v）要去相乘。"},
    "ch02.additive.option.b": {
        "en": "It forms an (L, S, A) tensor: A numbers for every query-key pair, written to memory, passed through "
              "tanh and read back, where the dot product produces one number per pair from a single matrix product.",
        "zh": "它要构造一个 (L, S, A) 张量：每个查询-键对 A 个数，写入内存、经过 tanh、再读回来；"
              "而点积用一次矩阵乘法为每一对只产生一个数。"},
    "ch02.additive.option.c": {
        "en": "Its implementation loops over the query-key pairs in Python.",
        "zh": "它的实现在 Python 里逐个循环查询-键对。"},
    "ch02.additive.option.d": {
        "en": "tanh is an expensive function; nothing else differs.",
        "zh": "tanh 是个昂贵的函数；除此之外没有任何不同。"},
    "ch02.additive.a": {
        "en": "its parameters, 2·E·A + A numbers, do not depend on L or S, yet its time grows like the dot "
              "product's, with L·S, only much steeper in constant. What grows with L·S is the (L, S, A) tensor.",
        "zh": "它的参数共 2·E·A + A 个数，与 L 和 S 无关，可它的耗时却和点积一样随 L·S 增长，只是常数大得多。"
              "随 L·S 增长的是那个 (L, S, A) 张量。"},
    "ch02.additive.b": {
        "en": "the dot product turns each pair into one number inside one matrix product; additive scoring builds "
              "A numbers per pair (L·S·A in all). Timed just now at L = S = {n}: the sum that writes that tensor "
              "takes {add:.0%} of the steps, tanh on every entry {tanh:.0%}, the product with v that reduces it "
              "{reduce:.0%}, the two small projections {proj:.1%}. Neither writing the tensor nor tanh is work "
              "a matrix-multiply kernel speeds up.",
        "zh": "点积在一次矩阵乘法里把每一对变成一个数；加性打分却为每一对构造 A 个数（共 L·S·A 个）。"
              "刚才在 L = S = {n} 上计时：写出这个张量的相加占各步总耗时的 {add:.0%}，对每个元素做 tanh 占 "
              "{tanh:.0%}，与 v 相乘把它归约掉占 {reduce:.0%}，两次小投影占 {proj:.1%}。"
              "写出张量和 tanh 都不是矩阵乘法内核能够加速的工作。"},
    "ch02.additive.c": {
        "en": "helpers.scores.additive_scores has no Python loop: it broadcasts (L, 1, A) + (1, S, A). The table "
              "shows the difference: the loop over pairs is slower still, and grows with L·S times Python's "
              "per-call overhead.",
        "zh": "helpers.scores.additive_scores 里没有 Python 循环：它做的是广播 (L, 1, A) + (1, S, A)。"
              "表格显示了区别：逐对循环还要更慢，它的耗时按 L·S 乘以 Python 每次调用的开销增长。"},
    "ch02.additive.d": {
        "en": "partly. Timed just now at L = S = {n}, tanh takes {tanh:.0%} of additive scoring's steps, but the "
              "sum that writes the (L, S, A) tensor takes {add:.0%}, and tanh runs L·S·A times only because of "
              "that tensor: the tensor is the root of both.",
        "zh": "只说对了一部分。刚才在 L = S = {n} 上计时：tanh 占加性打分各步总耗时的 {tanh:.0%}，"
              "可写出 (L, S, A) 张量的相加也占了 {add:.0%}；而 tanh 之所以要算 L·S·A 次，正是因为那个张量："
              "两者的根源都是它。"},
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
        "en": "e / (e + (S − 1)/e): {bound_24:.1%} for 24 slots, {bound_100:.1%} for 100. Now the run: the "
              "chapter's plain-cosine model (24 slots), trained by the checker, never gives a slot more than "
              "{measured:.1%} of its weight, and reaches {accuracy:.1%} held-out accuracy. The bound is the best "
              "case for one query, all other slots at −1 from it at once; this task's keys cannot be placed so for "
              "every query, and the best geometry a search finds gives the right slot {ceiling:.1%} on average. "
              "However well it learns, a plain cosine cannot focus: it needs a temperature.",
        "zh": "e / (e + (S − 1)/e)：24 个槽位时为 {bound_24:.1%}，100 个时为 {bound_100:.1%}。再看实际运行："
              "检查器训练的本章朴素余弦模型（24 个槽位）给任何一个槽位的权重都从未超过 {measured:.1%}，"
              "留出集准确率为 {accuracy:.1%}。这个上界是单个查询的最好情况：其他槽位同时与它的余弦都为 −1；"
              "这个任务的键无法对每个查询都这样摆放，搜索找到的最好几何排布平均只给正确的槽位 "
              "{ceiling:.1%} 的权重。无论学得多好，朴素的余弦都无法聚焦：它需要温度。"},
    # Exercise 7: the temperature ablation, designed
    "ch02.ablation.not_config": {
        "en": "give a RecallConfig (start from score_learning.score_config('cosine') and dataclasses.replace one "
              "field), got {type}",
        "zh": "请给出一个 RecallConfig（从 score_learning.score_config('cosine') 出发，用 dataclasses.replace "
              "改一个字段），收到的是 {type}"},
    "ch02.ablation.result_given": {
        "en": "this is a result, not a design: give the settings (a RecallConfig). The checker trains your run "
              "itself, next to the plain-cosine control with the same seed, and reports what it measured.",
        "zh": "这是一个结果，不是一个设计：请给出设置（一个 RecallConfig）。检查器会自己训练你的运行，"
              "并在旁边用同一个种子训练朴素余弦的对照组，再报告它测到的结果。"},
    "ch02.ablation.bad_factor": {
        "en": "the factor on the scores must be a finite number above 0, got scale={got}.",
        "zh": "乘在分数上的因子必须是一个大于 0 的有限数，收到的是 scale={got}。"},
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
    "ch02.ablation.bound_too_low": {
        "en": "with the factor {factor:g} the scores span [−{factor:g}, {factor:g}] and the best one slot of "
              "{slots} can get is {best:.1%}, not even more than {lifted:.0%}: the bound still binds, so the run "
              "cannot tell. Pick a factor that lifts it (exercise 6, with e^factor for e).",
        "zh": "因子为 {factor:g} 时，分数的范围是 [−{factor:g}, {factor:g}]，{slots} 个槽位中的一个最多只能得到 "
              "{best:.1%}，连 {lifted:.0%} 都不到：上界仍然卡着，这次运行分辨不出来。请选一个能抬高上界的因子"
              "（用练习 6 的公式，把 e 换成 e^factor）。"},
    "ch02.ablation.did_not_learn": {
        "en": "a clean design (only the factor changes, bound {best:.1%}), but the run reached {accuracy:.1%} "
              "held-out accuracy after {steps} steps (the plain-cosine control: {control:.1%}), under the target. "
              "A factor just above the bound leaves the softmax little room, and a very large one saturates it "
              "(its gradient vanishes, chapter 3): try another factor whose bound is above the target.",
        "zh": "设计是干净的（只改了因子，上界为 {best:.1%}），但这次运行 {steps} 步后的留出集准确率只有 "
              "{accuracy:.1%}（朴素余弦对照组：{control:.1%}），低于目标。因子刚刚越过上界时，softmax 没有多少余地；"
              "因子太大又会让它饱和（梯度消失，见第 3 章）：换一个上界仍高于目标的因子试试。"},
    "ch02.ablation.control_learned": {
        "en": "your run reached {accuracy:.1%}, but so did the plain-cosine control with seed {seed} "
              "({control:.1%}): with this seed the two cannot be told apart. Check with another seed.",
        "zh": "你的运行达到了 {accuracy:.1%}，可种子为 {seed} 的朴素余弦对照组也达到了（{control:.1%}）："
              "用这个种子分不出两者。请换一个种子再检查。"},
    "ch02.ablation.steps_learned": {
        "en": "your run reached {accuracy:.1%}, but so did the plain cosine at {factor:g} times the learning rate "
              "with seed {seed} ({step_control:.1%}): a factor on the scores also makes every step move them "
              "{factor:g} times as far, and with this seed bigger steps alone were enough. The run cannot name the "
              "bound; check with another seed.",
        "zh": "你的运行达到了 {accuracy:.1%}，可种子为 {seed}、学习率乘以 {factor:g} 的朴素余弦也达到了"
              "（{step_control:.1%}）：乘在分数上的因子也会让每一步把分数挪动 {factor:g} 倍远，而用这个种子，"
              "单是更大的步子就够了。这次运行无法确认是上界的问题；请换一个种子再检查。"},
    "ch02.ablation.passed": {
        "en": "cosine × {factor:g}: {accuracy:.1%} held-out accuracy after {steps} steps, where the plain cosine, "
              "trained by the checker with the same seed ({seed}), the same batches and the same steps, reached "
              "{control:.1%}. The division by the lengths is still in your run, so it was not what stopped the "
              "cosine. But your factor changed three things: the bound on one of {slots} slots ({bound_plain:.1%} → "
              "{best:.1%}), the spread of the scores at the start ({spread_plain:.2f} → {spread:.2f}) and how far "
              "each step moves them (× {factor:g}). A second control, the plain cosine at {factor:g} times the "
              "learning rate (steps as large as yours, the bound and start unchanged), reached {step_control:.1%}: "
              "the step size alone does not explain it. The chapter's section \"Is it the bound?\" separates the "
              "start too.",
        "zh": "余弦 × {factor:g}：{steps} 步后留出集准确率为 {accuracy:.1%}，而检查器用同一个种子（{seed}）、"
              "同样的批次和同样的步数训练的朴素余弦只达到 {control:.1%}。你的运行里仍然除以了长度，"
              "所以拦住余弦的不是这一步。不过你的因子同时改了三样东西：{slots} 个槽位中一个槽位的上界"
              "（{bound_plain:.1%} → {best:.1%}）、分数在起点的离散程度（{spread_plain:.2f} → {spread:.2f}），"
              "以及每一步把分数挪动多远（× {factor:g}）。第二个对照组是学习率乘以 {factor:g} 的朴素余弦"
              "（步子和你的一样大，上界和起点不变），它只达到 {step_control:.1%}：单凭步长解释不了。"
              "本章“是上界的问题吗？”一节把起点也分离了出来。"},
}

register(MESSAGES)
