"""``helm-choice@1``: a HELM multiple-choice completion read as its choice letter, as HELM's metrics read it.

HELM's ``multiple_choice_joint`` adapter labels an instance's references
``A``, ``B``, ``C``, ... (the request state's ``output_mapping``) and asks for
one letter. Its metrics strip the completion of surrounding whitespace and
look the text up in the mapping: ``" B"`` is choice B, ``"B."``, ``"(B)"`` and
``"B) Paris"`` are no choice (scored wrong). This parser reads the same way,
so ``helm-completions@1`` with it gives HELM's own ``exact_match`` verdicts
(under ``--unparsed wrong``, where an unparsed output counts as wrong as in
HELM) and a looser parser can be set against it.
"""

from __future__ import annotations

import string

from replicate.labels import LabelSet
from replicate.parsing import Parser

#: The letters HELM's joint multiple-choice adapter gives references (``A`` + the reference's position).
LETTERS = tuple(string.ascii_uppercase)
CHOICES = LabelSet.categorical(*LETTERS)


def _choice(text: str) -> int | None:
    stripped = text.strip()
    return CHOICES.code(stripped) if len(stripped) == 1 else None


_choice.__doc__ = """\
The whole text, stripped of surrounding whitespace (spaces, tabs, line
breaks), is one capital letter A-Z: that choice (` B`, `B\\n` read as B).
Anything else is unparsed: a lower-case letter (`b`), a letter with
punctuation or words (`B.`, `(B)`, `B) Paris`, `Answer: B`), two letters, the
empty text. This is how HELM's metrics read a multiple_choice_joint completion
(the stripped text looked up in the output mapping; no match is wrong).

The label set is the categories A-Z; a gold is the letter of the correct
reference (helm-completions@1 gives it).
"""

HELM_CHOICE = Parser(
    "helm-choice@1",
    "HELM multiple-choice completion as HELM reads it: the stripped text is one letter A-Z.",
    _choice,
    _choice.__doc__.strip(),
    labels=tuple(range(len(LETTERS))),
    label_set=CHOICES,
)

#: The entry point ``helm_choice = "replicate_parsers.helm_choice:PARSERS"`` loads this list.
PARSERS: list[Parser] = [HELM_CHOICE]
