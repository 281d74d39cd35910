"""The messages of :mod:`helpers.exercises.ch06_training`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    # exercise 1: entropy per head
    "ch06_training.what.entropy": {"en": "entropy per head, shape (B, H)", "zh": "每个头的熵（形状 (B, H)）"},
    "ch06_training.entropy.per_query": {
        "en": "shape {shape} is one entropy per query (B, H, L): average over the queries (dim=-1 of the row "
              "entropies) to get one number per head",
        "zh": "形状 {shape} 是每个查询一个熵 (B, H, L)：还要对查询取平均（对各行的熵沿 dim=-1 求均值），"
              "每个头才得到一个数"},
    "ch06_training.entropy.shape": {
        "en": "expected shape (B, H) = {expected}, got {got}",
        "zh": "形状应为 (B, H) = {expected}，得到的是 {got}"},
    "ch06_training.entropy.nan": {
        "en": "NaN in your result: a padded key has weight 0, and 0 * log(0) = 0 * -inf = nan in floating point. The "
              "entropy's convention is 0 log 0 = 0: use torch.special.xlogy(p, p), or keep only the entries where "
              "p > 0",
        "zh": "结果里有 NaN：填充的键权重为 0，而在浮点运算中 0 * log(0) = 0 * -inf = nan。熵的约定是 0 log 0 = 0："
              "请用 torch.special.xlogy(p, p)，或者只保留 p > 0 的项"},
    "ch06_training.entropy.nan_hard": {
        "en": "NaN in your result on scores of +-1000: there a real key's weight is exactly 0 too (exp(-1000) "
              "underflows), not only a padded one's, and 0 * log(0) = 0 * -inf = nan in floating point. The entropy's "
              "convention is 0 log 0 = 0 for every entry: use torch.special.xlogy(p, p), or keep only the entries "
              "where p > 0 (not only the real keys)",
        "zh": "在 +-1000 的分数上结果出现了 NaN：这时不只是填充键，真实键的权重也会恰好为 0（exp(-1000) 下溢），"
              "而在浮点运算中 0 * log(0) = 0 * -inf = nan。熵的约定对每一项都是 0 log 0 = 0："
              "请用 torch.special.xlogy(p, p)，或者只保留 p > 0 的项（而不只是真实键）"},
    "ch06_training.entropy.hard": {
        "en": "right on moderate scores, wrong on scores of +-1000 with a sequence of one real key (max |diff| "
              "{diff:.3g} nats): compute the softmax in float32 with the padded scores set to -inf (not a large "
              "negative number, which +-1000 scores outweigh), and give 0 log 0 the value 0",
        "zh": "在普通大小的分数上是对的，但在 +-1000 的分数、且有一个序列只有一个真实键时错了（最大 |差值| 为 "
              "{diff:.3g} 奈特）：请用 float32 计算 softmax，把填充位置的分数设为 -inf（而不是一个很大的负数，"
              "+-1000 的分数会盖过它），并令 0 log 0 = 0"},
    "ch06_training.entropy.float16": {
        "en": "right in float32, off for scores in float16 (max |diff| {diff:.3g} nats): a softmax and a log in half "
              "precision lose about three digits. Compute in float32 whatever the input's dtype (scores.float())",
        "zh": "在 float32 下是对的，但分数为 float16 时有偏差（最大 |差值| 为 {diff:.3g} 奈特）：半精度下的 softmax "
              "和对数会丢掉大约三位有效数字。无论输入是什么类型，都请用 float32 计算（scores.float()）"},
    "ch06_training.entropy.no_mask": {
        "en": "the padding mask is missing: the softmax gave weight to the padded keys, so each padded key counted as "
              "a possible target and the entropy came out too high. Set the padded keys' scores to -inf before the "
              "softmax",
        "zh": "缺了填充掩码：softmax 给填充的键也分了权重，每个填充的键都被当成一个可能的注意目标，熵因此偏高。"
              "请在 softmax 之前把填充键的分数设为 -inf"},
    "ch06_training.entropy.bits": {
        "en": "these are bits (log base 2), not nats: the package and the chapter use the natural log, so a uniform "
              "row over n keys has entropy ln n. Use torch.log",
        "zh": "这是比特（以 2 为底的对数），不是奈特：本包和本章都用自然对数，在 n 个键上均匀分布的一行，熵为 ln n。"
              "请用 torch.log"},
    "ch06_training.entropy.sign": {
        "en": "the sign is wrong: H(p) = -sum p log p, which is >= 0 (log p <= 0)",
        "zh": "符号反了：H(p) = -sum p log p，它 >= 0（因为 log p <= 0）"},
    "ch06_training.entropy.after_softmax": {
        "en": "you zeroed the padded keys' weights after the softmax: the real keys' weights no longer sum to 1, so "
              "this is not a distribution. Mask the scores with -inf before the softmax",
        "zh": "你在 softmax 之后才把填充键的权重置零：真实键的权重之和不再是 1，这就不是一个概率分布了。"
              "请在 softmax 之前用 -inf 屏蔽分数"},
    "ch06_training.entropy.inverted": {
        "en": "the mask is inverted: key_mask is True for a real token (the book's and PyTorch's bool-mask "
              "convention: True = may attend), so mask where it is False",
        "zh": "掩码反了：key_mask 对真实词元为 True（本书和 PyTorch 的布尔掩码约定：True 表示可以注意），"
              "所以应屏蔽它为 False 的位置"},
    "ch06_training.entropy.normalised": {
        "en": "you normalised the entropy (divided by log of the number of keys); the exercise asks for the entropy "
              "itself, in nats",
        "zh": "你把熵归一化了（除以键数的对数）；这道练习要的是熵本身，单位为奈特"},
    "ch06_training.entropy.summed": {
        "en": "you summed the row entropies over the queries; average them (mean over dim=-1)",
        "zh": "你把各行的熵沿查询求了和；应取平均（沿 dim=-1 求均值）"},
    "ch06_training.entropy.mean_over_keys": {
        "en": "you averaged -p log p over the keys; the entropy is the *sum* over the keys (dim=-1), then the mean "
              "over the queries",
        "zh": "你对 -p log p 沿键取了平均；熵是沿键（dim=-1）*求和*，然后再对查询取平均"},
    "ch06_training.entropy.differs": {
        "en": "the entropies differ from the reference (max |diff| {diff:.3g} nats): softmax over the real keys, then "
              "-sum p ln p over the keys, then the mean over the queries",
        "zh": "熵与参考值不同（最大 |差值| 为 {diff:.3g} 奈特）：先在真实键上做 softmax，再沿键求 -sum p ln p，"
              "最后对查询取平均"},
    "ch06_training.entropy.passed": {
        "en": "your entropies match helpers.diagnostics.attention_entropy of the masked softmax on fresh inputs, in "
              "nats, with padded keys excluded, on scores of +-1000 (0 log 0 = 0) and on scores in float16.",
        "zh": "在新抽取的输入上，你的熵与 helpers.diagnostics.attention_entropy 对掩码后的 softmax 算出的结果一致："
              "单位为奈特，不计填充的键；在 +-1000 的分数上（0 log 0 = 0）和 float16 的分数上也对。"},
    # exercise 3: attention rollout
    "ch06_training.what.rollout": {"en": "rollout, shape (B, L, L)", "zh": "注意力展开（形状 (B, L, L)）"},
    "ch06_training.rollout.per_head": {
        "en": "shape {shape} keeps one map per head (B, H, L, L): fuse the heads first, the mean over dim=1 of each "
              "layer's weights, then roll out",
        "zh": "形状 {shape} 为每个头保留了一张图 (B, H, L, L)：请先融合各头（对每层权重沿 dim=1 取平均），再做展开"},
    "ch06_training.rollout.shape": {
        "en": "expected shape (B, L, L) = {expected}, got {got}",
        "zh": "形状应为 (B, L, L) = {expected}，得到的是 {got}"},
    "ch06_training.rollout.nan": {
        "en": "NaN or inf in your result: one query row of the input is fully masked (all zeros in every head), and "
              "dividing that row by its sum divides by 0. With the residual identity added first, 0.5 A + 0.5 I, the "
              "row sums to 0.5, never 0: add the identity, then renormalise",
        "zh": "结果里有 NaN 或 inf：输入中有一个查询行被完全屏蔽（每个头里都全为 0），把这一行除以它的和就是除以 0。"
              "先加上残差的单位矩阵，即 0.5 A + 0.5 I，这一行的和是 0.5，永远不会是 0：先加单位矩阵，再归一化"},
    "ch06_training.rollout.no_residual": {
        "en": "you multiplied the attention maps alone: the residual connection is missing. Each layer's output is "
              "its input plus the attention's output, so a token also carries itself forward: use 0.5 A + 0.5 I per "
              "layer (then renormalise the rows) before multiplying",
        "zh": "你只是把各层的注意力图相乘：缺了残差连接。每层的输出是它的输入加上注意力的输出，所以每个词元也把"
              "它自己往前传：每层先用 0.5 A + 0.5 I（再把各行归一化），然后才相乘"},
    "ch06_training.rollout.not_renormalised": {
        "en": "the rows are not renormalised: where a query row is fully masked (all zeros), 0.5 A + 0.5 I sums "
              "to 0.5, so that token's share is halved at every layer it passes. "
              "Divide each row of 0.5 A + 0.5 I by its sum",
        "zh": "各行没有重新归一化：某个查询行被完全屏蔽（全为 0）时，0.5 A + 0.5 I 这一行的和是 0.5，"
              "这个词元的份额每经过一层就减半。请把 0.5 A + 0.5 I 的每一行除以它的和"},
    "ch06_training.rollout.full_identity": {
        "en": "you added the identity, A + I, without halving it or renormalising: every row then sums to 2 (1 for a "
              "fully masked one), and the product grows with depth. Use 0.5 A + 0.5 I, each row divided by its sum",
        "zh": "你加了单位矩阵 A + I，却既没有减半也没有归一化：每一行的和都是 2（完全屏蔽的行是 1），"
              "乘积会随深度增长。请用 0.5 A + 0.5 I，并把每一行除以它的和"},
    "ch06_training.rollout.wrong_order": {
        "en": "the layers are multiplied in the wrong order: R = A'_1 A'_2 ... A'_N. The first layer acts first, so "
              "it is innermost, on the right: R = A'_N ... A'_2 A'_1 (each new layer "
              "multiplies from the left: R = A' @ R)",
        "zh": "各层相乘的顺序反了：你算的是 R = A'_1 A'_2 ... A'_N。第一层最先作用，所以它在最里面，即最右边："
              "R = A'_N ... A'_2 A'_1（每加一层就从左边乘上：R = A' @ R）"},
    "ch06_training.rollout.last_only": {
        "en": "this is the last layer's map alone (with the residual): rollout multiplies through every layer, "
              "R = A'_N ... A'_1",
        "zh": "这只是最后一层的图（加了残差）：展开要把每一层都乘进来，R = A'_N ... A'_1"},
    "ch06_training.rollout.first_only": {
        "en": "this is the first layer's map alone (with the residual): rollout multiplies through every layer, "
              "R = A'_N ... A'_1",
        "zh": "这只是第一层的图（加了残差）：展开要把每一层都乘进来，R = A'_N ... A'_1"},
    "ch06_training.rollout.max_fusion": {
        "en": "you fused the heads with the maximum: the exercise (and the package's default) fuses them with the "
              "mean over dim=1, which keeps each row a distribution",
        "zh": "你用最大值融合了各头：这道练习（也是本包的默认做法）用沿 dim=1 的平均来融合，这样每一行仍是一个分布"},
    "ch06_training.rollout.transposed": {
        "en": "your result is the transpose of the rollout: row i must be query i's distribution over the input "
              "tokens (each row sums to 1), not column i",
        "zh": "你的结果是展开的转置：第 i 行应是查询 i 在输入词元上的分布（每一行的和为 1），而不是第 i 列"},
    "ch06_training.rollout.differs": {
        "en": "your rollout differs from the reference (max |diff| {diff:.3g}): per layer the mean over heads, "
              "0.5 A + 0.5 I with each row divided by its sum, then R = A'_N ... A'_1",
        "zh": "你的展开与参考值不同（最大 |差值| 为 {diff:.3g}）：每层先对各头取平均，再算 0.5 A + 0.5 I 并把每一行"
              "除以它的和，最后 R = A'_N ... A'_1"},
    "ch06_training.rollout.passed": {
        "en": "your rollout matches helpers.diagnostics.attention_rollout on fresh weights (2 to 4 layers, a fully "
              "masked query row included): heads averaged, residual mixed in, rows renormalised, first layer "
              "innermost.",
        "zh": "在新抽取的权重上（2 到 4 层，含一个完全屏蔽的查询行），你的展开与 helpers.diagnostics.attention_rollout "
              "一致：各头取平均、混入残差、各行重新归一化、第一层在最里面。"},
    # exercise 2: the broken heads
    "ch06_training.heads.not_a_run": {
        "en": "pass the run from train_broken_heads as the second argument, got {type}",
        "zh": "第二个参数应是 train_broken_heads 返回的运行结果，得到的是 {type}"},
    "ch06_training.heads.form": {
        "en": "return (collapsed, dead), each a (layer, head) pair with layer in 0..{last_layer} and head in "
              "0..{last_head}; got {got}",
        "zh": "应返回 (collapsed, dead)，两者都是 (layer, head) 对，layer 取 0..{last_layer}，head 取 "
              "0..{last_head}；得到的是 {got}"},
    "ch06_training.heads.lab_run": {"en": "(the lab's run, seed {seed})", "zh": "（本实验的运行，种子 {seed}）"},
    "ch06_training.heads.fresh_run": {
        "en": "(a fresh run, seed {seed}, its broken heads drawn at random by the checker)",
        "zh": "（一次新的运行，种子 {seed}，坏掉的头由检查器随机抽取）"},
    "ch06_training.heads.private": {
        "en": "your function reads {name}, which the run it gets does not have: which heads are broken is stored "
              "nowhere, and the checker hands your function a fresh run whose broken heads it drew at random. Compute "
              "them from the monitor's record, run.head_entropy or run.entropy_table()",
        "zh": "你的函数读取了 {name}，而它拿到的运行里没有这个属性：哪些头坏了没有存放在任何地方，检查器交给你的函数"
              "的是一次新的运行，坏掉的头是它随机抽取的。请从监视器的记录 run.head_entropy 或 run.entropy_table() "
              "算出它们"},
    "ch06_training.heads.no_model": {
        "en": "your function reads the run's model ({name}), but run.model is None in the runs the checker hands it: "
              "this exercise reads the monitor's record, run.head_entropy or run.entropy_table(), not the weights",
        "zh": "你的函数读取了运行的模型（{name}），但检查器交给它的运行里 run.model 是 None：这道练习读的是监视器的"
              "记录 run.head_entropy 或 run.entropy_table()，而不是权重"},
    "ch06_training.heads.history": {
        "en": "{start:.2f} before training, {end:.2f} at the end",
        "zh": "训练前 {start:.2f}，结束时 {end:.2f}"},
    "ch06_training.heads.swapped": {
        "en": "{run} you swapped them: the collapsed head is the one with entropy near 0 (one-hot attention), "
              "the dead one has entropy 1 (uniform attention)",
        "zh": "{run}你把两者弄反了：坍缩的头熵接近 0（独热的注意力），死掉的头熵为 1（均匀的注意力）"},
    "ch06_training.heads.dead_not_collapsed": {
        "en": "{run} head {head} is uniform (entropy {history}): that is the dead one, not the collapsed one",
        "zh": "{run}头 {head} 是均匀的（熵：{history}）：这是死掉的头，不是坍缩的头"},
    "ch06_training.heads.specialised": {
        "en": "{run} head {head} learnt the task ({history}): it became sharp *as the loss fell*, which is a "
              "head specialising (here: looking two places back), not a collapse. A low entropy at the end is not a "
              "failure; the collapsed head was one-hot before anything was learnt: look at the first probe",
        "zh": "{run}头 {head} 学会了任务（{history}）：它是*随着损失下降*才变尖锐的，这是头在分工"
              "（这里是回看两个位置），不是坍缩。结束时熵低并不是故障；坍缩的头在学到任何东西之前就已经是独热的："
              "请看第一次探测"},
    "ch06_training.heads.not_collapsed": {
        "en": "{run} head {head} is not collapsed (entropy {history}): the collapsed head's entropy is near 0 "
              "from the first probe on",
        "zh": "{run}头 {head} 没有坍缩（熵：{history}）：坍缩的头从第一次探测起熵就接近 0"},
    "ch06_training.heads.collapsed_not_dead": {
        "en": "{run} head {head} is one-hot (entropy {history}): that is the collapsed one, not the dead one",
        "zh": "{run}头 {head} 是独热的（熵：{history}）：这是坍缩的头，不是死掉的头"},
    "ch06_training.heads.not_dead": {
        "en": "{run} head {head} is not dead: its entropy changed during training ({history}). The dead "
              "head's entropy is 1.00 at every probe: uniform attention, its queries carry nothing, and it never moves",
        "zh": "{run}头 {head} 没有死：它的熵在训练中变了（{history}）。死掉的头每次探测的熵都是 1.00："
              "注意力是均匀的，它的查询不携带任何信息，也从不变化"},
    "ch06_training.heads.passed": {
        "en": "in seed {seed} head {collapsed} is collapsed (normalised entropy {collapsed_start:.2f} before training: "
              "one-hot before anything was learnt) and head {dead} is dead (entropy {dead_min:.2f} at every probe: "
              "uniform attention); found in a fresh run too (seed {other_seed}, its broken heads drawn at random).",
        "zh": "种子 {seed} 中，头 {collapsed} 坍缩了（训练前的归一化熵为 {collapsed_start:.2f}：还没学到任何东西就已是"
              "独热的），头 {dead} 死了（每次探测的熵都是 {dead_min:.2f}：注意力是均匀的）；在种子 {other_seed} "
              "中也都找对了（那是一次新的运行，坏掉的头是随机抽取的）。"},
    # exercise 4: the LayerNorm bug hunt
    "ch06_training.what.block": {"en": "block output, shape (B, L, D)", "zh": "块的输出（形状 (B, L, D)）"},
    "ch06_training.pre.shape": {
        "en": "expected shape (B, L, D) = {expected}, got {got}",
        "zh": "形状应为 (B, L, D) = {expected}，得到的是 {got}"},
    "ch06_training.pre.passed": {
        "en": "x + Attn(LN(x)), then x + FFN(LN(x)): the residual stream is never normalised, so the block keeps an "
              "identity path from its output to its input.",
        "zh": "先 x + Attn(LN(x))，再 x + FFN(LN(x))：残差流本身从不归一化，"
              "所以块保留了一条从输出通回输入的恒等路径。"},
    "ch06_training.pre.swapped": {
        "en": "the two norms are swapped: self_attn_norm belongs to the attention sub-layer and ffn_norm to the FFN; "
              "each has its own gain and bias",
        "zh": "两个归一化层用反了：self_attn_norm 属于注意力子层，ffn_norm 属于前馈子层；它们各有各的增益和偏置"},
    "ch06_training.pre.mode_overwrite": {
        "en": "normalises the residual stream itself (x = norm(x), then x = x + F(x)): the skip connection carries "
              "LN(x) instead of x. The block forgets the scale of what reaches it (f(c·x) = f(x)), and the identity "
              "path from the output back to the input now passes through this LayerNorm, as in Post-LN: in a deep "
              "stack every early block's gradient goes through every later norm, the weakness Pre-LN exists to "
              "remove, while the code still looks like Pre-LN",
        "zh": "把残差流本身归一化了（先 x = norm(x)，再 x = x + F(x)）：跳跃连接传递的是 LN(x) 而不是 x。"
              "这样的块会丢掉输入的尺度（f(c·x) = f(x)），从输出回到输入的恒等路径也要穿过这个 LayerNorm，"
              "和 Post-LN 一样：在深层堆叠中，每个靠前的块的梯度都要经过后面的每一个归一化层。"
              "这正是 Pre-LN 要消除的弱点，代码看上去却仍像 Pre-LN"},
    "ch06_training.pre.mode_post": {
        "en": "normalises after the residual sum, LN(x + F(x)): that is Post-LN, the original Transformer's "
              "placement, not the Pre-LN the block claims",
        "zh": "在残差相加之后才归一化，即 LN(x + F(x))：这是 Post-LN，原始 Transformer 的放法，"
              "而不是这个块自称的 Pre-LN"},
    "ch06_training.pre.mode_none": {
        "en": "does not normalise the sub-layer's input at all (x + F(x))",
        "zh": "根本没有对自己的输入做归一化（x + F(x)）"},
    "ch06_training.pre.both": {
        "en": "both sub-layers (attention and feed-forward): each {what}. Pre-LN is x = x + F(LN(x))",
        "zh": "两个子层（注意力和前馈）都{what}。Pre-LN 是 x = x + F(LN(x))"},
    "ch06_training.pre.attention": {
        "en": "the attention sub-layer {attention}. Pre-LN is x = x + F(LN(x))",
        "zh": "注意力子层{attention}。Pre-LN 是 x = x + F(LN(x))"},
    "ch06_training.pre.ffn": {
        "en": "the feed-forward sub-layer {ffn}. Pre-LN is x = x + F(LN(x))",
        "zh": "前馈子层{ffn}。Pre-LN 是 x = x + F(LN(x))"},
    "ch06_training.pre.each": {
        "en": "the attention sub-layer {attention}; and the feed-forward sub-layer {ffn}. Pre-LN is x = x + F(LN(x))",
        "zh": "注意力子层{attention}；前馈子层则{ffn}。Pre-LN 是 x = x + F(LN(x))"},
    "ch06_training.pre.differs": {
        "en": "the output differs from a Pre-LN block with these weights (max |diff| {diff:.3g}): x = x + "
              "self_attn(self_attn_norm(x))[0], then x = x + ffn(ffn_norm(x))",
        "zh": "输出与用这些权重的 Pre-LN 块不同（最大 |差值| 为 {diff:.3g}）：应先 x = x + "
              "self_attn(self_attn_norm(x))[0]，再 x = x + ffn(ffn_norm(x))"},
    # exercise 5: rescue Post-LN
    "ch06_training.fix.no_prediction": {
        "en": "first record your prediction, before anything is run: ch06.predict(ch06.WARMUP_PREDICTION, True) or "
              "ch06.predict(ch06.WARMUP_PREDICTION, False) (the key is {key!r}); nothing is trained until then",
        "zh": "请先记录你的预测，在运行任何东西之前：ch06.predict(ch06.WARMUP_PREDICTION, True) 或 "
              "ch06.predict(ch06.WARMUP_PREDICTION, False)（键为 {key!r}）；在此之前什么都不会训练"},
    "ch06_training.fix.prediction_not_bool": {
        "en": "your recorded prediction is {got}: it must be True (a 30-step warm-up alone rescues both seeds) or "
              "False; record it again with ch06.predict(ch06.WARMUP_PREDICTION, ...)",
        "zh": "你记录的预测是 {got}：它必须是 True（只加 30 步预热就能救回两个种子）或 False；"
              "请用 ch06.predict(ch06.WARMUP_PREDICTION, ...) 重新记录"},
    "ch06_training.fix.result_not_settings": {
        "en": "you passed a run result: the checker trains your settings itself, so pass the settings, a dict such "
              "as {{**ch06.FAILING_SETTINGS, \"warmup_steps\": 10}}; a result made elsewhere is not evidence",
        "zh": "你传入的是一个运行结果：检查器会自己用你的设置训练，所以请传入设置本身，即一个字典，例如 "
              "{{**ch06.FAILING_SETTINGS, \"warmup_steps\": 10}}；在别处得到的结果不能作为证据"},
    "ch06_training.fix.not_settings": {
        "en": "pass your settings as a dict (e.g. {{**ch06.FAILING_SETTINGS, \"warmup_steps\": 10}}), got {type}",
        "zh": "请把你的设置作为字典传入（例如 {{**ch06.FAILING_SETTINGS, \"warmup_steps\": 10}}），得到的是 {type}"},
    "ch06_training.fix.unknown_setting": {
        "en": "unknown setting {names}: the settings are {known}",
        "zh": "未知的设置 {names}：可用的设置是 {known}"},
    "ch06_training.fix.bad_setting": {
        "en": "{name}={got} is outside what this exercise accepts: {allowed}",
        "zh": "{name}={got} 超出了这道练习接受的范围：{allowed}"},
    "ch06_training.fix.range_norm_first": {"en": "True or False", "zh": "True 或 False"},
    "ch06_training.fix.range_lr": {"en": "0.0001 to 0.1", "zh": "0.0001 到 0.1"},
    "ch06_training.fix.range_warmup_steps": {"en": "0 to steps - 1", "zh": "0 到 steps - 1"},
    "ch06_training.fix.range_clip_grad_norm": {"en": "None or above 0", "zh": "None 或大于 0 的数"},
    "ch06_training.fix.range_steps": {"en": "80 to 160", "zh": "80 到 160"},
    "ch06_training.fix.no_mechanism": {
        "en": "mechanism must be the letter of one of the stated mechanisms ({letters}), got {got}",
        "zh": "mechanism 必须是所列机制之一的字母（{letters}），得到的是 {got}"},
    "ch06_training.fix.one_seed": {
        "en": "a fix is checked over at least 2 distinct seeds (integers): one seed can train by luck",
        "zh": "修复至少要在 2 个不同的种子（整数）上检验：单个种子可能碰巧训练成功"},
    "ch06_training.fix.unchanged": {
        "en": "your settings are the failing run's (Post-LN, lr 0.03, no warm-up, no clipping, 80 steps): "
              "change one of them",
        "zh": "你的设置还是失败那次的（Post-LN、lr 0.03、无预热、无梯度裁剪、80 步）：请改其中一项"},
    "ch06_training.fix.seed_loss": {"en": "seed {seed}: {loss:.2f}", "zh": "种子 {seed}：{loss:.2f}"},
    "ch06_training.fix.no_hint": {"en": "", "zh": ""},
    "ch06_training.fix.hint_clip": {
        "en": " Clipping alone does not rescue it: Adam divides each step by the gradient's running size, so scaling "
              "the gradient down hardly changes the step (section 2).",
        "zh": "单靠梯度裁剪救不回来：Adam 会把每一步除以梯度的滑动平均大小，"
              "所以把梯度缩小几乎不改变步长（见第 2 节）。"},
    "ch06_training.fix.hint_warmup": {
        "en": " A warm-up of {steps} steps alone is not enough here (section 1's grid): the full learning rate is "
              "still too high for Post-LN once it is reached.",
        "zh": "这里只加 {steps} 步预热还不够（见第 1 节的网格）：一旦升到完整的学习率，它对 Post-LN 来说仍然太高。"},
    "ch06_training.fix.hint_pre_ln": {
        "en": " Pre-LN alone at lr 0.03 still fails in some seeds (section 1's grid): add a warm-up.",
        "zh": "在 lr 0.03 下只换成 Pre-LN，仍有种子失败（见第 1 节的网格）：再加上预热。"},
    "ch06_training.fix.hint_steps": {
        "en": " More steps alone do not help: the failing run is not slow, it is stuck at chance.",
        "zh": "只增加步数没有用：失败的那次运行不是学得慢，而是卡在了随机猜测的水平。"},
    "ch06_training.fix.hint_low_lr": {
        "en": " With lr {lr:g} the model moves too little to learn the task in the steps it has.",
        "zh": "lr 为 {lr:g} 时，模型每步移动得太少，在给定的步数内学不会这个任务。"},
    "ch06_training.fix.hint_high_lr": {
        "en": " A higher learning rate makes it worse, not better.",
        "zh": "提高学习率只会更糟，不会更好。"},
    "ch06_training.fix.still_failing": {
        "en": "with {changes}, {failed} of {n} seeds still fail (final loss {losses}; failing means above "
              "{threshold:.2f}, 90 % of chance).{hint}",
        "zh": "改成 {changes} 后，{n} 个种子中仍有 {failed} 个失败（最终损失：{losses}；高于 {threshold:.2f}，"
              "即随机猜测水平的 90%，就算失败）。{hint}"},
    "ch06_training.fix.wrong_b": {
        "en": "your run trains ({losses}), but not for the reason you chose (b): clipping caps the gradient's norm, "
              "yet AdamW divides each step by the gradient's running size, so a smaller gradient hardly makes a "
              "smaller step (section 2 measures it). Which change of yours made it train?",
        "zh": "你的运行训练成功了（{losses}），但原因不是你选的 (b)：梯度裁剪限制了梯度的范数，可 AdamW 会把每一步"
              "除以梯度的滑动平均大小，所以梯度变小几乎不会让步长变小（第 2 节测量了这一点）。"
              "你的哪处改动让它训练成功了？"},
    "ch06_training.fix.wrong_e": {
        "en": "your run trains ({losses}), but not for the reason you chose (e): the failing run is not learning "
              "slowly, it is stuck at chance from the start, and more steps at the same settings stay stuck. Which "
              "change of yours made it train?",
        "zh": "你的运行训练成功了（{losses}），但原因不是你选的 (e)：失败的那次运行不是学得慢，而是从一开始就卡在"
              "随机猜测的水平，用同样的设置多训练几步仍会卡住。你的哪处改动让它训练成功了？"},
    "ch06_training.fix.mechanism_unchanged": {
        "en": "the mechanism you chose ({choice}) is about {setting}, which your fix does not change ({changes}): "
              "choose the mechanism of a change you made",
        "zh": "你选的机制（{choice}）说的是 {setting}，而你的修复并没有改它（{changes}）："
              "请选你做过的改动所对应的机制"},
    "ch06_training.fix.alone_part": {
        "en": "{setting} alone trains {trained} of {n} seeds",
        "zh": "只改 {setting}：{n} 个种子中有 {trained} 个训练成功"},
    "ch06_training.fix.mechanism_not_alone": {
        "en": "you changed several things and credited {setting} ({choice}); measured one at a time: {parts}. "
              "Another change trains alone and yours does not: that is the one that did it",
        "zh": "你改了好几处，并把功劳归于 {setting}（{choice}）；逐一单独测量的结果：{parts}。"
              "另一处改动单独就能训练成功，而你选的那处不能：起作用的是那一处"},
    "ch06_training.fix.alone": {
        "en": " You changed several things; measured one at a time: {parts}.",
        "zh": "你改了好几处；逐一单独测量的结果：{parts}。"},
    "ch06_training.fix.together": {
        "en": " You changed several things; measured one at a time: {parts}: none does it alone, they work together.",
        "zh": "你改了好几处；逐一单独测量的结果：{parts}：没有一处能单独做到，它们是一起起作用的。"},
    "ch06_training.fix.right_a": {
        "en": "the learning rate (a): AdamW's step is about lr in size whatever the gradient's size, so only a "
              "smaller lr makes the first updates small enough for Post-LN",
        "zh": "学习率 (a)：无论梯度多大，AdamW 的步长都约等于 lr，所以只有更小的 lr 才能让最初的更新小到 Post-LN "
              "承受得住"},
    "ch06_training.fix.right_c": {
        "en": "the warm-up (c): the first updates are small while Post-LN's gradients are at their most uneven and "
              "Adam's moment estimates are still settling",
        "zh": "预热 (c)：在 Post-LN 的梯度最不均衡、Adam 的矩估计还没稳定的时候，最初的更新都很小"},
    "ch06_training.fix.right_d": {
        "en": "Pre-LN (d): an identity path carries the gradient from the output to every block evenly, so "
              "full-size steps stop wrecking the early blocks",
        "zh": "Pre-LN (d)：一条恒等路径把梯度均匀地从输出送到每一个块，全尺寸的步长就不再毁掉靠前的块"},
    "ch06_training.fix.prediction_right": {
        "en": "your prediction ({predicted}) was right", "zh": "你的预测（{predicted}）是对的"},
    "ch06_training.fix.prediction_wrong": {
        "en": "your prediction ({predicted}) was wrong", "zh": "你的预测（{predicted}）错了"},
    "ch06_training.fix.prediction_late": {
        "en": "your prediction was recorded after this result had been shown, so it is not graded",
        "zh": "你的预测是在这个结果显示之后才记录的，所以不予评判"},
    "ch06_training.fix.passed": {
        "en": "with {changes} every seed trains (final loss {losses}; chance {chance:.2f}), for the reason you chose: "
              "{mechanism}.{alone} A 30-step warm-up alone rescues {rescued} of {n} seeds: {verdict}.",
        "zh": "改成 {changes} 后，每个种子都训练成功了（最终损失：{losses}；随机猜测水平为 {chance:.2f}），"
              "原因正如你所选：{mechanism}。{alone}只加 30 步预热能救回 {n} 个种子中的 {rescued} 个：{verdict}。"},
}

register(MESSAGES)
