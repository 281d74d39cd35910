"""Chapter 6.1–6.2's exercise checkers: accept the reference solutions (and correct answers in another
style), reject the typical mistakes by name, and reject answers that delegate to the package's own
implementation (by any route), to a third-party equivalent, to private state or to a result made
elsewhere."""

import math

import pytest
import torch
from torch.distributions import Categorical

from exercise_routes import delegating_routes
from helpers.blocks import TransformerBlock
from helpers.diagnostics import attention_entropy, attention_rollout
from helpers.exercises import ch06_training as ex
from helpers.exercises import predictions
from helpers.exercises.cases import Case
from helpers.exercises.training import pre_ln
from helpers.experiments import training_failures as tf

# ------------------------------------------------------------------ exercise 1: entropy per head


def masked_weights(scores, mask):
    return torch.softmax(scores.masked_fill(~mask[:, None, None, :], float("-inf")), dim=-1)


def entropy(scores, mask):  # the lab's solution
    p = masked_weights(scores.float(), mask)
    return -torch.special.xlogy(p, p).sum(-1).mean(-1)


def entropy_loops(scores, mask):  # another style: loops, and only the entries with p > 0
    batch, heads, length, _ = scores.shape
    out = torch.zeros(batch, heads)
    for b in range(batch):
        real = scores[b].float()[..., mask[b]]  # (H, L, S_real), in float32
        p = torch.softmax(real, dim=-1)
        for h in range(heads):
            total = 0.0
            for row in p[h]:
                kept = row[row > 0]
                total += float(-(kept * kept.log()).sum())
            out[b, h] = total / length
    return out


def test_entropy_checker_accepts_scratch_answers_on_fresh_inputs():
    for _ in range(5):
        assert ex.check_head_entropy(entropy).passed
    assert ex.check_head_entropy(entropy_loops).passed


def test_entropy_checker_names_each_mistake():
    bits = ex.check_head_entropy(lambda s, m: entropy(s, m) / math.log(2))
    assert not bits.passed and "bits" in bits.message and "nats" in bits.message

    def no_mask(s, m):
        p = torch.softmax(s, dim=-1)
        return -torch.special.xlogy(p, p).sum(-1).mean(-1)

    verdict = ex.check_head_entropy(no_mask)
    assert not verdict.passed and "mask is missing" in verdict.message and "padded key" in verdict.message

    def nan(s, m):
        p = masked_weights(s, m)
        return -(p * p.log()).sum(-1).mean(-1)

    assert "0 log 0" in ex.check_head_entropy(nan).message
    assert "inverted" in ex.check_head_entropy(lambda s, m: entropy(s, ~m)).message
    assert "after the softmax" in ex.check_head_entropy(
        lambda s, m: -torch.special.xlogy(p := torch.softmax(s, -1) * m[:, None, None, :], p).sum(-1).mean(-1)).message
    assert "per query" in ex.check_head_entropy(
        lambda s, m: -torch.special.xlogy(p := masked_weights(s, m), p).sum(-1)).message
    assert "sign is wrong" in ex.check_head_entropy(lambda s, m: -entropy(s, m)).message
    assert "summed" in ex.check_head_entropy(lambda s, m: entropy(s, m) * s.shape[2]).message
    assert "normalised" in ex.check_head_entropy(lambda s, m: entropy(s, m) / math.log(s.shape[-1])).message
    assert "stub" in ex.check_head_entropy(lambda s, m: (_ for _ in ()).throw(NotImplementedError)).message


