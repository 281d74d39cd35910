"""Chapter 7's figures drawn from made-up readings (no model): their layout, not the model's numbers."""

import torch

from helpers.experiments.llm_context import Reading
from helpers.figures import llm as fig


def _reading(tokens: list[str], layers: int = 4) -> Reading:
    weights = torch.softmax(torch.randn(layers, len(tokens), generator=torch.Generator().manual_seed(0)), dim=-1)
    return Reading(tokens=tokens, weights=weights, top=[(" pie", 0.5)], fruit=0.5, company=0.1)


def test_the_reading_figure_stacks_one_panel_a_prompt_each_titled_with_its_tokens():
    readings = [_reading(["Y", "esterday", " I", " ate", " an", " apple"]),
                _reading(["Y", "esterday", " I", " bought", " shares", " of", " apple"])]
    figure = fig.reading_figure(readings)
    heatmaps = [trace for trace in figure.data if trace.type == "heatmap"]
    assert [len(trace.x) for trace in heatmaps] == [6, 7]
    assert [list(trace.z[0]) for trace in heatmaps] == [
        [round(float(w), 3) for w in r.weights[0]] for r in readings]
    # one above the other: the same width, vertical domains that do not overlap
    first, second = figure.layout.yaxis.domain, figure.layout.yaxis2.domain
    assert figure.layout.xaxis.domain == figure.layout.xaxis2.domain == (0.0, 1.0)
    assert second[1] < first[0] or first[1] < second[0]
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert titles == ["Y esterday I ate an apple", "Y esterday I bought shares of apple"]


def test_the_reading_figure_slants_its_token_labels_to_end_at_their_tick():
    # Slanted the other way (plotly's automatic 30 degrees), the last token's label ran under the colour bar at 390 px.
    figure = fig.reading_figure([_reading(["a", " b"]), _reading(["a", " b", " c"])])
    assert figure.layout.xaxis.tickangle == figure.layout.xaxis2.tickangle == -45
