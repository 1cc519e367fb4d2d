"""dpkit: the command line over accountant, algorithms, audits and reports."""

__version__ = "0.1.0"