def test_entropy_checker_names_the_hard_cases_zero_weights_of_real_keys_and_a_finite_mask():
    def real_keys_only(s, m):  # 0 log 0 handled for padded keys only: +-1000 scores give real keys weight 0
        p = masked_weights(s, m)
        terms = torch.where(m[:, None, None, :], p * p.log(), torch.zeros_like(p))
        return -terms.sum(-1).mean(-1)

    verdict = ex.check_head_entropy(real_keys_only)
    assert not verdict.passed and "+-1000" in verdict.message and "real key" in verdict.message

    def finite_mask(s, m):  # -1000 for the padded keys: a +-1000 score outweighs it
        p = torch.softmax(s.masked_fill(~m[:, None, None, :], -1000.0), dim=-1)
        return -torch.special.xlogy(p, p).sum(-1).mean(-1)

    verdict = ex.check_head_entropy(finite_mask)
    assert not verdict.passed and "+-1000" in verdict.message and "-inf" in verdict.message


def test_entropy_checker_names_a_softmax_in_half_precision():
    def half(s, m):  # no .float(): the softmax and the log run in the input's float16
        p = torch.softmax(s.masked_fill(~m[:, None, None, :], float("-inf")), dim=-1)
        return -torch.special.xlogy(p, p).sum(-1).mean(-1)

    verdict = ex.check_head_entropy(half)
    assert not verdict.passed and "float16" in verdict.message and "float32" in verdict.message


def test_entropy_checker_draws_fresh_inputs_so_a_table_of_answers_fails():
    seen = {}

    def recorder(s, m):
        seen[len(seen)] = (s.clone(), m.clone())
        return entropy(s, m)

    assert ex.check_head_entropy(recorder).passed
    table = {tuple(s.flatten()[:4].tolist()): entropy(s, m) for s, m in seen.values()}
    verdict = ex.check_head_entropy(lambda s, m: table.get(tuple(s.flatten()[:4].tolist()), torch.zeros(1)))
    assert not verdict.passed


def test_entropy_checker_rejects_the_package_and_torch_distributions_by_any_route():
    verdict = ex.check_head_entropy(lambda s, m: attention_entropy(masked_weights(s, m)))
    assert not verdict.passed and "helpers.attention_entropy" in verdict.message
    for route, answer in delegating_routes(attention_entropy,
                                           lambda f, s, m: f(masked_weights(s, m))).items():
        verdict = ex.check_head_entropy(answer)
        assert not verdict.passed and "helpers.attention_entropy" in verdict.message, route

    def categorical(s, m):
        return Categorical(logits=s.masked_fill(~m[:, None, None, :], float("-inf"))).entropy().mean(-1)

    verdict = ex.check_head_entropy(categorical)
    assert not verdict.passed and "torch.distributions" in verdict.message
    for route, answer in delegating_routes(Categorical, lambda f, s, m: f(probs=masked_weights(s, m))
                                           .entropy().mean(-1)).items():
        verdict = ex.check_head_entropy(answer)
        assert not verdict.passed and "torch.distributions" in verdict.message, route


# ------------------------------------------------------------------ exercise 3: attention rollout


def rollout(attentions):  # the lab's solution
    result = None
    for layer in attentions:
        a = layer.float().mean(dim=1)  # (B, L, L)
        a = 0.5 * a + 0.5 * torch.eye(a.shape[-1])
        a = a / a.sum(dim=-1, keepdim=True)
        result = a if result is None else a @ result
    return result


def rollout_einsum(attentions):  # another style: A + I renormalised, einsum, the product built from the top
    stack = torch.stack(attentions).float()  # (N, B, H, L, L)
    fused = stack.sum(2) / stack.shape[2] + torch.eye(stack.shape[-1])
    fused = fused / fused.sum(-1, keepdim=True)
    result = fused[-1]
    for layer in reversed(range(len(attentions) - 1)):
        result = torch.einsum("bij,bjk->bik", result, fused[layer])
    return result


def test_rollout_checker_accepts_scratch_answers_on_fresh_weights():
    for _ in range(5):
        assert ex.check_rollout(rollout).passed
    assert ex.check_rollout(rollout_einsum).passed


