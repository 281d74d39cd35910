"""The messages of :mod:`helpers.exercises.ch06_long_context`'s checkers, in English and Chinese: its part
of the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    "ch06_long_context.what.rotated": {"en": "rotated tensor, same shape as x", "zh": "旋转后的张量（形状与 x 相同）"},
    # Exercise 7: position interpolation.
    "ch06_long_context.pi.where": {
        "en": "(head_dim={e}, train_len={train_len}, target_len={target_len})",
        "zh": "（head_dim={e}，train_len={train_len}，target_len={target_len}）"},
    "ch06_long_context.pi.shape": {
        "en": "{where}: expected the shape of x, {expected}, got {got}",
        "zh": "{where}：应返回与 x 相同的形状 {expected}，得到的是 {got}"},
    "ch06_long_context.pi.inverted": {
        "en": "{where}: the factor is inverted: you multiplied the positions by target_len / train_len = "
              "{target_len}/{train_len}, which pushes the angles further out of the trained range. Position "
              "interpolation squeezes them in: m · train_len / target_len",
        "zh": "{where}：缩放因子倒过来了：你把位置乘上了 target_len / train_len = {target_len}/{train_len}，"
              "角度因此离训练时见过的范围更远。位置插值是把它们压进这个范围：m · train_len / target_len"},
    "ch06_long_context.pi.unscaled": {
        "en": "{where}: this is plain RoPE: the positions are not scaled at all. Rotate position m as RoPE "
              "rotates m · train_len / target_len",
        "zh": "{where}：这是普通的 RoPE：位置根本没有缩放。位置 m 应按 RoPE 旋转 m · train_len / target_len "
              "的方式来旋转"},
    "ch06_long_context.pi.after_trig": {
        "en": "{where}: you scaled the cosines and sines (or the rotated vector), not the angle: cos(m·θ) · s is "
              "no rotation, it changes the vector's length and keeps the angles of plain RoPE. Scale the "
              "position inside the angle: cos(m · train_len / target_len · θ)",
        "zh": "{where}：你缩放的是余弦和正弦（或旋转后的向量），而不是角度：cos(m·θ) · s 不是旋转，它改变了向量的"
              "长度，角度却仍是普通 RoPE 的角度。应在角度里缩放位置：cos(m · train_len / target_len · θ)"},
    "ch06_long_context.pi.off_by_one": {
        "en": "{where}: the positions are off by one: you scaled m ± 1 instead of m. The token at position m is "
              "rotated as m · train_len / target_len, position 0 stays at angle 0",
        "zh": "{where}：位置差了一：你缩放的是 m ± 1 而不是 m。位置 m 的词元按 m · train_len / target_len "
              "旋转，位置 0 的角度仍是 0"},
    "ch06_long_context.pi.lengths": {
        "en": "{where}: the factor is (train_len - 1) / (target_len - 1), off by one in the lengths. Chen et al. "
              "(Eq. 4) scale by L / L' = train_len / target_len",
        "zh": "{where}：缩放因子用成了 (train_len - 1) / (target_len - 1)，长度差了一。Chen 等人（式 4）"
              "按 L / L' = train_len / target_len 缩放"},
    "ch06_long_context.pi.rounded": {
        "en": "{where}: the scaled positions are rounded to integers (integer division, .long(), round): "
              "neighbouring tokens then share one angle. Interpolated positions are fractional: keep them in "
              "floating point",
        "zh": "{where}：缩放后的位置被取成了整数（整数除法、.long()、round）：相邻的词元于是共用一个角度。"
              "插值后的位置是小数：请保留浮点数"},
    "ch06_long_context.pi.some_pairs": {
        "en": "{where}: only {scaled} of the {pairs} rotated pairs use the interpolated angle; the others keep "
              "plain RoPE's. Position interpolation scales the position, so every pair's angle m · θ_i is "
              "divided by the same factor (a per-pair choice is what NTK-aware scaling, YaRN and Llama 3.1 do)",
        "zh": "{where}：{pairs} 个旋转对中只有 {scaled} 个用了插值后的角度，其余仍是普通 RoPE 的角度。"
              "位置插值缩放的是位置，所以每一对的角度 m · θ_i 都除以同一个因子（逐对选择是 NTK-aware "
              "缩放、YaRN 和 Llama 3.1 的做法）"},
    "ch06_long_context.pi.differs": {
        "en": "{where}: the output differs from RoPE at positions m · train_len / target_len (max |diff| "
              "{diff:.2e}); check the half-split pairing (feature i with i + E/2), θ_i = 10000^(-2i/E) and the "
              "direction of the rotation, as in exercise 3",
        "zh": "{where}：输出与在位置 m · train_len / target_len 处的 RoPE 不同（最大 |差值| 为 {diff:.2e}）；"
              "请像练习 3 那样检查对半拆分的配对（第 i 个特征与第 i + E/2 个）、θ_i = 10000^(-2i/E) 以及"
              "旋转的方向"},
    "ch06_long_context.pi.passed": {
        "en": "your rotation equals RoPE with every frequency divided by target_len / train_len (the package's "
              "helpers.rope_scaling.position_interpolation), for integer and fractional factors: every angle "
              "of the longer context stays inside the range the model was trained on.",
        "zh": "你的旋转等于把每个频率都除以 target_len / train_len 的 RoPE（即包里的 "
              "helpers.rope_scaling.position_interpolation），整数和小数的因子都对：更长上下文里的每个角度"
              "都落在模型训练时见过的范围之内。"},
    # Exercise 8: which cache keeps the model working past the window.
    "ch06_long_context.sinks.not_runs": {
        "en": "pass the list that attention_sinks.sink_runs(config, seeds=...) returned, got {got}",
        "zh": "请传入 attention_sinks.sink_runs(config, seeds=...) 返回的列表，收到的是 {got}"},
    "ch06_long_context.sinks.not_config": {
        "en": "pass the SinkConfig the runs were made with, got {got}",
        "zh": "请传入生成这些运行所用的 SinkConfig，收到的是 {got}"},
    "ch06_long_context.sinks.unfair": {
        "en": "these settings do not test the question: decode past the training length (decode_factor >= 2, got "
              "{decode_factor}) with a cache smaller than it (cache_size < train_length, got {cache_size} and "
              "{train_length})",
        "zh": "这组设置检验不了这个问题：解码要超出训练长度（decode_factor >= 2，现在是 {decode_factor}），"
              "缓存要比训练长度小（cache_size < train_length，现在是 {cache_size} 和 {train_length}）"},
    "ch06_long_context.sinks.no_prediction": {
        "en": "first record your prediction, before the run: lc.predict(lc.SINK_CACHES, [...]) with the caches of "
              "{choices} that you expect to keep working ([] for none). The checker shows the result only after",
        "zh": "先在运行之前记下你的预测：lc.predict(lc.SINK_CACHES, [...])，列出 {choices} 中你认为还能正常"
              "工作的缓存（都不行就写 []）。检查器之后才会给出结果"},
    "ch06_long_context.sinks.bad_prediction": {
        "en": "your recorded prediction must be a list of names among {choices}, each at most once, got {got}: "
              "record it again with lc.predict(lc.SINK_CACHES, [...])",
        "zh": "你记下的预测应是由 {choices} 中的名字组成的列表，每个至多一次，收到的是 {got}：请用 "
              "lc.predict(lc.SINK_CACHES, [...]) 重新记录"},
    "ch06_long_context.sinks.not_reproduced": {
        "en": "the run of seed {seed}, trained again with these settings, does not come out the same: these runs "
              "were not produced by attention_sinks.sink_runs with this config (or were edited since)",
        "zh": "用这组设置把种子 {seed} 的运行重新训练一遍，结果并不相同：这些运行不是用这个 config 由 "
              "attention_sinks.sink_runs 生成的（或者之后被改过）"},
    "ch06_long_context.sinks.untrained": {
        "en": "the model has not learned the task inside its training length (accuracy {accuracy:.2f} with the "
              "full cache, at least 0.8 needed): what happens past the window says nothing yet. Train longer "
              "(steps={steps} now)",
        "zh": "模型在训练长度以内还没学会这个任务（用完整缓存时准确率为 {accuracy:.2f}，至少需要 0.8）："
              "这时超出窗口后的表现还说明不了什么。请训练得更久一些（现在 steps={steps}）"},
    "ch06_long_context.sinks.sink_weight": {
        "en": "Inside its training length the model puts {weight:.2f} of its first layer's attention on position 0, "
              "the first token (the attention sink).",
        "zh": "在训练长度以内，模型第一层的注意力有 {weight:.2f} 放在位置 0，即第一个词元上（注意力汇点）。"},
    "ch06_long_context.sinks.full_works": {
        "en": "The full cache kept working ({accuracy:.2f} against {inside:.2f} inside the training length) "
              "although past {train_length} tokens it meets RoPE distances never trained.",
        "zh": "完整缓存仍能正常工作（{accuracy:.2f}，训练长度以内为 {inside:.2f}），尽管超过 {train_length} "
              "个词元后它会遇到训练中从未见过的 RoPE 距离。"},
    "ch06_long_context.sinks.full_fails": {
        "en": "The full cache failed ({accuracy:.2f} against {inside:.2f} inside the training length): it keeps "
              "every key and counts positions in the text, so past {train_length} tokens the queries meet RoPE "
              "distances the model never saw (section 6.5's extrapolation).",
        "zh": "完整缓存失效了（{accuracy:.2f}，训练长度以内为 {inside:.2f}）：它保留所有的键，并按文本中的"
              "位置计数，所以超过 {train_length} 个词元后，查询会遇到模型从未见过的 RoPE 距离"
              "（6.5 节讲的外推）。"},
    "ch06_long_context.sinks.window_works": {
        "en": "The window alone kept working ({accuracy:.2f}): it counts positions inside its {cache_size} "
              "slots, so every distance stays one the model trained on, even after position 0 has left.",
        "zh": "只保留窗口也仍能正常工作（{accuracy:.2f}）：它在自己的 {cache_size} 个槽位之内计数位置，"
              "所以即使位置 0 已被移出，每个距离仍是模型训练时见过的。"},
    "ch06_long_context.sinks.window_fails": {
        "en": "The window alone failed ({accuracy:.2f}). StreamingLLM's explanation (section 3.1): once position 0 "
              "has left the {cache_size} slots, the attention the model parked on the first token must go to "
              "other keys.",
        "zh": "只保留窗口失效了（{accuracy:.2f}）。StreamingLLM 的解释（第 3.1 节）：位置 0 一旦移出这 "
              "{cache_size} 个槽位，模型原本停放在第一个词元上的注意力就只能分给别的键。"},
    "ch06_long_context.sinks.sinks_works": {
        "en": "The window with 4 sinks kept working ({accuracy:.2f}): it keeps the first tokens, where the model "
              "puts its spare attention, and counts positions inside the cache.",
        "zh": "窗口加 4 个注意力汇点仍能正常工作（{accuracy:.2f}）：它保留了模型存放多余注意力的前几个词元，"
              "并在缓存之内计数位置。"},
    "ch06_long_context.sinks.sinks_fails": {
        "en": "The window with 4 sinks failed too ({accuracy:.2f}).",
        "zh": "窗口加 4 个注意力汇点也失效了（{accuracy:.2f}）。"},
    "ch06_long_context.sinks.loss_lower": {
        "en": "The sinks still help a little: mean loss once the cache is full {sinks:.3f} with them, {window:.3f} "
              "with the window alone. In Llama-2-13B the gap is far larger: StreamingLLM's Table 1 (read from "
              "a secondary source) gives a perplexity of 5158 for the window alone and 5.40 with 4 sinks.",
        "zh": "注意力汇点仍有一点帮助：缓存满了之后，有汇点时平均损失为 {sinks:.3f}，只保留窗口时为 "
              "{window:.3f}。在 Llama-2-13B 中差距要大得多：StreamingLLM 的表 1（转引自二手资料）给出只保留"
              "窗口时困惑度为 5158，加 4 个汇点时为 5.40。"},
    "ch06_long_context.sinks.loss_not_lower": {
        "en": "Here the sinks do not lower the loss ({sinks:.3f} with them, {window:.3f} without). In Llama-2-13B "
              "StreamingLLM's Table 1 (read from a secondary source) gives a perplexity of 5158 for the window "
              "alone and 5.40 with 4 sinks.",
        "zh": "在这里汇点并没有降低损失（有汇点 {sinks:.3f}，没有汇点 {window:.3f}）。在 Llama-2-13B 中，"
              "StreamingLLM 的表 1（转引自二手资料）给出只保留窗口时困惑度为 5158，加 4 个汇点时为 5.40。"},
    "ch06_long_context.sinks.right": {
        "en": "your prediction {predicted} was right: the caches that kept accuracy within {drop} of the training "
              "length's, decoding {length} tokens with {cache_size} slots (seed {seed}, trained again here), are "
              "{measured}. {explanation}",
        "zh": "你的预测 {predicted} 是对的：用 {cache_size} 个槽位解码 {length} 个词元时（种子 {seed}，"
              "这里重新训练过），准确率与训练长度以内相差不超过 {drop} 的缓存是 {measured}。{explanation}"},
    "ch06_long_context.sinks.wrong": {
        "en": "your prediction {predicted} was wrong: the caches that kept accuracy within {drop} of the training "
              "length's, decoding {length} tokens with {cache_size} slots (seed {seed}, trained again here), are "
              "{measured}. {explanation}",
        "zh": "你的预测 {predicted} 不对：用 {cache_size} 个槽位解码 {length} 个词元时（种子 {seed}，"
              "这里重新训练过），准确率与训练长度以内相差不超过 {drop} 的缓存是 {measured}。{explanation}"},
    "ch06_long_context.sinks.late": {
        "en": "your prediction {predicted} was recorded after the result had been shown: it does not count as a "
              "prediction. Measured (seed {seed}): {measured}. {explanation}",
        "zh": "你的预测 {predicted} 是在结果给出之后才记下的：它不算预测。实测（种子 {seed}）：{measured}。"
              "{explanation}"},
    # Exercise 9: the memory of a rolling cache.
    "ch06_long_context.rolling.not_number": {
        "en": "return the cache's size in GiB as a number, got {type} {value}",
        "zh": "请以数字返回缓存的大小（单位 GiB），得到的是 {type} {value}"},
    "ch06_long_context.rolling.one_of_two": {
        "en": "half the size: a cache holds a key and a value per token (the factor 2)",
        "zh": "只有一半：缓存为每个词元存一个键和一个值（因子 2）"},
    "ch06_long_context.rolling.one_layer": {
        "en": "the size of one layer: every layer has its own cache (multiply by num_layers)",
        "zh": "这是一层的大小：每一层都有自己的缓存（要乘以 num_layers）"},
    "ch06_long_context.rolling.query_heads": {
        "en": "you counted the query heads: only the key/value heads are cached (num_kv_heads; Mistral 7B has 32 "
              "query heads and 8 key/value heads)",
        "zh": "你按查询头计了数：缓存里只有键/值头（num_kv_heads；Mistral 7B 有 32 个查询头、8 个键/值头）"},
    "ch06_long_context.rolling.not_capped": {
        "en": "not capped at the window: a rolling cache holds min(seq_len, window) tokens (token i goes to slot "
              "i mod window, overwriting the one window tokens back); you counted every token",
        "zh": "没有以窗口为上限：滚动缓存存 min(seq_len, window) 个词元（第 i 个词元放进第 i mod window "
              "个槽位，覆盖 window 个词元之前的那个）；你把每个词元都算上了"},
    "ch06_long_context.rolling.always_window": {
        "en": "you counted the whole window even for a text shorter than it: the cache holds min(seq_len, window) "
              "tokens",
        "zh": "文本比窗口短时你仍按整个窗口计算：缓存存的是 min(seq_len, window) 个词元"},
    "ch06_long_context.rolling.bytes": {
        "en": "this is in bytes: the exercise asks for GiB (divide by 2**30)",
        "zh": "这是以字节为单位的：练习要的是 GiB（要除以 2**30）"},
    "ch06_long_context.rolling.mib": {
        "en": "this is in MiB: the exercise asks for GiB (divide by 1024 once more)",
        "zh": "这是以 MiB 为单位的：练习要的是 GiB（还要再除以 1024）"},
    "ch06_long_context.rolling.gb": {
        "en": "this is in GB (10**9 bytes): the exercise asks for GiB, 2**30 = 1,073,741,824 bytes",
        "zh": "这是以 GB（10**9 字节）为单位的：练习要的是 GiB，即 2**30 = 1,073,741,824 字节"},
    "ch06_long_context.rolling.bits": {
        "en": "eight times too large: bytes_per_value is already in bytes (do not multiply by 8 bits)",
        "zh": "大了八倍：bytes_per_value 已经是字节数（不要再乘以 8 比特）"},
    "ch06_long_context.rolling.fixed_bytes": {
        "en": "you assumed 2 bytes per value: use bytes_per_value (1, 2 or 4 in the checker's shapes)",
        "zh": "你假定了每个值 2 字节：请用 bytes_per_value（检查器的形状中有 1、2、4）"},
    "ch06_long_context.rolling.elements": {
        "en": "this counts values, not bytes: multiply by bytes_per_value",
        "zh": "这数的是值的个数而不是字节：要乘以 bytes_per_value"},
    "ch06_long_context.rolling.table": {
        "en": "right for Mistral 7B, wrong for the other shapes the checker drew: write the formula, not its value",
        "zh": "对 Mistral 7B 是对的，对检查器抽取的其他形状却不对：请写出公式，而不是它的值"},
    "ch06_long_context.rolling.wrong": {
        "en": "for {config}: expected {expected:.6g} GiB, got {got:.6g}. Count 2 (key and value) × layers × "
              "key/value heads × head_dim × min(seq_len, window) × bytes_per_value, then divide by 2**30",
        "zh": "对于 {config}：应为 {expected:.6g} GiB，得到 {got:.6g}。请数 2（键和值）× 层数 × 键/值头数 × "
              "head_dim × min(seq_len, window) × bytes_per_value，再除以 2**30"},
    "ch06_long_context.rolling.passed": {
        "en": "right on Mistral 7B and on the shapes the checker drew. Mistral 7B at {seq_len} tokens: the rolling "
              "cache of {window} slots holds {rolling:.2f} GiB, the full cache {full:.2f} GiB, {ratio:.0f}× more "
              "(the paper, section 2, reports 8× less cache memory at 32k). A longer text no longer grows it.",
        "zh": "在 Mistral 7B 和检查器抽取的形状上都对。Mistral 7B 处理 {seq_len} 个词元时：{window} 个槽位的"
              "滚动缓存占 {rolling:.2f} GiB，完整缓存占 {full:.2f} GiB，是它的 {ratio:.0f} 倍（论文第 2 节"
              "报告在 32k 时缓存内存少 8 倍）。文本再长，它也不再增长。"},
}

register(MESSAGES)
