"""Paper-figure experiments, parameter sweeps, the results store and plots (see the experiments
issue); the demo registry lives in :mod:`clusteropt.systems`.
"""
