"""The Chinese of the claims of chapter 7's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/07-llm/index.md
    "the file's q and k rows turned by halves give a model whose loss is over 0.1 nats higher":
        "把文件里的 q、k 行按两半配对旋转，得到的模型损失高出 0.1 nat 以上",
    "after 'ate' a fruit word is over ten times likelier than a company word, after 'shares of' a company word "
    "over twice likelier than a fruit word":
        "在“ate”之后，水果类词的概率是公司类词的十倍以上；在“shares of”之后，公司类词的概率是水果类词的两倍以上",
    "with the context words hidden from the query of ' apple', the two prompts predict nearly the same":
        "让“ apple”的查询看不到上下文词之后，两个提示的预测几乎相同",
    "the query of ' apple' puts over half its weight on the first token in at least half of the layers":
        "在至少一半的层里，“ apple”的查询把一半以上的权重放在第一个词元上",
    "the context words get under 0.4 of the query's weight, averaged over the layers":
        "对各层取平均，上下文词得到的权重不到这个查询的 0.4",
    "removing the four induction heads gives back over a fifth of what copying saves":
        "去掉这四个归纳头，会把复制省下的损失退回五分之一以上",
    "the median head's scaled scores spread with a standard deviation over 1.5, not the 1 of chapter 3's assumption":
        "中位数那个头的缩放分数标准差大于 1.5，而不是第 3 章假设的 1",
    "fewer than a tenth of the heads spread their scaled scores less than 1":
        "缩放分数标准差小于 1 的头不到十分之一",
    "in at least two thirds of the layers some head scores the first token over 3 above the other keys on average":
        "在至少三分之二的层里，有某个头给第一个词元的分数平均比其他键高 3 以上",
    "the top induction head puts over 0.7 of its weight on the token after the earlier copy":
        "最强的归纳头把 0.7 以上的权重放在前一份副本中对应词元的下一个词元上",
    "the strongest previous-token head (over 0.8) sits in an earlier layer than the four top induction heads":
        "最强的前一词元头（0.8 以上）所在的层早于最强的四个归纳头",
    "removing the four top induction heads raises the second copy's loss over three times as much as removing four "
    "random heads":
        "去掉最强的四个归纳头使第二份副本的损失上升的幅度，是去掉四个随机头时的三倍以上",
    "without them the second copy is still predicted better than the first (other heads copy too)":
        "去掉它们之后，第二份副本仍比第一份预测得好（别的头也在复制）",
    "changing a token moves the logits from its position on by over 1":
        "改变一个词元，会让从它的位置起的 logits 变化超过 1",
    "the first two layers put under 0.05 of their weight on the first token":
        "前两层放在第一个词元上的权重不到 0.05",
    "at least a third of the layers put over 0.3 of their weight on the first token, the heaviest over 0.4":
        "至少三分之一的层把 0.3 以上的权重放在第一个词元上，最多的一层超过 0.4",
    "the window alone costs over half a nat a token more than the window with one sink, in every text":
        "在每段文本上，只用窗口比窗口加一个汇点每个词元多花半个 nat 以上",
    "the sink recovers most of what the window alone loses against the full cache":
        "汇点找回了只用窗口相对完整缓存所损失的大部分",
    "one sink does as well as four (within 0.15 nats)":
        "一个汇点和四个一样好（相差不到 0.15 nat）",
}
