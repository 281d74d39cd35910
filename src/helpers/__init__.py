"""helpers: the package behind the book *Why Attention Works*.

Every mechanism, experiment and figure of the book lives here, one concept per module; the
book's chapters import it and show its source, so the code a reader sees is the code the tests
run. Tensor layout follows :func:`torch.nn.functional.scaled_dot_product_attention`:
query ``(B, H, L, E)``, key ``(B, H_kv, S, E)``, value ``(B, H_kv, S, Ev)``; modules take
``(B, L, D)``. Boolean masks: ``True`` means "may attend".

Modules (each public name is re-exported here):

- :mod:`helpers.scores` -- score functions: dot, scaled dot, cosine, distance, general, additive (chapter 2)
- :mod:`helpers.attention` -- masked softmax and scaled dot-product attention (chapter 3)
- :mod:`helpers.masks` -- boolean mask builders (chapter 5)
- :mod:`helpers.multihead` -- multi-head, grouped-query and multi-query attention (chapters 4, 6)
- :mod:`helpers.kv_cache` -- the KV caches (plain, rolling) and the protocol the layer asks a cache through (chapter 6)
- :mod:`helpers.positional` -- sinusoidal, learned, T5 relative, ALiBi, RoPE (chapter 6)
- :mod:`helpers.blocks` -- Transformer blocks (Pre-LN, Post-LN) (chapter 6)
- :mod:`helpers.models` -- tiny encoder, decoder, GPT-style and encoder-decoder models (chapters 4-6)
- :mod:`helpers.rnn` -- GRU encoder-decoder with and without attention (chapter 1)
- :mod:`helpers.efficient` -- sliding-window, block-sparse, BigBird, hierarchical attention (chapter 5)
- :mod:`helpers.efficient_linear` -- linear attention, Performer, Linformer (chapter 5)
- :mod:`helpers.llama` -- a Llama decoder from the package's parts: RMSNorm, SwiGLU, GQA, RoPE (chapter 7)
- :mod:`helpers.pretrained` -- the real models: SmolLM2-135M from its GGUF file, all-MiniLM-L6-v2 (chapters 4, 6, 7)
- :mod:`helpers.streaming` -- StreamingLLM's sink cache: first tokens + recent window, RoPE in the cache (chapter 6)
- :mod:`helpers.chunked` -- chunked, exact attention: FlashAttention's online softmax (chapter 6)
- :mod:`helpers.memory` -- gradient checkpointing, KV-cache size, allocation tracking (chapter 6)
- :mod:`helpers.vision` -- channel (SE) and spatial (CBAM) attention (chapter 5)
- :mod:`helpers.diagnostics` -- entropy, saturation, gradient norms, rollout (chapters 3, 6)
- :mod:`helpers.tasks`, :mod:`helpers.vision_tasks`, :mod:`helpers.train` -- seeded synthetic sequence and image
  tasks, and a small training loop
- :mod:`helpers.viz` -- Plotly figures, ipywidgets explorers, BertViz wrapper
- :mod:`helpers.exercises` -- checkers for the labs' exercises

Not re-exported: :mod:`helpers.checks`, the input checks every module shares; :mod:`helpers.seeding`, the one
place every seed comes from (``HELPERS_SEED_OFFSET``); :mod:`helpers.claims` (with :mod:`helpers.claim_text`), the
guards of the book's findings (``HELPERS_CLAIMS``); :mod:`helpers.language`, the reader's language;
:mod:`helpers.machine`, the CPU a timing was measured on (chapter 0, "How the book checks its claims").
"""

from .attention import *  # noqa: F401,F403
from .blocks import *  # noqa: F401,F403
from .chunked import *  # noqa: F401,F403
from .diagnostics import *  # noqa: F401,F403
from .efficient import *  # noqa: F401,F403
from .efficient_linear import *  # noqa: F401,F403
from .flash_backward import *  # noqa: F401,F403
from .kv_cache import *  # noqa: F401,F403
from .llama import *  # noqa: F401,F403
from .masks import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .models import *  # noqa: F401,F403
from .multihead import *  # noqa: F401,F403
from .positional import *  # noqa: F401,F403
from .pretrained import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rope_scaling import *  # noqa: F401,F403
from .scores import *  # noqa: F401,F403
from .streaming import *  # noqa: F401,F403
from .tasks import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .vision_tasks import *  # noqa: F401,F403

__version__ = "0.1.0"
