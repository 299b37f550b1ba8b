"""Seeded synthetic data for tests, benchmarks and the fixture scripts under tools/ (not part of the package).

- :mod:`support.synth.trials`: K-trial tables (``synthetic_rows``, ``write_jsonl``, ``add_usage``);
- :mod:`support.synth.trials_study`: the worked trials study behind fixtures/trials-study;
- :mod:`support.synth.helm_runs`, :mod:`support.synth.inspect_logs`: HELM run directories and inspect_ai logs.

Benchmarks and tools put ``tests/`` on ``sys.path`` to import them.
"""
