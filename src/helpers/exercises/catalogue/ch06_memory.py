"""The messages of :mod:`helpers.exercises.ch06_memory`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    # What a checker expected the reader's function to return (a field of the shared reader.* messages).
    "ch06_memory.what.new_output": {"en": "output of the new token, shape (B, 1, D)",
                                    "zh": "新词元的输出（形状 (B, 1, D)）"},
    "ch06_memory.what.rotated": {"en": "rotated tensor, same shape as x", "zh": "旋转后的张量（形状与 x 相同）"},
    "ch06_memory.what.output": {"en": "attention output, shape (B, L, D)", "zh": "注意力的输出（形状 (B, L, D)）"},
    "ch06_memory.what.online": {"en": "attention output, shape (B, H, L, Ev)",
                                "zh": "注意力的输出（形状 (B, H, L, Ev)）"},
    # Exercise 1: one decoding step with a KV cache.
    "ch06_memory.decode.where": {
        "en": "(embed_dim={embed_dim}, {heads} query heads, {kv_heads} key/value heads, prompt of {prefix})",
        "zh": "（embed_dim={embed_dim}，{heads} 个查询头，{kv_heads} 个键/值头，提示词长 {prefix}）"},
    "ch06_memory.decode.step_shape": {
        "en": "{where}: each step must return (B, 1, D) = ({batch}, 1, {embed_dim}), got {got}",
        "zh": "{where}：每一步都应返回 (B, 1, D) = ({batch}, 1, {embed_dim})，得到的是 {got}"},
    "ch06_memory.decode.prompt_only": {
        "en": "{where}: the cache still holds the {prefix} prompt tokens after {steps} steps: the new key and value "
              "are never appended to the cache: each token sees the prompt and itself, not the tokens decoded before "
              "it. Call cache.update(k, v) every step",
        "zh": "{where}：解码了 {steps} 步，缓存里仍然只有提示词的 {prefix} 个词元：新的键和值从未追加进缓存，"
              "于是每个词元只看得到提示词和它自己，看不到在它之前解码出的词元。每一步都要调用 cache.update(k, v)"},
    "ch06_memory.decode.cache_length": {
        "en": "{where}: the outputs are right but the cache holds {seq_len} positions instead of {length}: append "
              "each new key and value once",
        "zh": "{where}：输出是对的，但缓存里有 {seq_len} 个位置，而不是 {length} 个：每个新的键和值只追加一次"},
    "ch06_memory.decode.cache_content": {
        "en": "{where}: the outputs are right but the cache does not hold what a full pass stores: the rotated keys "
              "(rotate the new key at its position, then append; a key's rotation never changes) and the plain values",
        "zh": "{where}：输出是对的，但缓存里存的不是完整前向计算所存的内容。缓存应存旋转后的键（先按新键所在的位置"
              "旋转，再追加；键的旋转一经确定就不再改变）和未经旋转的值"},
    "ch06_memory.decode.too_long": {
        "en": "{where}: the cache holds {seq_len} positions after decoding up to {length}: each step must append its "
              "key and value exactly once",
        "zh": "{where}：解码到长度 {length} 时，缓存里却有 {seq_len} 个位置：每一步都必须把自己的键和值恰好追加一次"},
    "ch06_memory.decode.no_append": {
        "en": "{where}: the new key and value are never appended to the cache: each token sees the prompt and "
              "itself, not the tokens decoded before it. Call cache.update(k, v) every step",
        "zh": "{where}：新的键和值从未追加进缓存，于是每个词元只看得到提示词和它自己，看不到在它之前解码出的词元。"
              "每一步都要调用 cache.update(k, v)"},
    "ch06_memory.decode.position_zero": {
        "en": "{where}: position offset error: the new token is rotated as if it sat at position 0. Its position is "
              "the number of tokens already cached: rope(1, offset=cache.seq_len)",
        "zh": "{where}：位置偏移错误：新词元是按位置 0 旋转的。它的位置应是缓存里已有的词元数："
              "rope(1, offset=cache.seq_len)"},
    "ch06_memory.decode.position_after": {
        "en": "{where}: position offset error by one: you read cache.seq_len after appending, so the new token is "
              "rotated one position too far. Take the position before cache.update",
        "zh": "{where}：位置偏移差了一：你在追加之后才读取 cache.seq_len，于是新词元多转了一个位置。"
              "应在调用 cache.update 之前取位置"},
    "ch06_memory.decode.top_left": {
        "en": "{where}: the causal mask hides the cache from the new query: a causal mask built for one query and S "
              "keys (is_causal=True in F.scaled_dot_product_attention, tril(ones(1, S))) is aligned top-left and "
              "lets it see key 0 only. The last token may see every cached key: no mask is needed for a single new "
              "query",
        "zh": "{where}：因果掩码把缓存挡在了新查询之外：为 1 个查询和 S 个键构造的因果掩码"
              "（F.scaled_dot_product_attention 中的 is_causal=True，或 tril(ones(1, S))）以左上角对齐，"
              "只让它看到第 0 个键。最后一个词元可以看到所有缓存的键：单个新查询不需要掩码"},
    "ch06_memory.decode.tile": {
        "en": "{where}: with fewer key/value heads, query head h must use key/value head h // (H / H_kv) "
              "(repeat_interleave, or helpers.repeat_kv); you used h % H_kv (.repeat)",
        "zh": "{where}：键/值头较少时，第 h 个查询头应使用第 h // (H / H_kv) 个键/值头"
              "（用 repeat_interleave 或 helpers.repeat_kv）；你用的是 h % H_kv（.repeat）"},
    "ch06_memory.decode.differs": {
        "en": "{where}: the outputs differ from the full causal pass (max |diff| {diff:.2e}); check the rotation of "
              "q and k, the scale 1/√head_dim, the softmax over the keys and the output projection",
        "zh": "{where}：输出与完整的因果前向计算不同（最大 |差值| 为 {diff:.2e}）；请检查 q 和 k 的旋转、"
              "缩放因子 1/√head_dim、沿键方向的 softmax 以及输出投影"},
    "ch06_memory.decode.passed": {
        "en": "each step's output equals the full causal pass, and the cache ends up holding exactly the keys and "
              "values of a full pass: the new token's position is the cache's length, and a single new query may "
              "see every cached key.",
        "zh": "每一步的输出都与完整的因果前向计算相同，缓存最后存下的也恰好是完整前向计算的键和值："
              "新词元的位置就是缓存的长度，单个新查询可以看到所有缓存的键。"},
    # Exercise 2: the KV cache of a real model.
    "ch06_memory.cache.not_number": {
        "en": "return a number of bytes (an int), got {type} ({value})",
        "zh": "应返回字节数（一个 int），得到的是 {type}（{value}）"},
    "ch06_memory.cache.passed": {
        "en": "2 (keys and values) × layers × batch × key/value heads × length × head_dim × bytes per element. The "
              "{name} model at batch 8 and 4096 tokens in float16 holds {gib:.0f} GiB of cache; with 64 key/value "
              "heads it would be {gib_mha:.0f} GiB.",
        "zh": "2（键和值）× 层数 × 批大小 × 键/值头数 × 序列长度 × head_dim × 每个元素的字节数。"
              "{name} 模型在批大小 8、4096 个词元、float16 下的缓存有 {gib:.0f} GiB；"
              "若有 64 个键/值头，就是 {gib_mha:.0f} GiB。"},
    "ch06_memory.cache.one_of_two": {
        "en": "you counted keys or values, not both: the cache stores a key and a value vector, the factor 2",
        "zh": "你只算了键或值，没有两者都算：缓存既存键向量，也存值向量，这就是因子 2"},
    "ch06_memory.cache.one_layer": {
        "en": "you counted one layer: every layer keeps its own keys and values (× num_layers)",
        "zh": "你只算了一层：每一层都保存自己的键和值（× num_layers）"},
    "ch06_memory.cache.query_heads": {
        "en": "you used the query heads: the cache holds num_kv_heads heads, which is the whole point of MQA and GQA",
        "zh": "你用的是查询头数：缓存里存的是 num_kv_heads 个头，这正是 MQA 和 GQA 的用意所在"},
    "ch06_memory.cache.elements": {
        "en": "you counted elements, not bytes: multiply by dtype.itemsize (4 for float32, 2 for bfloat16/float16, "
              "1 for float8)",
        "zh": "你算的是元素个数，不是字节数：要乘以 dtype.itemsize"
              "（float32 为 4，bfloat16/float16 为 2，float8 为 1）"},
    "ch06_memory.cache.four_bytes": {
        "en": "you assumed 4 bytes per element whatever the dtype: use dtype.itemsize (2 for bfloat16/float16, 1 for "
              "float8)",
        "zh": "你不管 dtype 是什么，都按每个元素 4 字节算：应使用 dtype.itemsize"
              "（bfloat16/float16 为 2，float8 为 1）"},
    "ch06_memory.cache.two_bytes": {
        "en": "you assumed 2 bytes per element whatever the dtype: use dtype.itemsize (4 for float32, 1 for float8)",
        "zh": "你不管 dtype 是什么，都按每个元素 2 字节算：应使用 dtype.itemsize（float32 为 4，float8 为 1）"},
    "ch06_memory.cache.bits": {
        "en": "you counted bits: dtype.itemsize is already in bytes",
        "zh": "你算的是比特数：dtype.itemsize 的单位已经是字节"},
    "ch06_memory.cache.table": {
        "en": "right on the {count} published models, wrong on made-up shapes drawn for this call: the answer must "
              "compute the bytes from its arguments, not look them up",
        "zh": "在 {count} 个已发布模型的形状上是对的，在这次调用临时抽取的形状上却错了：答案必须由参数算出字节数，"
              "而不是查表"},
    "ch06_memory.cache.made_up": {"en": "a made-up model", "zh": "一个临时抽取的模型"},
    "ch06_memory.cache.wrong": {
        "en": "{name} ({layers} layers, {heads} query and {kv_heads} key/value heads of {head_dim}, {seq_len} tokens, "
              "batch {batch}, {dtype}): expected {expected:,} bytes, got {got:,.0f}",
        "zh": "{name}（{layers} 层，{heads} 个查询头和 {kv_heads} 个键/值头，每个头 {head_dim} 维，{seq_len} 个词元，"
              "批大小 {batch}，{dtype}）：应为 {expected:,} 字节，得到的是 {got:,.0f}"},
    # Exercise 3: RoPE from scratch.
    "ch06_memory.rope.output_shape": {
        "en": "the output must have the shape of x, {expected}, got {got}",
        "zh": "输出的形状必须与 x 相同，即 {expected}，得到的是 {got}"},
    "ch06_memory.rope.shape": {
        "en": "expected the shape of x, {expected}, got {got}",
        "zh": "形状应与 x 相同，即 {expected}，得到的是 {got}"},
    "ch06_memory.rope.where": {"en": "(E = {e}, positions {positions})", "zh": "（E = {e}，位置 {positions}）"},
    "ch06_memory.rope.unrotated": {
        "en": "{where}: x came back unrotated: rotate each pair (x_i, x_(i+E/2)) by position·θ_i",
        "zh": "{where}：x 原样返回，没有旋转：应把每一对 (x_i, x_(i+E/2)) 旋转 position·θ_i"},
    "ch06_memory.rope.interleaved": {
        "en": "{where}: you paired neighbours (x_2i, x_2i+1), the paper's interleaved convention. It is a valid RoPE, "
              "but the package (like GPT-NeoX and Llama) pairs x_i with x_(i+E/2): half-split. Mixing the two is "
              "exercise 4's bug",
        "zh": "{where}：你把相邻的 (x_2i, x_2i+1) 配成一对，这是论文里的交错约定。它也是合法的 RoPE，"
              "但本包（和 GPT-NeoX、Llama 一样）把 x_i 与 x_(i+E/2) 配对，即对半拆分。两种约定混用，"
              "正是练习 4 里的 bug"},
    "ch06_memory.rope.wrong_way": {
        "en": "{where}: you rotate the wrong way (by −position·θ_i): the rotated pair is (x1 cos − x2 sin, "
              "x2 cos + x1 sin), i.e. rotate_half(x) = (−x2, x1)",
        "zh": "{where}：你转反了方向（转了 −position·θ_i）：旋转后的一对应为 (x1 cos − x2 sin, x2 cos + x1 sin)，"
              "即 rotate_half(x) = (−x2, x1)"},
    "ch06_memory.rope.frequencies": {
        "en": "{where}: wrong frequencies: θ_i = 10000^(−2i/E) for i = 0 .. E/2 − 1 (you used 10000^(−i/E))",
        "zh": "{where}：频率不对：对 i = 0 .. E/2 − 1，θ_i = 10000^(−2i/E)（你用的是 10000^(−i/E)）"},
    "ch06_memory.rope.not_offset": {
        "en": "{where}: your numbers differ from the package's, and the score <f(q, m), f(k, n)> changes along a "
              "diagonal m − n = const (relative spread {spread:.1e}): each pair must be rotated by exactly "
              "position·θ_i, the same angle for both features of the pair",
        "zh": "{where}：你的数值与本包的不同，而且分数 <f(q, m), f(k, n)> 沿对角线 m − n = const 会变化"
              "（相对离散度 {spread:.1e}）：每一对都必须恰好旋转 position·θ_i，一对中的两个特征转同一个角度"},
    "ch06_memory.rope.differs": {
        "en": "{where}: the score depends on m − n only, but your numbers differ from the package's (max |diff| "
              "{diff:.2e}): check the pairing (x_i with x_(i+E/2)), θ_i = 10000^(−2i/E) and the direction of the "
              "rotation",
        "zh": "{where}：分数只取决于 m − n，但你的数值与本包的不同（最大 |差值| 为 {diff:.2e}）：请检查配对"
              "（x_i 与 x_(i+E/2)）、θ_i = 10000^(−2i/E) 以及旋转的方向"},
    "ch06_memory.rope.passed": {
        "en": "your rotation matches the package's, and <R_m q, R_n k> is the same along every diagonal m − n = const "
              "(relative spread {spread:.0e}, float32 rounding): the score sees the offset only.",
        "zh": "你的旋转与本包的一致，而且 <R_m q, R_n k> 沿每条对角线 m − n = const 都相同"
              "（相对离散度 {spread:.0e}，来自 float32 舍入）：分数只看得到偏移。"},
    # Exercise 4: the bug hunt.
    "ch06_memory.fix.where": {
        "en": "(embed_dim={embed_dim}, {heads} heads, L={length})",
        "zh": "（embed_dim={embed_dim}，{heads} 个头，L={length}）"},
    "ch06_memory.fix.shape": {
        "en": "{where}: expected shape {expected}, got {got}",
        "zh": "{where}：形状应为 {expected}，得到的是 {got}"},
    "ch06_memory.fix.pairing_bug": {
        "en": "the pairing is still wrong: the table from rope(L) is half-split (the angle of pair i at features i "
              "and i + E/2), but you turn neighbours (2i, 2i + 1), so the two features of a pair get different "
              "angles: not a rotation, and the score no longer depends on the offset alone. Use rotate_half",
        "zh": "配对仍然不对：rope(L) 给出的表是对半拆分的（第 i 对的角度放在第 i 和第 i + E/2 个特征上），"
              "你转的却是相邻的 (2i, 2i + 1)，于是一对中的两个特征拿到了不同的角度：这不是旋转，"
              "分数也不再只取决于偏移。请用 rotate_half"},
    "ch06_memory.fix.v_bug": {
        "en": "V is still rotated: RoPE rotates queries and keys only, so that their dot product sees the offset; "
              "rotating the values writes absolute positions into the output",
        "zh": "V 仍在旋转：RoPE 只旋转查询和键，好让二者的点积看到偏移；旋转值会把绝对位置写进输出"},
    "ch06_memory.fix.both": {
        "en": "{where}: both bugs are still there. 1) {pairing}. 2) {v}",
        "zh": "{where}：两个 bug 都还在。1）{pairing}。2）{v}"},
    "ch06_memory.fix.v_fixed": {
        "en": "{where}: V is fixed, but {pairing}",
        "zh": "{where}：V 已经修好，但{pairing}"},
    "ch06_memory.fix.pairing_fixed": {
        "en": "{where}: the pairing is fixed, but {v}",
        "zh": "{where}：配对已经修好，但 {v}"},
    "ch06_memory.fix.interleaved": {
        "en": "{where}: your pairing is consistent now, but it is the interleaved one (neighbours (2i, 2i + 1), "
              "the table rearranged to match): a valid RoPE, but not the convention this layer (and a checkpoint "
              "trained with it) uses, so the scores differ. Keep the half-split table and turn with rotate_half",
        "zh": "{where}：现在配对前后一致了，但用的是交错约定（相邻的 (2i, 2i + 1)，表也改成了与之匹配）："
              "这是合法的 RoPE，却不是这一层（以及用它训练出的检查点）所用的约定，所以分数不同。"
              "请保留对半拆分的表，用 rotate_half 旋转"},
    "ch06_memory.fix.one_side": {
        "en": "{where}: V is left alone, but {side} is not rotated any more: RoPE rotates both the queries and the "
              "keys, so that their dot product sees m − n; rotating one side only writes absolute positions "
              "into the scores",
        "zh": "{where}：V 不再旋转了，但 {side} 也不旋转了：RoPE 同时旋转查询和键，二者的点积才看得到 m − n；"
              "只旋转一边，分数里就写进了绝对位置"},
    "ch06_memory.fix.no_mask": {
        "en": "{where}: both bugs are fixed, but the causal mask is gone: each token now attends to the tokens after "
              "it",
        "zh": "{where}：两个 bug 都修好了，因果掩码却没了：现在每个词元都会注意它后面的词元"},
    "ch06_memory.fix.differs": {
        "en": "{where}: the output differs from the layer's (max |diff| {diff:.2e}); keep the causal mask, the scale "
              "1/√head_dim and the output projection",
        "zh": "{where}：输出与该层的输出不同（最大 |差值| 为 {diff:.2e}）；请保留因果掩码、缩放因子 1/√head_dim "
              "和输出投影"},
    "ch06_memory.fix.passed": {
        "en": "queries and keys rotated with the half-split pairing that matches the table, values left alone: the "
              "output equals MultiHeadAttention with rope=.",
        "zh": "查询和键按与表一致的对半拆分配对旋转，值保持不动：输出与传入 rope= 的 MultiHeadAttention 相同。"},
    # Exercise 5: predict the extrapolation ranking, then measure it.
    "ch06_memory.ranking.not_runs": {
        "en": "pass the runs that pos.extrapolation_runs returned (a dict of lists of ExtrapolationRun), got {got}",
        "zh": "应传入 pos.extrapolation_runs 返回的运行结果（一个 dict，值为 ExtrapolationRun 的 list），"
              "得到的是 {got}"},
    "ch06_memory.ranking.no_prediction": {
        "en": "first record your prediction, before the run: ex.predict(ex.RANKING, [...]) with each of {names} "
              "once, best first. The checker shows the measured ranking only after",
        "zh": "先在运行之前记下你的预测：ex.predict(ex.RANKING, [...])，把 {names} 中的每一种各列一次，"
              "最好的排在最前。检查器之后才会给出实测的排名"},
    "ch06_memory.ranking.bad_prediction": {
        "en": "your recorded prediction must list each of {names} once, best first, got {got}: record it again with "
              "ex.predict(ex.RANKING, [...])",
        "zh": "你记下的预测应把 {names} 中的每一种各列一次，最好的排在最前，得到的是 {got}："
              "请用 ex.predict(ex.RANKING, [...]) 重新记录"},
    "ch06_memory.ranking.not_dict": {
        "en": "return a dict with one accuracy per encoding, keys {names}, got {got}",
        "zh": "应返回一个 dict，每种编码对应一个准确率，键为 {names}，得到的是 {got}"},
    "ch06_memory.ranking.not_number": {
        "en": "each accuracy must be a number, got {got}",
        "zh": "每个准确率都必须是一个数，得到的是 {got}"},
    "ch06_memory.ranking.lower": {
        "en": "; the biggest surprise: {moved}, {places} place{plural} lower than you predicted",
        "zh": "；最出乎意料的是 {moved}，比你预测的低了 {places} 名"},
    "ch06_memory.ranking.higher": {
        "en": "; the biggest surprise: {moved}, {places} place{plural} higher than you predicted",
        "zh": "；最出乎意料的是 {moved}，比你预测的高了 {places} 名"},
    "ch06_memory.ranking.right": {
        "en": "Your prediction ({predicted}) was right.",
        "zh": "你的预测（{predicted}）是对的。"},
    "ch06_memory.ranking.wrong": {
        "en": "Your prediction ({predicted}) was wrong.",
        "zh": "你的预测（{predicted}）不对。"},
    "ch06_memory.ranking.late": {
        "en": "Your ranking ({predicted}) was recorded after the result had been shown: it does not count as a "
              "prediction.",
        "zh": "你的排名（{predicted}）是在结果给出之后才记下的：它不算预测。"},
    "ch06_memory.ranking.passed": {
        "en": "{verdict} Measured past 2·train_len: {table}. You placed {hits} of {count} encodings at their "
              "measured rank{surprise}.",
        "zh": "{verdict}在 2·train_len 之后测得：{table}。{count} 种编码中，你把 {hits} 种排在了实测的名次上"
              "{surprise}。"},
    "ch06_memory.ranking.off_by_one": {
        "en": "off by one: per_position[t] is the prediction of token t + 1, so token 2·train_len is "
              "per_position[2·train_len − 1]",
        "zh": "差了一位：per_position[t] 是对第 t + 1 个词元的预测，所以第 2·train_len 个词元对应 "
              "per_position[2·train_len − 1]"},
    "ch06_memory.ranking.first_seed": {
        "en": "you used the first seed only: average over every run of an encoding",
        "zh": "你只用了第一个种子：应对一种编码的所有运行取平均"},
    "ch06_memory.ranking.from_train_len": {
        "en": "you started at train_len: the far range starts at twice the training length, token 2·train_len, "
              "per_position[2·train_len − 1]",
        "zh": "你从 train_len 开始算了：远端从训练长度的两倍开始，即第 2·train_len 个词元，"
              "per_position[2·train_len − 1]"},
    "ch06_memory.ranking.all_positions": {
        "en": "you averaged every position: only the tokens at positions 2·train_len and later count",
        "zh": "你对所有位置取了平均：只算位置 2·train_len 及之后的词元"},
    "ch06_memory.ranking.differs": {
        "en": "on runs the checker made up (train_len {train_len}, {length} positions per run) your accuracies "
              "differ from the mean of per_position over the tokens at positions 2·train_len and later, averaged "
              "over seeds: e.g. {name}: expected {expected:.4f}, got {got:.4f}. Compute it from the runs you are "
              "given",
        "zh": "在检查器临时构造的运行结果上（train_len 为 {train_len}，每次运行 {length} 个位置），"
              "你的准确率与 per_position 在位置 2·train_len 及之后各词元上的均值（再对种子取平均）不符："
              "例如 {name}：应为 {expected:.4f}，得到的是 {got:.4f}。请由传入的运行结果计算"},
    "ch06_memory.ranking.settings": {
        "en": "settings must be the dict of keyword arguments the runs were made with (train_len, test_len, "
              "steps, ...; not the encodings nor the seeds), got {got}",
        "zh": "settings 应是生成这些运行结果时所用的关键字参数组成的 dict（train_len、test_len、steps 等；"
              "不含编码和种子），得到的是 {got}"},
    "ch06_memory.ranking.not_reproduced": {
        "en": "the checker trained {name} (seed {seed}) again with these settings and got other accuracies: these "
              "runs were not produced by pos.extrapolation_runs with these settings. Pass the runs and the "
              "settings of the run cell",
        "zh": "检查器用这些设置重新训练了 {name}（种子 {seed}），得到的准确率不同：这些运行结果并不是用这些设置由 "
              "pos.extrapolation_runs 生成的。请传入运行单元格里的运行结果和设置"},
    # Exercise 6: exact attention one block of keys at a time.
    "ch06_memory.online.where_ordinary": {
        "en": "(q {q}, k {k}, v {v}, block_size {block})",
        "zh": "（q {q}，k {k}，v {v}，block_size {block}）"},
    "ch06_memory.online.where_large": {
        "en": "(scores of ±1000: q {q}, k {k}, v {v}, block_size {block})",
        "zh": "（分数为 ±1000：q {q}，k {k}，v {v}，block_size {block}）"},
    "ch06_memory.online.where_memory": {
        "en": "(memory measured: q {q}, k {k}, v {v}, block_size {block})",
        "zh": "（测量内存：q {q}，k {k}，v {v}，block_size {block}）"},
    "ch06_memory.online.shape": {
        "en": "{where}: expected shape (B, H, L, Ev) = {expected}, got {got}",
        "zh": "{where}：形状应为 (B, H, L, Ev) = {expected}，得到的是 {got}"},
    "ch06_memory.online.no_rescale": {
        "en": "{where}: when a block raises the running max from m to m′, what was summed so far was exp(s − m): "
              "multiply the running sum and the running output by exp(m − m′) before adding the block's terms",
        "zh": "{where}：某个块把运行最大值从 m 提高到 m′ 时，此前累加的项是 exp(s − m)："
              "在加上这个块的项之前，应把运行和与运行输出都乘以 exp(m − m′)"},
    "ch06_memory.online.sum_not_rescaled": {
        "en": "{where}: you rescale the running output but not the running sum when the max changes: both hold "
              "terms exp(s − m) of the old max; multiply the sum by exp(m − m′) too",
        "zh": "{where}：最大值变化时，你重新缩放了运行输出，却没有缩放运行和：二者存的都是旧最大值下的 exp(s − m)；"
              "运行和也要乘以 exp(m − m′)"},
    "ch06_memory.online.out_not_rescaled": {
        "en": "{where}: you rescale the running sum but not the running output when the max changes: both hold "
              "terms exp(s − m) of the old max; multiply the output by exp(m − m′) too",
        "zh": "{where}：最大值变化时，你重新缩放了运行和，却没有缩放运行输出：二者存的都是旧最大值下的 exp(s − m)；"
              "运行输出也要乘以 exp(m − m′)"},
    "ch06_memory.online.per_block": {
        "en": "{where}: you normalise each block by its own sum (a softmax per block) and combine the blocks' "
              "outputs: the weights of a row must sum to 1 over all keys, not within each block. Keep one running "
              "sum over the blocks and divide once, at the end",
        "zh": "{where}：你让每个块各自按自己的和归一化（每块一个 softmax），再把各块的输出合起来："
              "一行的权重应在所有键上加起来为 1，而不是在每个块内。应在各块之间维护一个运行和，最后只除一次"},
    "ch06_memory.online.tail": {
        "en": "{where}: the last keys are missing: S is not a multiple of block_size, and the last, shorter block "
              "must be included (range(0, S, block_size))",
        "zh": "{where}：最后几个键被漏掉了：S 不是 block_size 的倍数，最后那个较短的块也必须算进去"
              "（range(0, S, block_size)）"},
    "ch06_memory.online.scale": {
        "en": "{where}: the scores are not scaled: multiply q · k by 1/√E",
        "zh": "{where}：分数没有缩放：q · k 要乘以 1/√E"},
    "ch06_memory.online.no_max": {
        "en": "{where}: overflow: without the running max subtracted, exp(1000) is inf in any float type, and "
              "inf / inf gives NaN. Subtract the running max m from the scores before exp, and rescale by "
              "exp(m − m′) when it grows",
        "zh": "{where}：溢出：不减去运行最大值，exp(1000) 在任何浮点类型里都是 inf，inf / inf 得到 NaN。"
              "应先从分数中减去运行最大值 m 再取 exp，并在最大值增大时乘以 exp(m − m′)"},
    "ch06_memory.online.max_zero": {
        "en": "{where}: the running max starts at 0: in a row whose scores are all near −1000, exp(s − 0) "
              "underflows to 0 and the row ends as 0 / 0. Start it at −inf (the first block sets it)",
        "zh": "{where}：运行最大值从 0 开始：在分数全都接近 −1000 的行里，exp(s − 0) 下溢为 0，"
              "这一行最后成了 0 / 0。应从 −inf 开始（由第一个块来设定）"},
    "ch06_memory.online.not_finite": {
        "en": "{where}: the output holds inf or NaN: exp of a large score overflows, or a row's sum is 0; subtract "
              "the running max before exp",
        "zh": "{where}：输出里有 inf 或 NaN：大分数的 exp 溢出了，或者某一行的和为 0；取 exp 之前应先减去运行最大值"},
    "ch06_memory.online.differs": {
        "en": "{where}: the output differs from softmax(q kᵀ / √E) v (max |diff| {diff:.2e}); check the running "
              "max, the rescale by exp(m − m′) of both the sum and the output, and the division at the end",
        "zh": "{where}：输出与 softmax(q kᵀ / √E) v 不同（最大 |差值| 为 {diff:.2e}）；请检查运行最大值、"
              "对运行和与运行输出的 exp(m − m′) 缩放，以及最后的除法"},
    "ch06_memory.online.matrix": {
        "en": "{where}: the output is right, but your answer allocates a tensor of shape {shape}, as large as the "
              "{length} × {keys} scores of a head: the point is never to hold them. Loop over blocks of keys and "
              "keep only an L × block_size block of scores at a time",
        "zh": "{where}：输出是对的，但你的答案分配了一个形状为 {shape} 的张量，和一个头的 {length} × {keys} "
              "个分数一样大：本练习的要点正是从不存下它们。应按键分块循环，每次只保留 L × block_size 的一块分数"},
    "ch06_memory.online.peak": {
        "en": "{where}: the output is right and no single tensor is L × S, but the live tensors peak at {kib:.0f} "
              "KiB, as much as the whole score matrix ({matrix_kib:.0f} KiB): blocks are kept instead of folded "
              "into the running max, sum and output",
        "zh": "{where}：输出是对的，也没有哪个张量是 L × S，但同时存活的张量峰值达到 {kib:.0f} KiB，"
              "和整个分数矩阵（{matrix_kib:.0f} KiB）一样多：各个块被保留了下来，"
              "而没有并入运行最大值、运行和与运行输出"},
    "ch06_memory.online.passed": {
        "en": "exact attention, one block at a time: equal to softmax(q kᵀ / √E) v, scores of ±1000 included, and "
              "for {length} queries and {keys} keys in blocks of {block} the live tensors peaked at {kib:.0f} KiB, "
              "against {matrix_kib:.0f} KiB for the score matrix alone.",
        "zh": "一次一块地算出精确的注意力：结果等于 softmax(q kᵀ / √E) v，分数为 ±1000 时也一样；"
              "{length} 个查询、{keys} 个键、每块 {block} 个键时，同时存活的张量峰值为 {kib:.0f} KiB，"
              "而单是分数矩阵就要 {matrix_kib:.0f} KiB。"},
}

register(MESSAGES)
