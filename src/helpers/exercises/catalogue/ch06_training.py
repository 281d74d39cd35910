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
        "en": "your entropies match helpers.diagnostics.attention_entropy of the masked softmax, in nats, with padded "
              "keys excluded.",
        "zh": "你的熵与 helpers.diagnostics.attention_entropy 对掩码后的 softmax 算出的结果一致：单位为奈特，"
              "不计填充的键。"},
    # exercise 2: the broken heads
    "ch06_training.heads.not_a_run": {
        "en": "pass the run from train_broken_heads as the second argument, got {type}",
        "zh": "第二个参数应是 train_broken_heads 返回的运行结果，得到的是 {type}"},
    "ch06_training.heads.form": {
        "en": "return (collapsed, dead), each a (layer, head) pair with layer in 0..{last_layer} and head in "
              "0..{last_head}; got {got}",
        "zh": "应返回 (collapsed, dead)，两者都是 (layer, head) 对，layer 取 0..{last_layer}，head 取 "
              "0..{last_head}；得到的是 {got}"},
    "ch06_training.heads.history": {
        "en": "{start:.2f} before training, {end:.2f} at the end",
        "zh": "训练前 {start:.2f}，结束时 {end:.2f}"},
    "ch06_training.heads.swapped": {
        "en": "(seed {seed}) you swapped them: the collapsed head is the one with entropy near 0 (one-hot attention), "
              "the dead one has entropy 1 (uniform attention)",
        "zh": "（种子 {seed}）你把两者弄反了：坍缩的头熵接近 0（独热的注意力），死掉的头熵为 1（均匀的注意力）"},
    "ch06_training.heads.dead_not_collapsed": {
        "en": "(seed {seed}) head {head} is uniform (entropy {history}): that is the dead one, not the collapsed one",
        "zh": "（种子 {seed}）头 {head} 是均匀的（熵：{history}）：这是死掉的头，不是坍缩的头"},
    "ch06_training.heads.specialised": {
        "en": "(seed {seed}) head {head} learnt the task ({history}): it became sharp *as the loss fell*, which is a "
              "head specialising (here: looking two places back), not a collapse. A low entropy at the end is not a "
              "failure; the collapsed head was one-hot before anything was learnt: look at the first probe",
        "zh": "（种子 {seed}）头 {head} 学会了任务（{history}）：它是*随着损失下降*才变尖锐的，这是头在分工"
              "（这里是回看两个位置），不是坍缩。结束时熵低并不是故障；坍缩的头在学到任何东西之前就已经是独热的："
              "请看第一次探测"},
    "ch06_training.heads.not_collapsed": {
        "en": "(seed {seed}) head {head} is not collapsed (entropy {history}): the collapsed head's entropy is near 0 "
              "from the first probe on",
        "zh": "（种子 {seed}）头 {head} 没有坍缩（熵：{history}）：坍缩的头从第一次探测起熵就接近 0"},
    "ch06_training.heads.collapsed_not_dead": {
        "en": "(seed {seed}) head {head} is one-hot (entropy {history}): that is the collapsed one, not the dead one",
        "zh": "（种子 {seed}）头 {head} 是独热的（熵：{history}）：这是坍缩的头，不是死掉的头"},
    "ch06_training.heads.not_dead": {
        "en": "(seed {seed}) head {head} is not dead: its entropy changed during training ({history}). The dead "
              "head's entropy is 1.00 at every probe: uniform attention, its queries carry nothing, and it never moves",
        "zh": "（种子 {seed}）头 {head} 没有死：它的熵在训练中变了（{history}）。死掉的头每次探测的熵都是 1.00："
              "注意力是均匀的，它的查询不携带任何信息，也从不变化"},
    "ch06_training.heads.passed": {
        "en": "in seed {seed} head {collapsed} is collapsed (normalised entropy {collapsed_start:.2f} before training: "
              "one-hot before anything was learnt) and head {dead} is dead (entropy {dead_min:.2f} at every probe: "
              "uniform attention); found in seed {other_seed} too.",
        "zh": "种子 {seed} 中，头 {collapsed} 坍缩了（训练前的归一化熵为 {collapsed_start:.2f}：还没学到任何东西就已是"
              "独热的），头 {dead} 死了（每次探测的熵都是 {dead_min:.2f}：注意力是均匀的）；在种子 {other_seed} "
              "中也都找对了。"},
    # exercise 3: the LayerNorm bug hunt
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
    # exercise 4: rescue Post-LN
    "ch06_training.fix.no_prediction": {
        "en": "first write your prediction: predicted_warmup_alone_rescues must be True or False, got {got}",
        "zh": "请先写下你的预测：predicted_warmup_alone_rescues 必须是 True 或 False，得到的是 {got}"},
    "ch06_training.fix.no_explanation": {
        "en": "write your explanation as a sentence: which change made the run train, and why",
        "zh": "请用一句话写下你的解释：是哪处改动让这次训练成功的，为什么"},
    "ch06_training.fix.one_seed": {
        "en": "a fix is checked over at least 2 seeds: one seed can train by luck",
        "zh": "修复至少要在 2 个种子上检验：单个种子可能碰巧训练成功"},
    "ch06_training.fix.not_a_run": {
        "en": "return the RunResult of tf.train_lag_model(...), got {type}",
        "zh": "应返回 tf.train_lag_model(...) 的 RunResult，得到的是 {type}"},
    "ch06_training.fix.wrong_seed": {
        "en": "asked for seed {asked}, your function returned a run with seed {got}: pass the seed on to "
              "train_lag_model",
        "zh": "要的是种子 {asked}，你的函数返回的却是种子 {got} 的运行：请把 seed 传给 train_lag_model"},
    "ch06_training.fix.inconsistent": {
        "en": "your function changes different settings for different seeds; make one fix and apply it to every seed",
        "zh": "你的函数对不同的种子改了不同的设置；请只做一种修复，并用在每个种子上"},
    "ch06_training.fix.unchanged": {
        "en": "your runs have the failing run's settings (Post-LN, lr 0.03, no warm-up, no clipping, 80 steps): "
              "change one of them",
        "zh": "你的运行用的还是失败那次的设置（Post-LN、lr 0.03、无预热、无梯度裁剪、80 步）：请改其中一项"},
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
    "ch06_training.fix.hint_low_lr": {
        "en": " With lr {lr:g} the model moves too little to learn the task in 80 steps.",
        "zh": "lr 为 {lr:g} 时，模型每步移动得太少，80 步内学不会这个任务。"},
    "ch06_training.fix.hint_high_lr": {
        "en": " A higher learning rate makes it worse, not better.",
        "zh": "提高学习率只会更糟，不会更好。"},
    "ch06_training.fix.still_failing": {
        "en": "with {changes}, {failed} of {n} seeds still fail (final loss {losses}; failing means above "
              "{threshold:.2f}, 90 % of chance).{hint}",
        "zh": "改成 {changes} 后，{n} 个种子中仍有 {failed} 个失败（最终损失：{losses}；高于 {threshold:.2f}，"
              "即随机猜测水平的 90 %，就算失败）。{hint}"},
    "ch06_training.fix.knob_norm_first": {"en": "Pre-LN (norm_first)", "zh": "Pre-LN（norm_first）"},
    "ch06_training.fix.knob_lr": {"en": "the learning rate", "zh": "学习率"},
    "ch06_training.fix.knob_warmup_steps": {"en": "the warm-up", "zh": "预热"},
    "ch06_training.fix.knob_clip_grad_norm": {"en": "gradient clipping", "zh": "梯度裁剪"},
    "ch06_training.fix.knob_steps": {"en": "the number of steps", "zh": "训练步数"},
    "ch06_training.fix.unnamed": {
        "en": "the run trains ({losses}), but your explanation does not name {missing}, which you changed "
              "({changes}): say which change did it",
        "zh": "训练成功了（{losses}），但你的解释没有提到你改动过的{missing}（{changes}）：请说明是哪处改动起了作用"},
    "ch06_training.fix.alone_part": {
        "en": "{setting} alone trains {trained} of {n} seeds",
        "zh": "只改 {setting}：{n} 个种子中有 {trained} 个训练成功"},
    "ch06_training.fix.alone": {
        "en": " You changed several things; measured one at a time: {parts}.",
        "zh": "你改了好几处；逐一单独测量的结果：{parts}。"},
    "ch06_training.fix.prediction_right": {"en": "your prediction was right", "zh": "你的预测是对的"},
    "ch06_training.fix.prediction_wrong": {"en": "your prediction was wrong", "zh": "你的预测错了"},
    "ch06_training.fix.passed": {
        "en": "with {changes} every seed trains (final loss {losses}; chance {chance:.2f}).{alone} A 30-step warm-up "
              "alone rescues {rescued} of {n} seeds: {verdict}.",
        "zh": "改成 {changes} 后，每个种子都训练成功了（最终损失：{losses}；随机猜测水平为 {chance:.2f}）。{alone}"
              "只加 30 步预热能救回 {n} 个种子中的 {rescued} 个：{verdict}。"},
}

register(MESSAGES)
