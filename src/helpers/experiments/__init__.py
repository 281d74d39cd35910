"""The chapters' experiments, one module per chapter topic, built on the package's public API.

- :mod:`helpers.experiments.bottleneck` -- chapter 1 (RNN bottleneck, path length, parallelism)
- :mod:`helpers.experiments.similarity` -- chapter 2 (score functions: geometry, cost, stability, learning)
- :mod:`helpers.experiments.scaling` -- chapter 3 (variance of q.k, saturation, gradients, training)
"""
