"""Shared test set-up."""

import torch

# The suite's tensors are tiny: one thread avoids the oversubscription that makes a 2-layer forward
# pass take ~500 ms instead of ~0.5 ms on a loaded 2-core machine. Results do not depend on it.
torch.set_num_threads(1)
