"""Environments, private RL algorithms and their release declarations (built on :mod:`dpkit.accountant`)."""
