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
    "ch04.split.reversed": {
        "en": "the heads are in reverse order: head 0 must hold the first E features (x[..., 0:E]), head H − 1 "
              "the last",
        "zh": "头的顺序反了：第 0 个头应当拿前 E 个特征（x[..., 0:E]），第 H − 1 个头拿最后 E 个"},
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
    "ch04.merge.reversed": {
        "en": "the heads are concatenated in reverse order: token i must hold head 0's E features first, the last "
              "head's last",
        "zh": "各个头拼接的顺序反了：第 i 个词元应当先放第 0 个头的 E 个特征，最后放最后一个头的"},
    "ch04.merge.interleaved": {
        "en": "the heads' features are interleaved (a permute to (B, L, E, H) before the reshape): feature j of "
              "head h lands at j·H + h instead of h·E + j. Transpose to (B, L, H, E), then reshape",
        "zh": "各个头的特征交错在了一起（reshape 之前 permute 成了 (B, L, E, H)）：第 h 个头的第 j 个特征落在了 "
              "j·H + h，而不是 h·E + j。应转置成 (B, L, H, E)，再 reshape"},
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
    "ch04.layer.split_no_transpose": {
        "en": "{where}: the merge transposes back, but the split is view(B, H, L, E) without transpose: each head "
              "attends over rows that are pieces of several tokens. View as (B, L, H, E), then transpose(1, 2)",
        "zh": "{where}：合并时转置回来了，切分却是没有转置的 view(B, H, L, E)："
              "每个头所注意的“行”是由好几个词元的碎片拼成的。应 view 成 (B, L, H, E)，再 transpose(1, 2)"},
    "ch04.layer.merge_no_transpose": {
        "en": "{where}: the split is right, but the merge reshapes (B, H, L, E) straight to (B, L, D): token i then "
              "gets pieces of other tokens from one head. Transpose back to (B, L, H, E) first",
        "zh": "{where}：切分是对的，合并却把 (B, H, L, E) 直接 reshape 成了 (B, L, D)：第 i 个词元会拿到同一个头里"
              "其他词元的片段。应先转置回 (B, L, H, E)"},
    "ch04.layer.transposed_wrong_view": {
        "en": "{where}: view(B, H, L, E) followed by transpose(1, 2): the transpose does not undo a view of the "
              "wrong shape, the 'heads' still hold pieces of several tokens (and the scores compare heads, not "
              "tokens). View as (B, L, H, E) first, then transpose",
        "zh": "{where}：先 view(B, H, L, E) 再 transpose(1, 2)：转置救不回形状不对的 view，“头”里仍是好几个词元的碎片"
              "（分数比较的也成了头，而不是词元）。应先 view 成 (B, L, H, E)，再转置"},
    "ch04.layer.heads_reversed": {
        "en": "{where}: the heads are concatenated in reverse order before o_proj: head 0's output must fill "
              "features 0 .. E − 1, the columns of o_proj that belong to it",
        "zh": "{where}：进入 o_proj 之前，各个头拼接的顺序反了：第 0 个头的输出应当占第 0 .. E − 1 个特征，"
              "也就是 o_proj 中属于它的那些列"},
    "ch04.layer.heads_interleaved": {
        "en": "{where}: the heads' features are interleaved in the merge (reshape from (B, L, E, H)): o_proj's "
              "columns of head h are features h·E .. (h+1)·E − 1. Transpose to (B, L, H, E), then reshape",
        "zh": "{where}：合并时各个头的特征交错在了一起（从 (B, L, E, H) reshape）：o_proj 中属于第 h 个头的列是第 "
              "h·E .. (h+1)·E − 1 个特征。应转置成 (B, L, H, E)，再 reshape"},
    "ch04.layer.model_scale": {
        "en": "{where}: scores divided by √d_model; each head's dot product has head_dim terms: divide by "
              "√head_dim (chapter 3)",
        "zh": "{where}：分数除以的是 √d_model；每个头的点积只有 head_dim 项，应除以 √head_dim（见第 3 章）"},
    "ch04.layer.scale_e": {
        "en": "{where}: scores divided by head_dim; the dot product's spread grows like √head_dim, so divide by "
              "√head_dim (chapter 3)",
        "zh": "{where}：分数除以的是 head_dim；点积的离散程度按 √head_dim 增长，所以应除以 √head_dim（见第 3 章）"},
    "ch04.layer.unscaled": {
        "en": "{where}: the scores are not scaled: divide by √head_dim",
        "zh": "{where}：分数没有缩放：应除以 √head_dim"},
    "ch04.layer.softmax_axis": {
        "en": "{where}: the softmax runs over the queries (dim=-2): each query's weights over the keys must sum "
              "to 1, so take the softmax over the keys, dim=-1",
        "zh": "{where}：softmax 沿查询的方向（dim=-2）做了：每个查询对各个键的权重之和应为 1，"
              "所以 softmax 应沿键的方向，dim=-1"},
    "ch04.layer.no_softmax": {
        "en": "{where}: the scores are used as weights without a softmax",
        "zh": "{where}：分数没有经过 softmax 就直接当作权重用了"},
    "ch04.layer.no_bias": {
        "en": "{where}: the biases of {names} are missing: call the projection (layer.q_proj(x)), or add its "
              ".bias",
        "zh": "{where}：漏掉了 {names} 的偏置：直接调用投影（layer.q_proj(x)），或加上它的 .bias"},
    "ch04.layer.weight_not_transposed": {
        "en": "{where}: x @ W instead of x @ W.T: nn.Linear stores its weight as (out_features, in_features) and "
              "computes x @ W.T + b; call the projection (layer.q_proj(x))",
        "zh": "{where}：算的是 x @ W 而不是 x @ W.T：nn.Linear 的权重按 (out_features, in_features) 存放，"
              "计算的是 x @ W.T + b；直接调用投影（layer.q_proj(x)）"},
    "ch04.layer.no_output_projection": {
        "en": "{where}: the output projection o_proj is missing after the merge",
        "zh": "{where}：合并之后少了输出投影 o_proj"},
    "ch04.layer.differs": {
        "en": "{where}: the output differs from the layer's (max |diff| {diff:.2e}); check the split, the softmax "
              "axis (the keys: dim=-1) and the merge",
        "zh": "{where}：输出与该层的输出不同（最大 |差值| 为 {diff:.2e}）；请检查切分、softmax 的维度"
              "（沿键的方向：dim=-1）以及合并"},
    "ch04.layer.passed": {
        "en": "your multi-head attention matches MultiHeadAttention with the same weights, on three named layers "
              "(two head counts, then a single head) and a fresh one.",
        "zh": "在权重相同的条件下，你的多头注意力与 MultiHeadAttention 的结果一致（在三个固定的层上："
              "两种头数，再加一个单头的层；还有一个新抽取的层）。"},
    "ch04.fix.unchanged": {
        "en": "{where}: this is still what the buggy function computes: read its view lines again and ask which "
              "numbers end up in head 0's row for token 0",
        "zh": "{where}：这仍是有 bug 的函数算出的结果：再读一遍它的 view 那几行，想一想第 0 个头里第 0 个词元的那一行"
              "装的是哪些数"},
    "ch04.fix.split_left": {
        "en": "{where}: the merge is fixed, the split is not: the heads are still cut out of the wrong numbers",
        "zh": "{where}：合并改对了，切分还没有：头仍是从错误的数里切出来的"},
    "ch04.fix.merge_left": {
        "en": "{where}: the split is fixed, the merge is not: the heads must be put back in their tokens' places "
              "before the reshape",
        "zh": "{where}：切分改对了，合并还没有：reshape 之前，得先把各个头放回它们词元的位置"},
    "ch04.fix.no_source": {
        "en": "the checker cannot read your function's source: define fixed_multihead with def in a cell (a copy "
              "of the buggy function with its wrong lines fixed)",
        "zh": "检查器读不到你的函数的源代码：请在单元格里用 def 定义 fixed_multihead（把有 bug 的函数复制过来，"
              "改掉其中错的几行）"},
    "ch04.fix.rewritten": {
        "en": "the output is right, but this is not the buggy function fixed: {missing} of its {total} lines that "
              "have no bug are not in yours (renaming a variable is fine). The bug hunt asks you to copy the buggy "
              "function and change only its wrong lines (a layer written anew, such as exercise 3's, does not show "
              "that the bug was found)",
        "zh": "输出是对的，但这不是改好的那个有 bug 的函数：它没有 bug 的 {total} 行里，有 {missing} 行没有出现在"
              "你的函数里（改个变量名没关系）。找 bug 这一题要你把有 bug 的函数复制过来，只改错的几行"
              "（重新写一个层，比如第 3 题的答案，说明不了你找到了 bug）"},
    "ch04.fix.early_return": {
        "en": "the output is right, but your function returns before (or instead of) the buggy function's last "
              "line: keep its single return at the end and fix the lines above it",
        "zh": "输出是对的，但你的函数在有 bug 的函数的最后一行之前（或者代替它）就返回了："
              "保留末尾那唯一的 return，改它上面的几行"},
    "ch04.fix.passed": {
        "en": "fixed: view(B, L, H, E) then transpose(1, 2) for q, k and v, and transpose back before the reshape; "
              "the rest of the function was right.",
        "zh": "改好了：q、k、v 都先 view(B, L, H, E) 再 transpose(1, 2)，reshape 之前再转置回来；"
              "函数的其余部分本来就是对的。"},
    "ch04.count.not_int": {
        "en": "return the number of parameters as a whole number (an int; a float such as 360.0 is fine too), got "
              "{type} ({value})",
        "zh": "参数个数应以整数返回（int；像 360.0 这样的浮点数也可以），得到的是 {type}（{value}）"},
    "ch04.count.layout": {
        "en": "for embed_dim={d}, num_heads={h}, num_kv_heads={hkv}, bias={bias}",
        "zh": "当 embed_dim={d}、num_heads={h}、num_kv_heads={hkv}、bias={bias} 时"},
    "ch04.count.full_kv": {
        "en": "{layout}: {result} counts full-size k_proj and v_proj; with {hkv} key/value heads they map {d} -> "
              "{kv} features, not {d}",
        "zh": "{layout}：{result} 把 k_proj 和 v_proj 按满尺寸计算了；只有 {hkv} 个键/值头时，"
              "它们把 {d} 个特征映射为 {kv} 个，而不是 {d} 个"},
    "ch04.count.kv_times_d": {
        "en": "{layout}: k_proj and v_proj counted with {hkv}·{d} outputs; a key/value head has head_dim = "
              "embed_dim / num_heads features, so they map {d} -> {kv}",
        "zh": "{layout}：k_proj 和 v_proj 按 {hkv}·{d} 个输出计算了；一个键/值头只有 head_dim = embed_dim / num_heads "
              "个特征，所以它们把 {d} 个特征映射为 {kv} 个"},
    "ch04.count.no_bias": {
        "en": "{layout}: the four biases are missing ({n} parameters)",
        "zh": "{layout}：漏掉了四个偏置（共 {n} 个参数）"},
    "ch04.count.bias_counted": {
        "en": "{layout}: with bias=False the projections have no biases: count the weights only",
        "zh": "{layout}：bias=False 时各个投影没有偏置：只数权重"},
    "ch04.count.no_output": {
        "en": "{layout}: the output projection o_proj (D×D, plus its bias) is missing",
        "zh": "{layout}：漏掉了输出投影 o_proj（D×D，外加它的偏置）"},
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
    "ch04.ablation.not_a_run": {
        "en": "pass the trained run (ht.train_filter(...)), got {type}",
        "zh": "应传入训练好的 run（ht.train_filter(...)），得到的是 {type}"},
    "ch04.ablation.not_trained": {
        "en": "this run is not one that ht.train_filter(...) returned in this session, or it was changed since "
              "(its weights, held-out data or R²): train it with ht.train_filter(...) and pass it as it came",
        "zh": "这个 run 不是本次会话中 ht.train_filter(...) 返回的，或者之后被改动过（权重、留出数据或 R²）："
              "请用 ht.train_filter(...) 训练，并原样传入"},
    "ch04.ablation.no_prediction": {
        "en": "no prediction recorded: before the ablation runs, record the head (0 .. {last}) you expect to "
              "matter most with predict(\"{key}\", head)",
        "zh": "还没有记录预测：在消融实验运行之前，先用 predict(\"{key}\", head) 记下你认为最重要的头（0 .. {last}）"},
    "ch04.ablation.bad_prediction": {
        "en": "your recorded prediction must be a head index 0 .. {last}, got {got}",
        "zh": "你记录的预测应是 0 .. {last} 之间的头编号，得到的是 {got}"},
    "ch04.ablation.length": {
        "en": "return a list of {n} numbers, one R² per removed head (the run you are given decides how many heads)",
        "zh": "应返回由 {n} 个数组成的列表，每去掉一个头对应一个 R²（头数由传给你的 run 决定）"},
    "ch04.ablation.nothing_removed": {
        "en": "every value equals the full model's R²: the mask removed nothing (a head is removed by a 0 at its "
              "index, e.g. 1 - torch.eye(H)[h])",
        "zh": "每个值都等于完整模型的 R²：掩码什么也没去掉（要去掉一个头，得在它的位置上放 0，"
              "例如 1 - torch.eye(H)[h]）"},
    "ch04.ablation.kept_one": {
        "en": "you kept one head and removed the others (torch.eye(H)[h]); the ablation removes one head and keeps "
              "the rest (1 - torch.eye(H)[h]). head_mask multiplies each head's output: 1 (or True) keeps a head, "
              "0 (or False) removes it, so a boolean mask with True meaning 'remove' does the opposite",
        "zh": "你保留了一个头、去掉了其余的头（torch.eye(H)[h]）；消融实验是去掉一个头、保留其余的头"
              "（1 - torch.eye(H)[h]）。head_mask 是乘在每个头的输出上的：1（或 True）保留这个头，0（或 False）"
              "去掉它，所以用 True 表示“去掉”的布尔掩码恰好相反"},
    "ch04.ablation.differs": {
        "en": "your values differ from R² with one head masked, on the run the checker gave your function; compute "
              "them from that run, with run.score(head_mask)",
        "zh": "在检查器交给你的函数的那个 run 上，你的数值与用掩码去掉一个头后的 R² 不符；"
              "请用那个 run 的 run.score(head_mask) 计算"},
    "ch04.ablation.passed_predicted": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); your prediction was "
              "right.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；你的预测是对的。"},
    "ch04.ablation.passed_surprised": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); you predicted head "
              "{predicted}, the data say head {worst}.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；你预测的是第 {predicted} 个头，"
              "数据说是第 {worst} 个。"},
    "ch04.ablation.passed_late": {
        "en": "removing head {worst} costs the most (R² {without:.2f} instead of {full:.2f}); your prediction was "
              "recorded after this result had been shown, so it is not compared.",
        "zh": "去掉第 {worst} 个头损失最大（R² 从 {full:.2f} 降到 {without:.2f}）；"
              "你的预测是在这个结果显示之后才记录的，所以不作比较。"},
}

register(MESSAGES)