def variant(attentions, *, residual=True, renormalise=True, order="right", fusion="mean", keep=None):
    layers = attentions if keep is None else [attentions[keep]]
    result = None
    for layer in layers:
        a = layer.mean(1) if fusion == "mean" else layer.amax(1)
        if residual:
            a = 0.5 * a + 0.5 * torch.eye(a.shape[-1])
        if renormalise:
            a = a / a.sum(-1, keepdim=True)
        result = a if result is None else (a @ result if order == "right" else result @ a)
    return result


def test_rollout_checker_names_each_mistake():
    cases = {
        "residual connection is missing": lambda a: variant(a, residual=False, renormalise=False),
        "NaN or inf": lambda a: variant(a, residual=False),  # the fully masked row divided by 0
        "not renormalised": lambda a: variant(a, renormalise=False),
        "wrong order": lambda a: variant(a, order="left"),
        "last layer's map alone": lambda a: variant(a, keep=-1),
        "first layer's map alone": lambda a: variant(a, keep=0),
        "maximum": lambda a: variant(a, fusion="max"),
        "transpose": lambda a: rollout(a).transpose(-2, -1),
        "one map per head": lambda a: torch.stack(a).mean(0),
        "A + I": lambda a: variant([w + torch.eye(w.shape[-1]) for w in a], residual=False, renormalise=False),
        "stub": lambda a: (_ for _ in ()).throw(NotImplementedError),
    }
    for expected, answer in cases.items():
        verdict = ex.check_rollout(answer)
        assert not verdict.passed and expected in verdict.message, (expected, verdict.message)


def test_rollout_checker_rejects_the_package_function_by_any_route():
    verdict = ex.check_rollout(attention_rollout)
    assert not verdict.passed and "helpers.attention_rollout" in verdict.message
    for route, answer in delegating_routes(attention_rollout).items():
        verdict = ex.check_rollout(answer)
        assert not verdict.passed and "helpers.attention_rollout" in verdict.message, route


# ------------------------------------------------------------------ exercise 4: the LayerNorm bug hunt


def fixed_block(block, x):  # the lab's solution
    x = x + block.self_attn(block.self_attn_norm(x))[0]
    return x + block.ffn(block.ffn_norm(x))


def fixed_block_functional(block, x):  # another style: layer_norm by hand, with the norms' parameters
    def norm(layer, h):
        return torch.nn.functional.layer_norm(h, h.shape[-1:], layer.weight, layer.bias, layer.eps)

    attended, _ = block.self_attn(norm(block.self_attn_norm, x))
    x = attended + x
    return block.ffn(norm(block.ffn_norm, x)) + x


def test_pre_ln_checker_accepts_the_fix_on_fresh_blocks():
    for _ in range(3):
        assert ex.check_pre_ln_fix(fixed_block).passed
    assert ex.check_pre_ln_fix(fixed_block_functional).passed


def test_pre_ln_checker_says_what_each_misplaced_norm_does():
    bug = ex.check_pre_ln_fix(ex.buggy_pre_ln_block)
    assert not bug.passed and "residual stream itself" in bug.message and "identity path" in bug.message

    def copied_bug(block, x):
        x = block.self_attn_norm(x)
        x = x + block.self_attn(x)[0]
        x = block.ffn_norm(x)
        return x + block.ffn(x)

    assert "residual stream itself" in ex.check_pre_ln_fix(copied_bug).message

    def post_ln(block, x):
        x = block.self_attn_norm(x + block.self_attn(x)[0])
        return block.ffn_norm(x + block.ffn(x))

    assert "Post-LN" in ex.check_pre_ln_fix(post_ln).message

    def half(block, x):
        x = x + block.self_attn(block.self_attn_norm(x))[0]
        x = block.ffn_norm(x)
        return x + block.ffn(x)

    verdict = ex.check_pre_ln_fix(half)
    assert "feed-forward sub-layer normalises the residual stream" in verdict.message
    assert "attention sub-layer" not in verdict.message

    def swapped(block, x):
        x = x + block.self_attn(block.ffn_norm(x))[0]
        return x + block.ffn(block.self_attn_norm(x))

    assert "swapped" in ex.check_pre_ln_fix(swapped).message

    def no_norm(block, x):
        x = x + block.self_attn(x)[0]
        return x + block.ffn(x)

    assert "does not normalise" in ex.check_pre_ln_fix(no_norm).message


