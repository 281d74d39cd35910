"""The messages of :mod:`helpers.exercises.ch07`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    "ch07.not_a_model": {
        "en": "pass the model itself, load_smollm2()[0] (a helpers.llama.LlamaForCausalLM), got {type}",
        "zh": "请把模型本身传进来，即 load_smollm2()[0]（一个 helpers.llama.LlamaForCausalLM），收到的却是 {type}"},
    "ch07.what.scores": {"en": "scores, shape (N, H)", "zh": "分数（形状 (N, H)）"},
    "ch07.what.share": {"en": "each layer's share, shape (N,)", "zh": "每层的份额（形状 (N,)）"},
    # Exercise 1: induction scores.
    "ch07.induction.same_token": {
        "en": "you read the weight on the earlier occurrence of the same token (t - n): that is a duplicate-token "
              "head's score. An induction head looks one further, at the token that came next (t - n + 1)",
        "zh": "你读的是落在同一个词元前一次出现处（t - n）的权重：那是“重复词元头”的分数。归纳头要再往后看一个，"
              "看当时紧随其后的词元（t - n + 1）"},
    "ch07.induction.previous": {
        "en": "this is the weight on t - 1, the previous-token score, over every query: the induction score reads "
              "key t - n + 1 for the queries of the second copy only",
        "zh": "这是落在 t - 1 上的权重，即前一词元分数，而且用了所有查询：归纳分数只看第二份副本的查询，"
              "读的是键 t - n + 1"},
    "ch07.induction.last_query": {
        "en": "the last query of the second copy is missing: the queries are t = n .. 2n - 1, both ends included "
              "(range(n, 2 * n))",
        "zh": "漏掉了第二份副本的最后一个查询：查询是 t = n .. 2n - 1，两端都包括（range(n, 2 * n)）"},
    "ch07.induction.sum": {
        "en": "you summed over the queries and the sequences: take the mean, so that a perfect induction head scores 1",
        "zh": "你对查询和序列求了和：应取平均，这样完美的归纳头得分为 1"},
    "ch07.induction.sum_queries": {
        "en": "you summed over the queries: take the mean, so that a perfect induction head scores 1",
        "zh": "你对查询求了和：应取平均，这样完美的归纳头得分为 1"},
    "ch07.induction.transposed": {
        "en": "the result is (H, N): return one row per layer, (N, H)",
        "zh": "结果的形状是 (H, N)：应每层一行，即 (N, H)"},
    "ch07.induction.per_sequence": {
        "en": "shape {shape} is (N, B, H): average over the sequences too",
        "zh": "形状 {shape} 是 (N, B, H)：还要对序列取平均"},
    "ch07.induction.shape": {
        "en": "expected shape (N, H) = {expected}, got {got}",
        "zh": "形状应为 (N, H) = {expected}，得到的是 {got}"},
    "ch07.induction.wrong": {
        "en": "right shape, wrong numbers (case: {case}): for each layer and head, average weights[layer, b, head, t, "
              "t - n + 1] over the sequences b and the queries t = n .. 2n - 1",
        "zh": "形状对了，数不对（用例：{case}）：对每一层、每个头，把 weights[layer, b, head, t, t - n + 1] "
              "在序列 b 和查询 t = n .. 2n - 1 上取平均"},
    "ch07.induction.passed": {
        "en": "on SmolLM2's own weights, on random sequences drawn now, the top heads (layer.head, score) are {heads}. "
              "Compare with the chapter's.",
        "zh": "在 SmolLM2 自己的权重上、在现抽取的随机序列上，得分最高的头（层.头，分数）是 {heads}。"
              "和本章的结果比一比。"},
    # Exercise 2: the sink share, predicted.
    "ch07.sink.no_prediction": {
        "en": "record your prediction first: predict({key!r}, 0.3), the mean over the 30 layers of the weight on the "
              "first token (between 0 and 1); the checker shows the measurement only after that",
        "zh": "请先记录你的预测：predict({key!r}, 0.3)，即 30 层放在第一个词元上的权重的平均值（0 到 1 之间）；"
              "记录之后检查器才会给出测量结果"},
    "ch07.sink.bad_prediction": {
        "en": "the prediction must be a number between 0 and 1 (a share of the attention), got {got}",
        "zh": "预测必须是 0 到 1 之间的一个数（注意力的份额），得到的是 {got}"},
    "ch07.sink.no_skip": {
        "en": "you averaged over every query: leave out the first skip queries (weights[..., skip:, 0]), which have "
              "almost nothing but the first token to look at",
        "zh": "你对所有查询取了平均：应去掉前 skip 个查询（weights[..., skip:, 0]），"
              "它们除了第一个词元几乎没有别的可看"},
    "ch07.sink.row": {
        "en": "you read row 0 (what the first query looks at), not column 0 (how much every query gives the first "
              "token): weights[..., q, k] is query q's weight on key k",
        "zh": "你读的是第 0 行（第一个查询看向哪里），而不是第 0 列（每个查询给第一个词元多少权重）："
              "weights[..., q, k] 是查询 q 放在键 k 上的权重"},
    "ch07.sink.last": {
        "en": "you read the last key (column -1): the first token is column 0",
        "zh": "你读的是最后一个键（第 -1 列）：第一个词元是第 0 列"},
    "ch07.sink.per_head": {
        "en": "the result keeps the heads: average over the sequences, the heads and the queries, one number per "
              "layer, shape (N,)",
        "zh": "结果里还留着头这一维：应对序列、头和查询都取平均，每层一个数，形状 (N,)"},
    "ch07.sink.shape": {
        "en": "expected shape (N,) = {expected}, got {got}",
        "zh": "形状应为 (N,) = {expected}，得到的是 {got}"},
    "ch07.sink.wrong": {
        "en": "right shape, wrong numbers (case: {case}): average weights[layer, :, :, skip:, 0] for each layer",
        "zh": "形状对了，数不对（用例：{case}）：对每一层，把 weights[layer, :, :, skip:, 0] 取平均"},
    "ch07.sink.passed_close": {
        "en": "on a passage drawn now, the mean weight on the first token over the 30 layers is {measured:.2f}; you "
              "predicted {predicted:.2f}, within {close}. It runs from {low:.2f} (layer {low_layer}) to {high:.2f} "
              "(layer {high_layer}): the early layers barely use the sink, later ones lean on it.",
        "zh": "在现抽取的一段文字上，30 层放在第一个词元上的权重平均为 {measured:.2f}；你预测的是 {predicted:.2f}，"
              "相差在 {close} 以内。各层从 {low:.2f}（第 {low_layer} 层）到 {high:.2f}（第 {high_layer} 层）："
              "最初几层几乎不用汇点，后面的层很依赖它。"},
    "ch07.sink.passed_far": {
        "en": "your function is right. On a passage drawn now, the mean weight on the first token over the 30 layers "
              "is {measured:.2f}; you predicted {predicted:.2f}, more than {close} away. It runs from {low:.2f} (layer "
              "{low_layer}) to {high:.2f} (layer {high_layer}): a token that carries nothing draws that much because "
              "every query sees it and the softmax must put its weight somewhere.",
        "zh": "你的函数是对的。在现抽取的一段文字上，30 层放在第一个词元上的权重平均为 {measured:.2f}；"
              "你预测的是 {predicted:.2f}，相差超过 {close}。各层从 {low:.2f}（第 {low_layer} 层）到 "
              "{high:.2f}（第 {high_layer} 层）：一个不携带任何信息的词元能得到这么多权重，是因为每个查询都看得见它，"
              "而 softmax 必须把权重放在某处。"},
    "ch07.sink.passed_late": {
        "en": "your function is right; the mean weight on the first token is {measured:.2f} (from {low:.2f} in layer "
              "{low_layer} to {high:.2f} in layer {high_layer}). Your prediction, {predicted:.2f}, was recorded after "
              "the result had been shown, so it does not count as a prediction.",
        "zh": "你的函数是对的；放在第一个词元上的权重平均为 {measured:.2f}（从第 {low_layer} 层的 {low:.2f} "
              "到第 {high_layer} 层的 {high:.2f}）。你的预测 {predicted:.2f} 是在结果显示之后才记录的，不算预测。"},
    # Exercise 3: the cache, by formula and measured.
    "ch07.cache.not_number": {
        "en": "return a number of bytes (an int), got {type} ({value})",
        "zh": "应返回字节数（一个 int），得到的是 {type}（{value}）"},
    "ch07.cache.one_of_two": {
        "en": "you counted keys or values, not both: the cache stores a key and a value vector, the factor 2",
        "zh": "你只算了键或值，没有两者都算：缓存既存键向量，也存值向量，这就是因子 2"},
    "ch07.cache.one_layer": {
        "en": "you counted one layer: every layer keeps its own keys and values (× config.num_hidden_layers)",
        "zh": "你只算了一层：每一层都保存自己的键和值（× config.num_hidden_layers）"},
    "ch07.cache.query_heads": {
        "en": "you used the query heads: the cache holds config.num_key_value_heads heads (3 in SmolLM2, shared by "
              "9 query heads: grouped-query attention)",
        "zh": "你用的是查询头数：缓存里存的是 config.num_key_value_heads 个头（SmolLM2 有 3 个，由 9 个查询头共享："
              "分组查询注意力）"},
    "ch07.cache.elements": {
        "en": "you counted elements, not bytes: multiply by dtype.itemsize (4 for float32, 2 for bfloat16/float16)",
        "zh": "你算的是元素个数，不是字节数：要乘以 dtype.itemsize（float32 为 4，bfloat16/float16 为 2）"},
    "ch07.cache.four_bytes": {
        "en": "you assumed 4 bytes per element whatever the dtype: use dtype.itemsize (2 for bfloat16/float16)",
        "zh": "你不管 dtype 是什么，都按每个元素 4 字节算：应使用 dtype.itemsize（bfloat16/float16 为 2）"},
    "ch07.cache.batch": {
        "en": "you left out the batch: each sequence has its own cache (× batch)",
        "zh": "你漏掉了批大小：每个序列都有自己的缓存（× batch）"},
    "ch07.cache.bits": {
        "en": "you counted bits: dtype.itemsize is already in bytes",
        "zh": "你算的是比特数：dtype.itemsize 的单位已经是字节"},
    "ch07.cache.wrong": {
        "en": "{layers} layers, {heads} query and {kv_heads} key/value heads of {head_dim}, {context} tokens, batch "
              "{batch}, {dtype}: expected {expected:,} bytes, got {got:,.0f}",
        "zh": "{layers} 层，{heads} 个查询头和 {kv_heads} 个键/值头，每个头 {head_dim} 维，{context} 个词元，"
              "批大小 {batch}，{dtype}：应为 {expected:,} 字节，得到的是 {got:,.0f}"},
    "ch07.cache.measured": {
        "en": "right on the formula's cases, but the model's caches after {context} tokens hold {expected:,} bytes and "
              "your function says {got:,.0f} (seed {seed})",
        "zh": "在公式的用例上是对的，但模型读完 {context} 个词元后，缓存里有 {expected:,} 字节，"
              "你的函数给出的是 {got:,.0f}（种子 {seed}）"},
    "ch07.cache.passed": {
        "en": "2 × layers × batch × key/value heads × tokens × head_dim × bytes. The model's caches after {context} "
              "tokens hold {held:,} bytes, as your formula says: {kib:.0f} KiB a token in float32, {mib:,.0f} MiB at "
              "the file's context of {length:,} tokens, {mib_mha:,.0f} MiB if each of the 9 query heads had its own "
              "key/value head.",
        "zh": "2 × 层数 × 批大小 × 键/值头数 × 词元数 × head_dim × 字节数。模型读完 {context} 个词元后，"
              "缓存里有 {held:,} 字节，和你的公式一致：float32 下每个词元 {kib:.0f} KiB，在文件给出的 {length:,} "
              "个词元的上下文长度上是 {mib:,.0f} MiB；如果 9 个查询头各有自己的键/值头，就是 {mib_mha:,.0f} MiB。"},
}

register(MESSAGES)
