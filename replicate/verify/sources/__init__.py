"""Claim sources: what a claim is computed from, and the part of the verification it gives.

Each source's part subclasses :class:`replicate.verify.part.Part`:

- :mod:`~replicate.verify.sources.runs`     — claims over judge runs (per parser column); the sections of the
  edges, floors and runs they touch: :mod:`~replicate.verify.sources.runs_sections`
- :mod:`~replicate.verify.sources.trials`   — claims over K-trial tables, recomputed or replicated
- :mod:`~replicate.verify.sources.rankings` — claims over system rankings (TREC runs under two qrels)

Each module holds its part: its results, its JSON and its note sections; metric
families of a source (``agreement.*`` over runs, ``costs.*`` over trials
tables, ``rankings.*``: :mod:`replicate.verify.sources.rankings_metrics`) are rows of
the one metric table (:mod:`replicate.verify.metrics`). Adding a source:
``docs/verify.md``, "Adding a claim source".
"""
