"""whileai's version: one leaf module, so a target can name it in the files it writes without importing
the package's public names."""

__version__ = "0.1.0"
