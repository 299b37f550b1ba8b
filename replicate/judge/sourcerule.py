"""The source's rule as the default: which unparsed policy a command uses, and whether it departs (pure).

A reader of a harness's files declares how that harness counts an item it
could not score (:class:`~replicate.reading.contract.SourceRule`): lm-eval scores an
answer its filter could not extract 0 (``wrong``), inspect_ai and HELM leave an
unscored sample out of their means (``intersect``). That rule is the default of
``--unparsed``, so the figures equal the harness's own; a user who asks for the
other policy gets it, and every output says it departs from the source's rule.
Runs whose readers declare no rule (a judge's raw outputs, read by a parser)
keep the project's default, ``intersect``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.judge.model import RunFile
from replicate.stats.policy import Policy, check_policy

#: The policy of runs whose readers declare no source rule.
DEFAULT_POLICY: Policy = "intersect"

POLICY_TEXT: dict[str, str] = {
    "intersect": "an unparsed output leaves the figures",
    "wrong": "an unparsed output counts as wrong",
}


@dataclass(frozen=True)
class UnparsedChoice:
    """The unparsed policy a command used, the source's rule it was set against, and who chose it.

    ``rule`` is the policy the runs' readers declare (None: they declare none, or different ones),
    ``says`` that rule in words per reader, ``given`` whether the user named the policy (``--unparsed``).
    """

    policy: Policy
    rule: Policy | None = None
    says: tuple[tuple[str, str], ...] = ()  # (reader, the harness's rule in words)
    given: bool = False

    @property
    def departs(self) -> bool:
        """The user chose a policy other than the source's rule: the figures differ from the harness's own."""
        return self.rule is not None and self.policy != self.rule

    @property
    def readers(self) -> str:
        return " + ".join(r for r, _ in self.says)

    def text(self) -> str:
        """One line for the header of a table: the policy, and how it stands to the source's rule."""
        head = f"unparsed policy: {self.policy} ({POLICY_TEXT[self.policy]})"
        if self.rule is None:
            if self.says:
                return f"{head}; the readers' rules differ ({self.readers}), so none is the default"
            return head
        if self.departs:
            return f"{head}: a DEPARTURE from the source's rule, {self.rule} ({self.reason()}): {self.departure()}"
        return f"{head}, the source's rule ({self.reason()})"

    def reason(self) -> str:
        return "; ".join(f"{r}: {says}" for r, says in self.says)

    def departure(self) -> str:
        """Why the figures differ from the harness's own (only meaningful when :attr:`departs`)."""
        return (f"--unparsed {self.policy} was chosen, so these figures are not the harness's own "
                f"(--unparsed {self.rule} gives them)")

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "source_rule": self.rule,
            "source_rule_says": {r: s for r, s in self.says},
            "given": self.given,
            "departs_from_source": self.departs,
        }


def source_rule(files: Iterable[RunFile]) -> tuple[Policy | None, tuple[tuple[str, str], ...]]:
    """The policy the readers of ``files`` declare (None when one declares none or they differ) and, per reader
    that declares one, its rule in words."""
    rules: dict[str, Any] = {}
    without = False
    for f in files:
        if f.source_rule is None:
            without = True
        else:
            rules.setdefault(f.reader, f.source_rule)
    says = tuple((r, rule.says) for r, rule in rules.items())
    policies = {rule.unparsed for rule in rules.values()}
    if without or len(policies) != 1:
        return None, says if not without else ()
    return next(iter(policies)), says


def unparsed_choice(runs: Sequence[Any], given: str | None = None) -> UnparsedChoice:
    """The unparsed policy for ``runs`` (anything with ``files``): ``given`` (the user's ``--unparsed``), else the
    source's rule of their readers, else :data:`DEFAULT_POLICY`."""
    rule, says = source_rule(f for r in runs for f in r.files)
    if given is not None:
        return UnparsedChoice(check_policy(given), rule, says, given=True)
    return UnparsedChoice(rule or DEFAULT_POLICY, rule, says, given=False)
