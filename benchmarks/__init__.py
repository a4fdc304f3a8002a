"""The benchmarks, and the generated streams they share with the tests.

Rules this package owns: its modules import each other as ``benchmarks.<module>``, never by a
bare name. A script is run as ``python benchmarks/<script>.py`` (docs/benchmarks.md): it puts
the repository first on ``sys.path`` itself, one line before its first ``benchmarks`` import.
The tests import the generators (``messages``, ``v1_messages``, ``floods``) with the
repository on the path through pytest's ``pythonpath`` (pyproject.toml), and never change
``sys.path`` themselves (tests/project/test_layout.py). The generators import no sibling
and touch no ``sys.path``.
"""
