"""replicate: audit published LLM-judge and benchmark outputs across model versions.

The package is a typed library with a thin command-line layer (``replicate.cli``).
Pure computation (parsing, alignment, statistics, rendering) is kept apart from
input/output (files, git, HTTP); see ``docs/concepts.md`` for the vocabulary and
``docs/api.md`` for using it from Python.

The names below are the public API. They are imported on first use (module
``__getattr__``), so ``import replicate`` stays cheap: numpy, scipy, git and
requests load only when a name that needs them is touched.

``replicate.fetch`` and ``replicate.verify`` are subpackages; their entry
points are exported as :func:`fetch_release` and :func:`verify_claims`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: Public name -> (module, attribute).
_EXPORTS: dict[str, tuple[str, str]] = {
    # judge runs: choose, load, label, compare
    "RunSpec": ("replicate.judge.select", "RunSpec"),
    "runs_from_files": ("replicate.judge.select", "runs_from_files"),
    "runs_from_toml": ("replicate.judge.select", "runs_from_toml"),
    "FieldSpec": ("replicate.judge.load", "FieldSpec"),
    "load_runs": ("replicate.judge.api", "load_runs"),
    "Loaded": ("replicate.judge.api", "Loaded"),
    "compare": ("replicate.judge.compare", "compare"),
    "chain": ("replicate.judge.compare", "chain"),
    "Comparison": ("replicate.judge.compare", "Comparison"),
    "floor": ("replicate.judge.floor", "floor"),
    "Floor": ("replicate.judge.floor", "Floor"),
    "matrix": ("replicate.judge.matrix", "matrix"),
    "Matrix": ("replicate.judge.matrix", "Matrix"),
    "audit": ("replicate.judge.audit", "audit"),
    # figures
    "FourCell": ("replicate.stats.fourcell", "FourCell"),
    "FIGURES": ("replicate.stats.fourcell", "FIGURES"),
    "Figure": ("replicate.stats.fourcell", "Figure"),
    "register_figure": ("replicate.stats.fourcell", "register_figure"),
    "Policy": ("replicate.stats.policy", "Policy"),
    # K-trial studies: read, the item engine, screen, plan, costs
    "read_trials": ("replicate.trials.load", "read_trials"),
    "TrialsTable": ("replicate.trials.load", "TrialsTable"),
    "analyse_items": ("replicate.trials.engine", "analyse_items"),
    "ItemsResult": ("replicate.trials.results", "ItemsResult"),
    "screen": ("replicate.trials.screen", "screen"),
    "plan": ("replicate.trials.plan", "plan"),
    # harness figures: MT-Bench's score, pairwise judgments by model
    "mtbench_scores": ("replicate.pairwise.mtbench", "mtbench_scores"),
    "MTBenchScores": ("replicate.pairwise.mtbench", "MTBenchScores"),
    "games_of": ("replicate.pairwise.tally", "games_of"),
    "tally": ("replicate.pairwise.tally", "tally"),
    "alpacaeval_tally": ("replicate.pairwise.alpacaeval", "alpacaeval_tally"),
    "PairwiseTally": ("replicate.pairwise.tally", "PairwiseTally"),
    # system-ranking agreement of retrieval runs under two qrels
    "ranking_agreement": ("replicate.rankings", "ranking_agreement"),
    "RankingAgreement": ("replicate.rankings.result", "RankingAgreement"),
    "analyse_costs": ("replicate.trials.costs", "analyse_costs"),
    "CostsResult": ("replicate.trials.costs_result", "CostsResult"),
    "read_prices": ("replicate.trials.prices", "read_prices"),
    # verification and fetching
    "verify_claims": ("replicate.verify.api", "verify"),
    "verify_runs": ("replicate.verify.api", "verify_runs"),
    "Verification": ("replicate.verify.verification", "Verification"),
    "fetch_release": ("replicate.fetch.api", "fetch"),
    "FetchResult": ("replicate.fetch.api", "FetchResult"),
    # plugin registries and their decorators
    "PARSERS": ("replicate.parsing", "PARSERS"),
    "Parser": ("replicate.parsing", "Parser"),
    "parser": ("replicate.parsing", "parser"),
    "SCORERS": ("replicate.scoring.base", "SCORERS"),
    "Scorer": ("replicate.scoring.base", "Scorer"),
    "scorer": ("replicate.scoring.base", "scorer"),
    "READERS": ("replicate.reading.contract", "READERS"),
    "Reader": ("replicate.reading.contract", "Reader"),
    "reader": ("replicate.reading.contract", "reader"),
    # warnings, errors and output
    "Diagnostics": ("replicate.diagnostics", "Diagnostics"),
    "ReplicateError": ("replicate.errors", "ReplicateError"),
    "UsageError": ("replicate.errors", "UsageError"),
    "BadInput": ("replicate.errors", "BadInput"),
    "CheckFailed": ("replicate.errors", "CheckFailed"),
    "Format": ("replicate.output", "Format"),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from replicate.version import tool_version

        value = globals()[name] = tool_version()
        return value
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'replicate' has no attribute {name!r}") from None
    value = getattr(import_module(module), attr)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    __version__: str
    from replicate.diagnostics import Diagnostics
    from replicate.errors import BadInput, CheckFailed, ReplicateError, UsageError
    from replicate.fetch.api import FetchResult, fetch as fetch_release
    from replicate.judge.api import Loaded, load_runs
    from replicate.judge.audit import audit
    from replicate.judge.compare import Comparison, chain, compare
    from replicate.judge.floor import Floor, floor
    from replicate.judge.load import FieldSpec
    from replicate.judge.matrix import Matrix, matrix
    from replicate.judge.select import RunSpec, runs_from_files, runs_from_toml
    from replicate.output import Format
    from replicate.pairwise.alpacaeval import alpacaeval_tally
    from replicate.pairwise.mtbench import MTBenchScores, mtbench_scores
    from replicate.pairwise.tally import PairwiseTally, games_of, tally
    from replicate.parsing import PARSERS, Parser, parser
    from replicate.rankings import ranking_agreement
    from replicate.rankings.result import RankingAgreement
    from replicate.reading.contract import READERS, Reader, reader
    from replicate.scoring.base import SCORERS, Scorer, scorer
    from replicate.stats.fourcell import FIGURES, Figure, FourCell, register_figure
    from replicate.stats.policy import Policy
    from replicate.trials.engine import analyse_items
    from replicate.trials.load import TrialsTable, read_trials
    from replicate.trials.plan import plan
    from replicate.trials.results import ItemsResult
    from replicate.trials.screen import screen
    from replicate.verify.api import verify as verify_claims, verify_runs
    from replicate.verify.verification import Verification
