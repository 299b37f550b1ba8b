"""Single-label judge runs: loading released files, aligning runs, counting their cells.

- :mod:`replicate.judge.model`  — the in-memory values (runs, labelled runs)
- :mod:`replicate.judge.load`   — reading released files (I/O)
- :mod:`replicate.judge.align`  — aligning runs on shared items (pure)
- :mod:`replicate.judge.pairs`  — the four cells of every ordered pair of aligned runs (pure);
  every figure of them is defined once in :mod:`replicate.stats.fourcell`
"""
