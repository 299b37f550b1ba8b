"""Verify a paper's printed claims against its released data and write a verification note.

- :mod:`replicate.verify.claim`        — one claim model and the claim sources (``SOURCES``, ``register_source``)
- :mod:`replicate.verify.claims_file`  — the TOML claims file: its tables, loading and validation (every problem at once)
- :mod:`replicate.verify.metrics`      — the one metric table (every family imported by name); :mod:`~replicate.verify.metric_row` what a row is
- :mod:`replicate.verify.matching`     — a claim's figure in one column and its verdict (at the printed precision: :mod:`replicate.printed`)
- :mod:`replicate.verify.part`         — what a claim source gives a verification (:class:`~replicate.verify.part.Part`)
- :mod:`replicate.verify.verification` — the whole :class:`Verification`: a tuple of parts, one per claim source
- :mod:`replicate.verify.sources`      — each built-in source's part (its results, JSON and note), and the families of metrics
- :mod:`replicate.verify.recompute`    — core over runs: metric values from loaded runs, per parser column (exact)
- :mod:`replicate.verify.flags`        — what the note's "Flags" section reports
- :mod:`replicate.verify.note`         — the one renderer: the markdown note and the terminal table (pure, no source named)
- :mod:`replicate.verify.table_cells`  — how a claim shows in a table cell (printed, computed, verdict)
- :mod:`replicate.verify.plots`        — optional matplotlib figures beside the note
- :mod:`replicate.verify.api`          — :func:`verify` (reads files) and :func:`verify_runs` (pure)

Claims over K-trial studies (``[trials]``, ``--replication``; settings in :mod:`replicate.trials.settings`):

- :mod:`replicate.verify.trials_recompute` — core over trials: figures read from the items / screen engine
- :mod:`replicate.verify.replication`      — a fresh collection against the printed figure: which test for which figure, the
  verdicts (statistics: :mod:`replicate.stats.replication`, :mod:`replicate.stats.figure_comparison`; tables:
  :mod:`replicate.trials.fresh`, :mod:`replicate.trials.trial_error`)
- :mod:`replicate.verify.trials_check`     — :func:`check_trials` (pure: tables in, results out)
- :mod:`replicate.verify.trials_io`        — reading the tables, fresh collections and archives

Claims over system rankings: the metric family :mod:`replicate.verify.sources.rankings_metrics`, the part :mod:`replicate.verify.sources.rankings`.
"""

from replicate.printed import Printed, Verdict, match
from replicate.verify.api import verify, verify_runs
from replicate.verify.claims_file import Claim, ClaimsFile, load_claims, parse_claims
from replicate.verify.sources.runs import ClaimResult
from replicate.verify.verification import Verification

__all__ = [
    "Claim", "ClaimResult", "ClaimsFile", "Printed", "Verdict", "Verification",
    "load_claims", "match", "parse_claims", "verify", "verify_runs",
]
