"""Verify a paper's printed claims against its released data and write a verification note.

- :mod:`replicate.verify.metrics`   — the one metric table (runs and trials), units; how to add a metric
- :mod:`replicate.verify.claim`     — one claim model: a printed figure over a source (runs or a trials table)
- :mod:`replicate.verify.claims`    — the TOML claims file: its tables, loading and validation (every problem at once)
- :mod:`replicate.verify.matching`  — printed-precision matching in exact decimal arithmetic
- :mod:`replicate.verify.outcome`   — one verdict record: a figure computed in one column, judged against the printed value
- :mod:`replicate.verify.result`    — results of both kinds of claim and the whole :class:`Verification`
- :mod:`replicate.verify.recompute` — core over runs: metric values from loaded runs, per parser column (exact)
- :mod:`replicate.verify.flags`     — what the note's "Flags" section reports
- :mod:`replicate.verify.note`      — the one renderer: the markdown note and the terminal table (pure)
- :mod:`replicate.verify.sources.runs_note`, :mod:`replicate.verify.sources.trials_note` — its sections that differ by source
- :mod:`replicate.verify.cells`     — how a claim shows in a table cell (printed, computed, verdict)
- :mod:`replicate.verify.plots`     — optional matplotlib figures beside the note
- :mod:`replicate.verify.api`       — :func:`verify` (reads files) and :func:`verify_runs` (pure)

Claims over K-trial studies (``[trials]``, ``--replication``; settings in :mod:`replicate.trials.settings`):

- :mod:`replicate.verify.trials_recompute` — core over trials: figures read from the items / screen engine
- :mod:`replicate.verify.replication`      — a fresh collection against the printed figure; item agreement
- :mod:`replicate.verify.trials_check`     — :func:`check_trials` (pure: tables in, results out)
- :mod:`replicate.verify.trials_io`        — reading the tables, fresh collections and archives
"""

from replicate.verify.api import verify, verify_runs
from replicate.verify.claims import Claim, ClaimsFile, load_claims, parse_claims
from replicate.verify.matching import Printed, Verdict, match
from replicate.verify.result import ClaimResult, Verification

__all__ = [
    "Claim", "ClaimResult", "ClaimsFile", "Printed", "Verdict", "Verification",
    "load_claims", "match", "parse_claims", "verify", "verify_runs",
]
