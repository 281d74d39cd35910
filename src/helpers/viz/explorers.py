"""Live explorers for a running kernel (JupyterLab, Colab): ipywidgets controls over a figure.

Each explorer draws with the same function as the static figure (one drawing code path): on
every change it calls that function for the current setting and copies the new trace data into
a ``go.FigureWidget``. A static page has no kernel to run the callbacks, and a FigureWidget
draws nothing there; so while the book is built (:func:`helpers.viz.site.building_book`) an
explorer shows its static figure, with Plotly's own slider, instead of the widgets.

On Colab, the explorers turn on Colab's custom widget manager, which a ``FigureWidget`` (an
anywidget) needs. They need the ``anywidget`` package, as ``go.FigureWidget`` does since plotly 6.

Chapter 3 (``softmax_explorer``) and chapter 6 (``sentence_attention_explorer``); the labs use
both.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from IPython.display import display

from .. import seeding
from .bertviz import load_attention_model, sentence_attention
from .heatmaps import attention_heatmap
from .renderer import in_colab
from .site import building_book
from .softmax import softmax_temperature_explorer

__all__ = ["Explorer", "softmax_explorer", "sentence_attention_explorer", "softmax_scores"]

TEMPERATURES = np.round(np.geomspace(0.05, 20.0, 25), 4)
"""The temperature grid of :func:`softmax_explorer` (log-spaced; 1.0 is close to the middle)."""


class Explorer:
    """A live explorer: ipywidgets controls over a ``go.FigureWidget``, and a static fallback.

    The widgets are built on first use (displaying the explorer in a kernel, or reading
    :attr:`controls`, :attr:`figure` or :attr:`widget`); while the book is built none is
    created, so the page carries no widget state that a static site could not run.

    Attributes:
        values: The current setting, by control name (e.g. ``{"d_k": 64, ...}``).
    """

    def __init__(self, values: dict[str, Any], make_controls: Callable[[dict[str, Any]], dict[str, Any]],
                 draw: Callable[[dict[str, Any]], go.Figure], static: Callable[[dict[str, Any]], go.Figure],
                 caption: str) -> None:
        self.values = dict(values)
        self._make_controls = make_controls
        self._draw = draw
        self._static = static
        self._caption = caption
        self._built: dict[str, Any] | None = None

    def _build(self) -> dict[str, Any]:
        if self._built is None:
            import ipywidgets as widgets

            if in_colab():  # a FigureWidget is a third-party widget: Colab renders those only with this on
                from google.colab import output  # type: ignore[import-not-found]

                output.enable_custom_widget_manager()

            controls = self._make_controls(self.values)
            figure = go.FigureWidget(_frameless(self._draw(self.values)))
            status = widgets.HTML(value=self._caption)
            box = widgets.VBox([widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")),
                                status, figure])
            self._built = {"controls": controls, "figure": figure, "status": status, "widget": box}
            for name, control in controls.items():
                control.observe(lambda change, name=name: self._changed(name, change["new"]), names="value")
        return self._built

    def _changed(self, name: str, value: Any) -> None:
        previous = self.values[name]
        self.values[name] = value
        built = self._build()
        try:
            new = _frameless(self._draw(self.values))
        except ValueError as error:  # e.g. a sentence with too many tokens: say so, keep the figure
            self.values[name] = previous
            built["status"].value = f"<b>{html.escape(str(error))}</b>"
            return
        built["status"].value = self._caption
        _copy_figure(built["figure"], new)

    @property
    def controls(self) -> dict[str, Any]:
        """The control widgets by name."""
        return self._build()["controls"]

    @property
    def figure(self) -> go.FigureWidget:
        """The ``go.FigureWidget`` the controls update."""
        return self._build()["figure"]

    @property
    def status(self) -> Any:
        """The line of text under the controls (the caption, or what went wrong)."""
        return self._build()["status"]

    @property
    def widget(self) -> Any:
        """The whole explorer as one ``ipywidgets.VBox``."""
        return self._build()["widget"]

    def static_figure(self) -> go.Figure:
        """The static figure for the current setting (what the book's site shows)."""
        return self._static(self.values)

    def _ipython_display_(self) -> None:
        display(self.static_figure() if building_book() else self.widget)


def _copy_figure(target: go.FigureWidget, source: go.Figure) -> None:
    """Copies the traces and the layout of ``source`` into ``target``, in one redraw."""
    with target.batch_update():
        for mine, theirs in zip(target.data, source.data):
            mine.update(theirs.to_plotly_json(), overwrite=True)
        target.layout.update(source.layout.to_plotly_json(), overwrite=True)


def _frameless(fig: go.Figure) -> go.Figure:
    fig.frames = []
    fig.layout.sliders = []
    return fig


def softmax_scores(d_k: int, n_keys: int = 8, *, scaled: bool = True, seed: int = 0) -> torch.Tensor:
    """Scores ``q . k_j`` of one random query against ``n_keys`` random keys, entries ~ N(0, 1).

    Args:
        d_k: The dimension of queries and keys; ``Var(q . k) = d_k``.
        n_keys: How many keys.
        scaled: Divide by ``sqrt(d_k)`` (scaled dot-product attention) to bring the variance back to 1.
        seed: The random seed.

    Returns:
        The scores ``(n_keys,)``, float64.
    """
    if not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be a positive int, got {d_k!r}")
    generator = seeding.generator(seed)
    q = torch.randn(d_k, generator=generator, dtype=torch.float64)  # (E,)
    k = torch.randn(n_keys, d_k, generator=generator, dtype=torch.float64)  # (S, E)
    scores = k @ q  # (S, E) @ (E,) -> (S,)
    return scores / d_k**0.5 if scaled else scores


def softmax_explorer(*, n_keys: int = 8, seed: int = 0) -> Explorer:
    """Change ``d_k``, the scaling and the temperature; see the scores, the softmax and its entropy.

    Args:
        n_keys: How many keys the query is scored against.
        seed: The random seed of queries and keys.

    Returns:
        An :class:`Explorer` with controls ``"d_k"``, ``"scaled"`` and ``"temperature"``,
        drawn by :func:`helpers.viz.softmax_temperature_explorer`. Its static figure has a
        slider over the temperature at the current ``d_k``.
    """
    def controls(values: dict[str, Any]) -> dict[str, Any]:
        import ipywidgets as widgets

        return {
            "d_k": widgets.SelectionSlider(options=[2**i for i in range(11)], value=values["d_k"], description="d_k",
                                           continuous_update=False),
            "scaled": widgets.Checkbox(value=values["scaled"], description="divide by √d_k"),
            "temperature": widgets.SelectionSlider(options=[float(t) for t in TEMPERATURES],
                                                   value=values["temperature"], description="T",
                                                   continuous_update=False),
        }

    def draw(values: dict[str, Any]) -> go.Figure:
        scores = softmax_scores(values["d_k"], n_keys, scaled=values["scaled"], seed=seed)
        active = int(np.argmin(np.abs(TEMPERATURES - values["temperature"])))
        title = (f"d_k = {values['d_k']}, scores {'÷ √d_k' if values['scaled'] else 'not scaled'}: "
                 f"std {float(scores.std()):.2f}")
        return softmax_temperature_explorer(scores, TEMPERATURES, active=active, title=title)

    return Explorer({"d_k": 64, "scaled": False, "temperature": 1.0}, controls, draw, draw,
                    "Raise d_k without the scaling: the softmax saturates (one weight near 1).")


def sentence_attention_explorer(text: str = "The animal didn't cross the street because it was too tired.",
                                *, model_name: str | None = None, max_tokens: int = 32) -> Explorer:
    """Type a sentence, pick a layer and a head: the real model's attention as a heatmap.

    Args:
        text: The sentence shown first.
        model_name: ``None`` for all-MiniLM-L6-v2 (no network), or a Hub model name.
        max_tokens: The most tokens accepted.

    Returns:
        An :class:`Explorer` with controls ``"text"``, ``"layer"`` and ``"head"``, drawn by
        :func:`helpers.viz.attention_heatmap`; its static figure holds every layer (slider)
        and head (menu) of the current sentence.
    """
    model, tokenizer = load_attention_model(model_name)
    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads
    cache: dict[str, Any] = {}

    def attention(sentence: str) -> tuple[torch.Tensor, list[str]]:
        if cache.get("text") != sentence:
            weights, tokens, _ = sentence_attention(sentence, model=model, tokenizer=tokenizer,
                                                    max_tokens=max_tokens)
            cache.update(text=sentence, weights=weights, tokens=tokens)
        return cache["weights"], cache["tokens"]

    def controls(values: dict[str, Any]) -> dict[str, Any]:
        import ipywidgets as widgets

        return {
            "text": widgets.Text(value=values["text"], description="sentence", continuous_update=False,
                                 layout=widgets.Layout(width="100%")),
            "layer": widgets.Dropdown(options=list(range(n_layers)), value=values["layer"], description="layer"),
            "head": widgets.Dropdown(options=list(range(n_heads)), value=values["head"], description="head"),
        }

    def draw(values: dict[str, Any]) -> go.Figure:
        weights, tokens = attention(values["text"])
        layer, head = values["layer"], values["head"]
        return attention_heatmap(weights[layer, head], tokens, title=f"all-MiniLM-L6-v2, layer {layer}, head {head}")

    def static(values: dict[str, Any]) -> go.Figure:
        weights, tokens = attention(values["text"])
        return attention_heatmap(weights, tokens, title="all-MiniLM-L6-v2: pick a layer (slider) and a head (menu)",
                                 layer_names=[f"layer {i}" for i in range(n_layers)],
                                 head_names=[f"head {i}" for i in range(n_heads)])

    attention(text)  # a bad first sentence fails here, not later in a callback
    return Explorer({"text": text, "layer": 0, "head": 0}, controls, draw, static,
                    "Rows attend to columns; hover a cell for the pair of tokens.")
