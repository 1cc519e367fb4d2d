"""The commands of the ``dpkit`` command line, one module each."""