def test_pre_ln_checker_rejects_the_block_itself_by_any_route():
    verdict = ex.check_pre_ln_fix(lambda block, x: block(x).hidden)
    assert not verdict.passed and "helpers.TransformerBlock" in verdict.message
    for route, answer in delegating_routes(TransformerBlock.forward, lambda f, b, x: f(b, x).hidden).items():
        verdict = ex.check_pre_ln_fix(answer)
        assert not verdict.passed and "helpers.TransformerBlock" in verdict.message, route


def test_pre_ln_checker_refuses_pytorchs_own_pre_ln_layer_holding_the_blocks_weights():
    def torch_layer(block, x):  # the same block, built from PyTorch's layer instead of written
        width = x.shape[-1]
        layer = torch.nn.TransformerEncoderLayer(width, block.self_attn.num_heads, dropout=0.0, batch_first=True,
                                                 dim_feedforward=block.ffn.linear1.out_features, norm_first=True)
        attn = block.self_attn
        with torch.no_grad():
            layer.eval().self_attn.in_proj_weight.copy_(torch.cat([attn.q_proj.weight, attn.k_proj.weight,
                                                                   attn.v_proj.weight]))
            layer.self_attn.in_proj_bias.copy_(torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]))
            layer.self_attn.out_proj.load_state_dict(attn.o_proj.state_dict())
            layer.norm1.load_state_dict(block.self_attn_norm.state_dict())
            layer.norm2.load_state_dict(block.ffn_norm.state_dict())
            layer.linear1.load_state_dict(block.ffn.linear1.state_dict())
            layer.linear2.load_state_dict(block.ffn.linear2.state_dict())
        return layer(x)

    block, x = pre_ln.fresh_block(Case("a block", pre_ln.CASES[0][1], torch.Generator().manual_seed(3)))
    with torch.no_grad():  # the route is a right answer when nothing watches it
        torch.testing.assert_close(torch_layer(block, x), block(x).hidden, rtol=1e-4, atol=1e-5)
    verdict = ex.check_pre_ln_fix(torch_layer)
    assert not verdict.passed and "torch.nn" in verdict.message, verdict.message


# ------------------------------------------------------------------ exercise 2: broken heads


def find_heads(run):  # the lab's solution
    table = run.entropy_table()  # (P, N, H)
    heads = run.num_heads
    collapsed = divmod(int(table[0].argmin()), heads)  # one-hot before training
    dead = divmod(int(table.min(0).values.argmax()), heads)  # uniform at every probe
    return collapsed, dead


def find_heads_loops(run):  # another style: loops over the list of probes
    first = run.head_entropy[0]
    cells = [(n, h) for n in range(run.num_layers) for h in range(run.num_heads)]
    collapsed = min(cells, key=lambda c: float(first[c]))
    dead = max(cells, key=lambda c: min(float(e[c]) for e in run.head_entropy))
    return collapsed, dead


@pytest.mark.slow
def test_broken_heads_checker_accepts_the_monitor_reading_and_names_the_confusions():
    run = ex.train_broken_heads(0)
    assert run.loss[-1] < 0.1 * tf.CHANCE  # the model still learns the task with two broken heads
    verdict = ex.check_broken_heads(find_heads, run)
    assert verdict.passed and "fresh run" in verdict.message, verdict.message
    assert ex.check_broken_heads(find_heads_loops, run).passed
    assert "swapped" in ex.check_broken_heads(lambda r: find_heads(r)[::-1], run).message

    def lowest_at_the_end(r):
        return divmod(int(r.entropy_table()[-1].argmin()), r.num_heads), find_heads(r)[1]

    verdict = ex.check_broken_heads(lowest_at_the_end, run)
    assert not verdict.passed and "learnt the task" in verdict.message and "not a collapse" in verdict.message

    def highest_at_the_end(r):
        table = r.entropy_table()[-1].clone()
        collapsed, dead = find_heads(r)
        table[dead] = -1  # any head but the dead one
        return collapsed, divmod(int(table.argmax()), r.num_heads)

    assert "is not dead" in ex.check_broken_heads(highest_at_the_end, run).message
    assert "(layer, head)" in ex.check_broken_heads(lambda r: 3, run).message
    assert "stub" in ex.check_broken_heads(lambda r: (_ for _ in ()).throw(NotImplementedError), run).message


