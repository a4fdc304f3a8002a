"""Fuzz targets (hypothesis) for the codec, the store, the bridges, the converters and the emitter.

Each ``test_fuzz_*`` module feeds one public component adversarial input built from real
messages (``corpus.py``: the example logs, the bundled demo session, the benchmark generators)
and asserts the invariants a user relies on (``invariants.py``). Example counts follow the
hypothesis profile: ``HYPOTHESIS_PROFILE=long pytest tests/fuzz`` runs 100 times the default.
The coverage-guided harness over the same invariants is ``fuzz/run.py`` at the repo root.
"""
