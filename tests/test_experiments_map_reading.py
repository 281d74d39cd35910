"""Chapter 6.1 experiments: special-token shares on the packaged model, the trigger classifier."""

import torch

from helpers.experiments import map_reading as mr


def test_trigger_batches_hold_exactly_one_trigger_at_the_given_position():
    tokens, labels, positions = mr.trigger_batches(0, batch=50)
    assert (tokens[:, 0] == mr.CLS_ID).all()
    is_trigger = (tokens == mr.TRIGGERS[0]) | (tokens == mr.TRIGGERS[1])
    assert (is_trigger.sum(1) == 1).all()
    assert torch.equal(is_trigger.float().argmax(1), positions)
    assert torch.equal((tokens[torch.arange(50), positions] == mr.TRIGGERS[0]).long(), labels)


def test_attributions_shapes_and_cls_excluded():
    run = mr.train_trigger_classifier(0, steps=5)
    tokens, labels, _ = mr.trigger_batches(1, batch=4)
    scores = mr.attributions(run.model, tokens, labels)
    assert set(scores) == {"attention", "rollout", "occlusion", "gradient x input"}
    for value in scores.values():
        assert value.shape == (4, 12) and torch.isinf(value[:, 0]).all()
    agreement = mr.attribution_agreement(run, batch=20)
    assert all(0.0 <= v <= 1.0 for v in agreement.values())


def test_special_token_shares_of_an_untrained_model_are_near_uniform():
    from helpers.viz import load_attention_model

    model, tokenizer = load_attention_model()
    shares = mr.special_token_shares(mr.random_like(model), tokenizer, mr.SENTENCES[:2])
    assert set(shares) == {"cls", "sep", "punct", "cls_norm", "sep_norm", "punct_norm"}
    lengths = [len(tokenizer(s)["input_ids"]) for s in mr.SENTENCES[:2]]
    uniform = sum(1 / n for n in lengths) / 2
    assert (shares["cls"] - uniform).abs().max() < 0.02