@pytest.mark.slow
def test_broken_heads_checker_refuses_typed_answers_private_state_the_weights_and_the_package():
    run = ex.train_broken_heads(0)
    typed = find_heads(run)
    verdict = ex.check_broken_heads(lambda r: typed, run)  # answers typed for the lab's run only
    assert not verdict.passed and "fresh run" in verdict.message
    verdict = ex.check_broken_heads(lambda r: (r._collapsed, r._dead), run)  # private state: there is none
    assert not verdict.passed and "_collapsed" in verdict.message and "stored nowhere" in verdict.message

    def from_weights(r):  # the dead head's queries are zero: reads the weights, not the monitor
        rows = r.model.attns[0].q_proj.weight
        return (0, 0), (0, int(rows.abs().sum(1).argmin()) // 8)

    verdict = ex.check_broken_heads(from_weights, run)
    assert not verdict.passed and "run.model is None" in verdict.message
    verdict = ex.check_broken_heads(lambda r: find_heads(ex.train_broken_heads(r.seed)), run)
    assert not verdict.passed and "train_broken_heads" in verdict.message
    for route, answer in delegating_routes(ex.train_broken_heads, lambda f, r: find_heads(f(r.seed))).items():
        verdict = ex.check_broken_heads(answer, run)
        assert not verdict.passed and "train_broken_heads" in verdict.message, route
    assert "train_broken_heads" in ex.check_broken_heads(find_heads, "run 0").message


def test_broken_heads_are_not_stored_in_the_run_and_can_be_chosen():
    with pytest.raises(ValueError, match="same head twice"):
        ex.train_broken_heads(0, broken=((0, 1), (0, 1)))
    with pytest.raises(ValueError, match="layer in 0..1"):
        ex.train_broken_heads(0, broken=((2, 1), (0, 1)))
    fields = {f.name for f in ex.BrokenHeadsRun.__dataclass_fields__.values()}
    assert not any(name.startswith("_") for name in fields)


@pytest.mark.slow
def test_the_lab_solution_finds_the_broken_heads_of_random_runs():
    gen = torch.Generator().manual_seed(5)
    for _ in range(4):
        order = torch.randperm(8, generator=gen).tolist()
        truth = divmod(order[0], 4), divmod(order[1], 4)
        seed = int(torch.randint(1_000, 10**6, (1,), generator=gen))
        assert find_heads(ex.train_broken_heads(seed, broken=truth)) == truth, (seed, truth)


# ------------------------------------------------------------------ exercise 5: rescue Post-LN


LOWER_LR = {**ex.FAILING_SETTINGS, "lr": 1e-2}  # the lab's solution


@pytest.fixture
def predicted():
    predictions._forget()
    yield lambda value: ex.predict(ex.WARMUP_PREDICTION, value)
    predictions._forget()


def test_post_ln_fix_checker_refuses_before_training_without_a_prediction_or_with_bad_settings(predicted):
    verdict = ex.check_post_ln_fix(LOWER_LR, "a")
    assert not verdict.passed and "first record your prediction" in verdict.message
    predicted("yes")
    assert "must be True" in ex.check_post_ln_fix(LOWER_LR, "a").message
    predicted(False)
    fake = tf.RunResult(False, 1e-2, 0, 0, None, [0.1] * 80, [1.0] * 80, False)  # a hand-built result
    verdict = ex.check_post_ln_fix(fake, "a")
    assert not verdict.passed and "trains your settings itself" in verdict.message
    assert "as a dict" in ex.check_post_ln_fix(0.1, "a").message
    old_style = ex.check_post_ln_fix(lambda seed: tf.train_lag_model(norm_first=False, lr=1e-2, seed=seed), "a")
    assert not old_style.passed and "as a dict" in old_style.message  # a function that returns its own result
    assert "unknown setting" in ex.check_post_ln_fix({"lr": 1e-2, "num_layers": 1}, "a").message
    assert "160" in ex.check_post_ln_fix({"steps": 1000}, "a").message  # more steps: within the budget
    assert "80" in ex.check_post_ln_fix({"steps": 20, "lr": 1e-2}, "a").message  # no fewer than the failing run
    assert "lr=0.0" in ex.check_post_ln_fix({"lr": 0.0}, "a").message
    for name, allowed in ex.SETTING_RANGES.items():  # the stated ranges are the ones the messages give
        assert allowed in ex.check_post_ln_fix({name: "x"}, "a").message, name
    assert "one of the stated mechanisms" in ex.check_post_ln_fix(LOWER_LR, "the learning rate, lr lr lr").message
    assert "one of the stated mechanisms" in ex.check_post_ln_fix(LOWER_LR, "学习率学习率").message
    assert "at least 2" in ex.check_post_ln_fix(LOWER_LR, "a", seeds=(0,)).message
    assert "at least 2" in ex.check_post_ln_fix(LOWER_LR, "a", seeds=(0, 0)).message
    assert "failing run's" in ex.check_post_ln_fix(dict(ex.FAILING_SETTINGS), "a").message


@pytest.mark.slow
def test_post_ln_fix_checker_trains_the_settings_grades_the_mechanism_and_the_prediction(predicted):
    predicted(False)
    verdict = ex.check_post_ln_fix(LOWER_LR, "a")
    assert verdict.passed and "prediction (False) was right" in verdict.message, verdict.message
    assert "learning rate (a)" in verdict.message
    predicted(True)
    verdict = ex.check_post_ln_fix(LOWER_LR, "A")
    assert verdict.passed and "recorded after this result had been shown" in verdict.message
    predictions._forget()
    predicted(True)
    assert "prediction (True) was wrong" in ex.check_post_ln_fix(LOWER_LR, "a").message
    wrong = {"b": "clipping caps", "e": "stuck at chance", "c": "does not change", "d": "does not change"}
    for choice, expected in wrong.items():
        verdict = ex.check_post_ln_fix(LOWER_LR, choice)
        assert not verdict.passed and expected in verdict.message, (choice, verdict.message)
    clipped = ex.check_post_ln_fix({"clip_grad_norm": 0.5}, "b")
    assert not clipped.passed and "Clipping alone" in clipped.message
    longer = ex.check_post_ln_fix({"steps": 160}, "e")
    assert not longer.passed and "More steps alone" in longer.message


@pytest.mark.slow
def test_post_ln_fix_checker_measures_each_of_several_changes_alone(predicted):
    predicted(False)
    both = {"norm_first": True, "warmup_steps": 30}
    verdict = ex.check_post_ln_fix(both, "d")
    assert verdict.passed and "one at a time" in verdict.message and "warmup_steps=30 alone" in verdict.message
    verdict = ex.check_post_ln_fix({"lr": 1e-2, "clip_grad_norm": 0.5}, "a")
    assert verdict.passed and "clip_grad_norm=0.5 alone trains 0 of 2" in verdict.message
    verdict = ex.check_post_ln_fix({"lr": 1e-2, "norm_first": True}, "d")
    if "norm_first=True alone trains 2 of 2" not in verdict.message:  # Pre-LN alone fails a seed: lr did it
        assert not verdict.passed and "that is the one that did it" in verdict.message
