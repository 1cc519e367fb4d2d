"""The commands of the ``dpkit`` command line, one module each (the ``audit`` command, a package of its own)."""
