"""The messages of :mod:`helpers.exercises.ch04`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    "ch04.what.heads": {"en": "heads, shape (B, H, L, E)", "zh": "切分后的头（形状 (B, H, L, E)）"},
    "ch04.what.merged": {"en": "merged tensor, shape (B, L, D)", "zh": "合并后的张量（形状 (B, L, D)）"},
    "ch04.what.output": {"en": "attention output, shape (B, L, D)", "zh": "注意力的输出（形状 (B, L, D)）"},
    "ch04.split.not_moved": {
        "en": "shape {shape} is (B, L, H, E): the heads are cut but not moved; add .transpose(1, 2) so that each "
              "head is a batch of L tokens",
        "zh": "形状 {shape} 是 (B, L, H, E)：头已经切开，却还没有移到批维度旁边；加上 .transpose(1, 2)，"
              "让每个头成为一批 L 个词元"},
    "ch04.split.no_transpose": {
        "en": "this is x.view(B, H, L, E) without the transpose: each 'head' gets a block of consecutive numbers "
              "that spans several tokens, so a head's 'token' i mixes features of different tokens. View as "
              "(B, L, H, E), then .transpose(1, 2)",
        "zh": "这是没有转置的 x.view(B, H, L, E)：每个“头”拿到的是一段跨越好几个词元的连续数字，"
              "于是头里的“第 i 个词元”混进了不同词元的特征。应先 view 成 (B, L, H, E)，再 .transpose(1, 2)"},
    "ch04.split.strided": {
        "en": "head h takes every H-th feature (view(B, L, E, H)): the package's heads are contiguous blocks, "
              "features h·E to (h+1)·E − 1; view as (B, L, H, E)",
        "zh": "第 h 个头取的是每隔 H 个的特征（view(B, L, E, H)）：本包中，每个头是一段连续的特征，"
              "即第 h·E 到第 (h+1)·E − 1 个；应 view 成 (B, L, H, E)"},
    "ch04.split.shape": {
        "en": "expected shape (B, H, L, E) = {expected}, got {got}",
        "zh": "形状应为 (B, H, L, E) = {expected}，得到的是 {got}"},
    "ch04.split.misplaced": {
        "en": "the shape is right but the numbers are not where they belong: head h, token i must hold "
              "x[:, i, h*E:(h+1)*E]",
        "zh": "形状对了，数却没放在该放的位置：第 h 个头的第 i 个词元应当是 x[:, i, h*E:(h+1)*E]"},
    "ch04.split.passed": {
        "en": "view(B, L, H, E) then transpose(1, 2): each head is a contiguous block of features, and the heads "
              "become a batch dimension.",
        "zh": "先 view(B, L, H, E)，再 transpose(1, 2)：每个头是一段连续的特征，头成了一个批维度。"},
    "ch04.merge.no_transpose": {
        "en": "you reshaped (B, H, L, E) straight to (B, L, D): token i then gets pieces of other tokens from the "
              "same head. Transpose back to (B, L, H, E) first",
        "zh": "你把 (B, H, L, E) 直接 reshape 成了 (B, L, D)：这样第 i 个词元会拿到同一个头里其他词元的片段。"
              "应先转置回 (B, L, H, E)"},
    "ch04.merge.shape": {
        "en": "expected shape (B, L, D) = {expected}, got {got}",
        "zh": "形状应为 (B, L, D) = {expected}，得到的是 {got}"},
    "ch04.merge.misplaced": {
        "en": "right shape, wrong order: token i must hold head 0's E features, then head 1's, ...",
        "zh": "形状对了，顺序不对：第 i 个词元应当先放第 0 个头的 E 个特征，再放第 1 个头的，依此类推"},
    "ch04.merge.passed": {
        "en": "transpose(1, 2) then reshape(B, L, D): the heads of each token side by side, in order. (After a "
              "transpose the tensor is not contiguous, so .view would fail: reshape copies.)",
        "zh": "先 transpose(1, 2)，再 reshape(B, L, D)：每个词元的各个头按顺序并排。"
              "（转置之后张量在内存中不再连续，所以 .view 会报错；reshape 会复制一份。）"},
    "ch04.layer.where": {
        "en": "(embed_dim={embed_dim}, {heads} head{plural})",
        "zh": "（embed_dim={embed_dim}，{heads} 个头）"},
    "ch04.layer.shape": {
        "en": "{where}: expected shape {expected}, got {got}",
        "zh": "{where}：形状应为 {expected}，得到的是 {got}"},
    "ch04.layer.no_transpose": {
        "en": "{where}: view(B, H, L, E) without transpose: each head attends over rows that are pieces of several "
              "tokens, so the heads mix positions. View as (B, L, H, E) and transpose(1, 2); transpose back before "
              "merging",
        "zh": "{where}：view(B, H, L, E) 之后没有转置：每个头所注意的“行”是由好几个词元的碎片拼成的，"
              "于是各个头把不同的位置混在了一起。应 view 成 (B, L, H, E) 再 transpose(1, 2)；合并之前再转置回来"},
    "ch04.layer.model_scale": {
        "en": "{where}: scores divided by √d_model; each head's dot product has head_dim terms: divide by "
              "√head_dim (chapter 3)",
        "zh": "{where}：分数除以的是 √d_model；每个头的点积只有 head_dim 项，应除以 √head_dim（见第 3 章）"},
    "ch04.layer.unscaled": {
        "en": "{where}: the scores are not scaled: divide by √head_dim",
        "zh": "{where}：分数没有缩放：应除以 √head_dim"},
    "ch04.layer.no_output_projection": {
        "en": "{where}: the output projection o_proj is missing after the merge",
        "zh": "{where}：合并之后少了输出投影 o_proj"},
    "ch04.layer.differs": {
        "en": "{where}: the output differs from the layer's (max |diff| {diff:.2e}); check the split, the softmax "
              "axis (the keys: dim=-1) and the merge",
        "zh": "{where}：输出与该层的输出不同（最大 |差值| 为 {diff:.2e}）；请检查切分、softmax 的维度"
              "（沿键的方向：dim=-1）以及合并"},
    "ch04.layer.passed": {
        "en": "your multi-head attention matches MultiHeadAttention with the same weights, for 4, 2 and 1 heads.",
        "zh": "在权重相同的条件下，你的多头注意力与 MultiHeadAttention 的结果一致（4 个、2 个和 1 个头都是如此）。"},
    "ch04.count.not_int": {
        "en": "return an int, got {type} ({value})",
        "zh": "应返回 int，得到的是 {type}（{value}）"},
    "ch04.count.layout": {
        "en": "for embed_dim={d}, num_heads={h}, num_kv_heads={hkv}, bias={bias}",
        "zh": "当 embed_dim={d}、num_heads={h}、num_kv_heads={hkv}、bias={bias} 时"},
    "ch04.count.full_kv": {
        "en": "{layout}: {result} counts full-size k_proj and v_proj; with {hkv} key/value heads they map {d} -> "
              "{kv} features, not {d}",
        "zh": "{layout}：{result} 把 k_proj 和 v_proj 按满尺寸计算了；只有 {hkv} 个键/值头时，"
              "它们把 {d} 个特征映射为 {kv} 个，而不是 {d} 个"},
    "ch04.count.no_bias": {
        "en": "{layout}: the four biases are missing ({n} parameters)",
        "zh": "{layout}：漏掉了四个偏置（共 {n} 个参数）"},
    "ch04.count.times_heads": {
        "en": "{layout}: you multiplied by the number of heads; heads are slices of the same matrices and add no "
              "parameters",
        "zh": "{layout}：你乘上了头数；各个头只是同一组矩阵的切片，并不增加参数"},
    "ch04.count.wrong": {
        "en": "{layout}: expected {expected:,}, got {got:,}",
        "zh": "{layout}：应为 {expected:,}，得到的是 {got:,}"},
    "ch04.count.passed": {
        "en": "q_proj and o_proj: D×D each; k_proj and v_proj: D×(H_kv·E); plus the biases. The number of query "
              "heads never appears: at fixed D, heads are free.",
        "zh": "q_proj 和 o_proj 各为 D×D；k_proj 和 v_proj 各为 D×(H_kv·E)；再加上偏置。"
              "查询头的个数根本不出现：D 固定时，多分几个头不花参数。"},
    "ch04.ablation.no_prediction": {
        "en": "first write your prediction: predicted_most_important must be a head index 0 .. {last}, got {got}",
        "zh": "先写下你的预测：predicted_most_important 应是 0 .. {last} 之间的头编号，得到的是 {got}"},
    "ch04.ablation.length": {
        "en": "return a list of {n} numbers, one R² per removed head",
        "zh": "应返回由 {n} 个数组成的列表，每去掉一个头对应一个 R²"},
    "ch04.ablation.nothing_removed": {
        "en": "every value equals the full model's R²: the mask removed nothing (a head is removed by a 0 at its "
              "index, e.g. 1 - torch.eye(H)[h])",
        "zh": "每个值都等于完整模型的 R²：掩码什么也没去掉（要去掉一个头，得在它的位置上放 0，"
              "例如 1 - torch.eye(H)[h]）"},
    "ch04.ablation.kept_one": {
        "en": "you kept one head and removed the others (torch.eye(H)[h]); the ablation removes one head and keeps "
              "the rest (1 - torch.eye(H)[h])",
        "zh": "你保留了一个头、去掉了其余的头（torch.eye(H)[h]）；消融实验是去掉一个头、保留其余的头"
              "（1 - torch.eye(H)[h]）"},
    "ch04.ablation.differs": {
        "en": "your values differ from R² with one head masked; use run.score(head_mask)",
        "zh": "你的数值与用掩码去掉一个头后的 R² 不符；请用 run.score(head_mask) 计算"},
    "ch04.ablation.passed_predicted": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); your prediction was "
              "right.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；你的预测是对的。"},
    "ch04.ablation.passed_surprised": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); you predicted head "
              "{predicted}, the data say head {worst}.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；你预测的是第 {predicted} 个头，"
              "数据说是第 {worst} 个。"},
}

register(MESSAGES)
