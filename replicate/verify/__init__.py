"""Verify a paper's printed claims against its released data and write a verification note.

- :mod:`replicate.verify.claims`    — the TOML claims file: loading and validation (every problem at once)
- :mod:`replicate.verify.metrics`   — the metrics a claim can name and the units each may be printed in
- :mod:`replicate.verify.matching`  — printed-precision matching in exact decimal arithmetic
- :mod:`replicate.verify.recompute` — metric values from loaded runs (exact fractions)
- :mod:`replicate.verify.flags`     — what the note's "Flags" section reports
- :mod:`replicate.verify.note`      — the markdown note and the terminal table (pure rendering)
- :mod:`replicate.verify.plots`     — optional matplotlib figures beside the note
- :mod:`replicate.verify.api`       — :func:`verify` (reads files) and :func:`verify_runs` (pure)
"""

from replicate.verify.api import verify, verify_runs
from replicate.verify.claims import Claim, ClaimsFile, load_claims, parse_claims
from replicate.verify.matching import Printed, Verdict, match
from replicate.verify.result import ClaimResult, Verification

__all__ = [
    "Claim", "ClaimResult", "ClaimsFile", "Printed", "Verdict", "Verification",
    "load_claims", "match", "parse_claims", "verify", "verify_runs",
]
