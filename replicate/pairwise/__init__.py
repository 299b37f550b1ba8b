"""Harness figures of LLM-judge benchmarks, computed as the harness computes them (pure).

- :mod:`~replicate.pairwise.mtbench`: MT-Bench's score, the mean single-answer
  rating per model (overall, turn 1, turn 2), as FastChat's ``show_result.py``
  defines it (``replicate mtbench``);
- :mod:`~replicate.pairwise.rules` and :mod:`~replicate.pairwise.tally`:
  pairwise judgments made in both orders (game 1, then the answers swapped),
  resolved by model, not by position, with the harness's own rule (FastChat's
  MT-Bench pairs; Arena-Hard-Auto's battles against a baseline), then win,
  loss, tie, win rate with ties as half, and position bias (``replicate
  pairwise``); :mod:`~replicate.pairwise.alpacaeval`: AlpacaEval's win rate
  from its annotations, counted the same way, and :mod:`~replicate.pairwise.lc`
  its length-controlled win rate (AlpacaEval's GLM);
- :mod:`~replicate.pairwise.human`: a judge's agreement with human votes or a
  second annotator on the same pairs;
- :mod:`~replicate.pairwise.render`: their tables.

Everything here takes labelled runs already read (``replicate.judge.api``
does the reading) and returns frozen results; intervals come from
:mod:`replicate.stats`.
"""
