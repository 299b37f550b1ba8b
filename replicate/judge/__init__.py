"""Single-label judge runs: loading released files, aligning runs, four-cell figures.

- :mod:`replicate.judge.model`  — the in-memory values (runs, labelled runs)
- :mod:`replicate.judge.load`   — reading released files (I/O)
- :mod:`replicate.judge.align`  — aligning runs on shared items (pure)
- :mod:`replicate.judge.figures` — four-cell tables and every figure of design.md (pure)
"""
