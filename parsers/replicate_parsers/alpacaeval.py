"""AlpacaEval's preferences: ``alpacaeval-preference@1`` (the reader is ``alpacaeval_annotations``).

AlpacaEval writes ``results/<model>/<annotator>/annotations.json``: one JSON
array, an object per instruction with ``instruction``, ``output_1`` and
``generator_1`` (the baseline), ``output_2`` and ``generator_2`` (the model
evaluated), ``annotator``, ``preference`` (1: output_1 preferred, 2:
output_2 preferred, 1.5 a draw, fractional for weighted annotators; ``null``
when the annotator gave none), ``raw_completion`` and others. The reader gives
each annotation's recorded ``preference`` as its output, read by
``alpacaeval-preference@1`` as AlpacaEval's ``metrics/helpers.py`` reads it.
Registered through the ``replicate.parsers`` entry point ``alpacaeval`` (no
import of the reading toolkit here: listing parsers stays light).
"""

from __future__ import annotations

import math

from replicate.labels import LabelSet
from replicate.parsing import Parser

#: AlpacaEval's preferences, discrete: output_1 preferred, a draw, output_2 preferred (an ordered scale).
PREFERENCES = LabelSet.named_ordinal("1", "1.5", "2")


# alpacaeval-preference@1 --------------------------------------------------------
def _value(text: str) -> float | None:
    try:
        p = float(text)
    except ValueError:
        return None
    if p == 0:
        p = 1.5  # AlpacaEval's old encoding of a draw
    if math.isnan(p) or not 1 <= p <= 2:
        return None  # not a preference: AlpacaEval drops it
    return p


def _label(text: str) -> int | None:
    p = _value(text)
    if p is None:
        return None
    return 1 if p == 1.5 else (0 if p < 1.5 else 2)


_label.__doc__ = """\
A preference as AlpacaEval's `metrics/helpers.py` reads it, given as the
number the annotation recorded (`alpacaeval-annotations@1` writes the
`preference` field as text: `1`, `2`, `1.5`, `1.73`).

- A preference of 0 is a draw (AlpacaEval's old encoding): 1.5.
- A number outside 1-2 (or not a number) is not a preference: unparsed,
  as AlpacaEval drops it ("drop ... outputs that are not preferences").

The score (what `replicate pairwise` averages) is the preference itself;
AlpacaEval's `win_rate` is the mean of preference - 1, times 100. The label is
the discrete preference of AlpacaEval's `discrete_win_rate`
(`ZeroOneScoringRule`): `1.5` a draw, below 1.5 `1` (output_1, the
baseline, preferred), above `2` (output_2, the model); so 1.3 is `1` and
1.7 is `2`. The label set is the ordered scale `1` < `1.5` < `2`.

AlpacaEval's discrete reading rounds before it checks the range, so a
stray 2.4 would count there as a win of output_2; here, as in AlpacaEval's
`win_rate`, it is no preference. AlpacaEval never writes one.
"""

PREFERENCE = Parser(
    "alpacaeval-preference@1",
    "AlpacaEval preference as AlpacaEval reads it: 1-2, 0 a draw (1.5); label 1, 1.5 or 2 as rounded.",
    _label,
    _label.__doc__.strip(),
    labels=PREFERENCES.codes,
    label_set=PREFERENCES,
    value=_value,
)


#: The entry point ``alpacaeval = "replicate_parsers.alpacaeval:PARSERS"`` loads this list.
PARSERS: list[Parser] = [PREFERENCE]
