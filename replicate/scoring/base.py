"""The scorer contract, the six categories and the category precedence."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from replicate.registry import Registry, VersionedName

CORRECT, WRONG, FORMAT_FAILURE, REFUSAL, TRUNCATION, API_ERROR = (
    "correct", "wrong", "format_failure", "refusal", "truncation", "api_error",
)
#: The six response categories, in the trials table's vocabulary.
CATEGORIES = (CORRECT, WRONG, FORMAT_FAILURE, REFUSAL, TRUNCATION, API_ERROR)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a scorer found: the answer text (``None`` = no answer) and its correctness."""

    answer: str | None
    correct: bool = False
    correct_loose: bool | None = None  # None: the scorer has no loose reading


@dataclass(frozen=True, slots=True)
class ScoreInput:
    """One response to score, with its item and any resources the pipeline loaded."""

    text: str
    reference: Any
    item: Any = None  # replicate.collect.config.Item, when known
    resources: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


class NoResult(Exception):
    """The scorer has no verdict for this trial (e.g. no verifier result); it is counted and left out."""


@dataclass(frozen=True, slots=True)
class Scorer:
    """A named, versioned scorer. ``judge`` is pure; ``needs`` names resources it reads."""

    name: str
    description: str
    judge: Callable[[ScoreInput], Verdict]
    details: str = ""
    needs: tuple[str, ...] = ()
    has_loose: bool = False
    package: str = ""  # a distribution the verdicts depend on; its version goes into every row it scores

    def __post_init__(self) -> None:
        VersionedName.parse(self.name)
        if "\n" in self.description:
            raise ValueError(f"scorer {self.name}: description must be one line")

    def __call__(self, text: str, reference: Any, *, item: Any = None,
                 resources: Mapping[str, Any] | None = None) -> Verdict:
        return self.judge(ScoreInput(text, reference, item, resources or MappingProxyType({})))


def scorer(name: str, description: str, *, needs: tuple[str, ...] = (), has_loose: bool = False,
           package: str = "") -> Callable[[Callable[[ScoreInput], Verdict]], Scorer]:
    """Decorator turning ``def judge(inp) -> Verdict`` into a :class:`Scorer` (docstring = details)."""

    def wrap(func: Callable[[ScoreInput], Verdict]) -> Scorer:
        return Scorer(name, description, func, (func.__doc__ or "").strip(), needs, has_loose, package)

    return wrap


def categorize(
    *,
    error_kind: str | None,
    finish_reason: str | None,
    refusal: str | None,
    verdict: Verdict | None,
    detector_says_refusal: bool = False,
) -> str:
    """The category of one trial, by precedence.

    api_error (the trial ended in an error) > truncation (finish reason
    ``length``) > refusal (finish reason ``content_filter``, the API's refusal
    field is set, or no answer was found and the refusal detector fires) >
    format_failure (no answer found) > correct / wrong.

    A reasoning model's reply with reasoning but no content is a truncation
    when it hit the token limit (finish reason ``length``) and otherwise a
    format failure: the scorer only ever reads the content.
    """
    if error_kind:
        return API_ERROR
    if finish_reason == "length":
        return TRUNCATION
    if refusal or finish_reason == "content_filter":
        return REFUSAL
    if verdict is None or verdict.answer is None:
        return REFUSAL if detector_says_refusal else FORMAT_FAILURE
    return CORRECT if verdict.correct else WRONG


#: Every scorer installed, discovered through the ``replicate.scorers`` entry points.
SCORERS: Registry[Scorer] = Registry("replicate.scorers", "scorer")
