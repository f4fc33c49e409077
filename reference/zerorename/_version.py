"""The package's version, defined once: ``reference/pyproject.toml`` reads it for the wheel's
metadata (``[tool.setuptools.dynamic]``), ``zerorename.__version__`` and ``zerorename --version``
re-export it, so what a pipeline pins and what the running code says cannot differ.  Bump it
with a new heading in CHANGELOG.md."""

__version__ = "0.2.0"
