"""Label sets: which labels a parser (or a reader of decided labels) can give (pure).

A label set is either **ordinal** (whole-number grades on a range, ``0-3``,
``1-10``: distances mean something, so MAE and Pearson r apply) or
**categorical** (named labels such as ``A``, ``B``, ``tie``: only equality
means something, so MAE and Pearson r are absent and say why). An ordinal set
may name its grades too (Arena-Hard's five verdicts ``B>>A`` .. ``A>>B`` are
an ordered scale): grade ``low + i`` is called ``names[i]``.

Inside label arrays every label is a small integer code: an ordinal grade is
its own code; a category's code is its position in :attr:`LabelSet.names`.
``-1`` is the unparsed marker (:data:`replicate.parsing.UNPARSED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal

LabelKind = Literal["ordinal", "categorical"]

#: Largest code a label array (int8) holds.
CODE_MAX = 127


@dataclass(frozen=True, slots=True)
class LabelSet:
    """The labels one reading can give: an ordinal range or a list of categories."""

    kind: LabelKind
    low: int = 0
    high: int = 3
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "ordinal":
            if not (0 <= self.low <= self.high <= CODE_MAX):
                raise ValueError(f"an ordinal label set needs 0 <= low <= high <= {CODE_MAX}; got {self.low}-{self.high}")
            if self.names and (len(self.names) != self.high - self.low + 1 or len(set(self.names)) != len(self.names)):
                raise ValueError(
                    f"an ordinal label set names each grade {self.low}-{self.high} once, or none; got {self.names!r}"
                )
        elif self.kind == "categorical":
            if not self.names or len(set(self.names)) != len(self.names):
                raise ValueError("a categorical label set needs distinct names")
            if len(self.names) > CODE_MAX + 1:
                raise ValueError(f"at most {CODE_MAX + 1} categories")
            object.__setattr__(self, "low", 0)
            object.__setattr__(self, "high", len(self.names) - 1)
        else:
            raise ValueError(f"label set kind must be 'ordinal' or 'categorical'; got {self.kind!r}")

    @classmethod
    def ordinal(cls, low: int, high: int) -> "LabelSet":
        """Whole-number grades ``low``..``high`` (both included)."""
        return cls("ordinal", low, high)

    @classmethod
    def named_ordinal(cls, *names: str, low: int = 0) -> "LabelSet":
        """An ordered scale of named grades: ``names[i]`` is grade ``low + i``."""
        return cls("ordinal", low, low + len(names) - 1, tuple(names))

    @classmethod
    def categorical(cls, *names: str) -> "LabelSet":
        """Named categories; a category's code is its position."""
        return cls("categorical", names=tuple(names))

    @property
    def is_ordinal(self) -> bool:
        return self.kind == "ordinal"

    @property
    def codes(self) -> tuple[int, ...]:
        return tuple(range(self.low, self.high + 1))

    def __str__(self) -> str:
        if self.is_ordinal and self.names:
            return f"ordinal {self.low}-{self.high} (" + ", ".join(
                f"{self.low + i} {n}" for i, n in enumerate(self.names)) + ")"
        if self.is_ordinal:
            return f"ordinal {self.low}-{self.high}"
        return "categorical " + ", ".join(self.names)

    def show(self, code: int) -> str:
        """A code as the label it stands for (a grade, or a category name)."""
        if not self.names or not self.low <= code <= self.high:
            return str(code)
        return self.names[code - self.low]

    def code(self, value: Any) -> int | None:
        """The code of a label value read from a file, or None when it is not a label of this set.

        One of the names (exact text), for a set that names its labels; for an
        ordinal set also an int (or integral float, or digits as text) inside
        the range. Values outside are None; readers that keep out-of-range
        grades use :func:`grade_code` instead.
        """
        if type(value) is str and value in self.names:
            return self.low + self.names.index(value)
        if self.is_ordinal:
            v = grade_code(value)
            return v if v is not None and self.low <= v <= self.high else None
        return None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind, "min": self.low, "max": self.high}
        if self.names:
            out["names"] = list(self.names)
        return out


def outside_set(code: int, label_set: LabelSet) -> str:
    """The warning (``label-outside-set``) for a grade a reader read outside its declared ordinal set."""
    return f"label {code} lies outside the label set {label_set} (read as written; --out-of-scale decides how it counts)"


def label_name(code: int, label_set: LabelSet | None) -> int | str:
    """A label code as tables and JSON show it: its name when the set names its labels (``A``, ``tie``,
    ``A>>B``), else the number itself (a grade; a code outside the set, kept as read)."""
    if label_set is not None and label_set.names and label_set.low <= code <= label_set.high:
        return label_set.show(code)
    return code


def _whole_number(value: Any) -> int | None:
    """A whole number written as an int, an integral float or ASCII digits ("3"); else None (bools too)."""
    t = type(value)
    if t is int:
        return value
    if t is float and value.is_integer():
        return int(value)
    if t is str:
        text = value.strip()
        return int(text) if text.isascii() and text.isdigit() else None
    return None


def grade_code(value: Any) -> int | None:
    """A whole-number grade 0..127 as its code: 2, 2.0 and "2" give 2; 2.5, -1, "x" give None."""
    v = _whole_number(value)
    return v if v is not None and 0 <= v <= CODE_MAX else None


def decided_code(value: Any, label_set: LabelSet) -> tuple[int | None, str | None, str | None]:
    """A label decided in a file (a reader's record's ``label``) as its code in the reader's ``label_set``:
    (code, None, warning or None), or (None, why it is no label of the set, None). An ordinal set takes a
    whole-number grade 0..127; one outside the set is kept as read, with the warning :func:`outside_set`."""
    if label_set.is_ordinal:
        code = grade_code(value)
        if code is None:
            return None, f"label must be a whole-number grade 0-127, got {value!r}", None
        inside = label_set.low <= code <= label_set.high
        return code, None, None if inside else outside_set(code, label_set)
    code = label_set.code(value)
    if code is None:
        return None, f"label {value!r} is not one of {', '.join(label_set.names)}", None
    return code, None, None


#: Largest gold grade a gold array (int16) holds.
GOLD_MAX = 32767  # np.iinfo(np.int16).max


def gold_code(value: Any, label_set: "LabelSet | None") -> int | None:
    """The code of a gold value read from a file, read against the label set it is compared with.

    The one rule for gold, whatever reader read it (None: not a gold of that
    set; the caller names the file, the line and the set):

    - a name of the set, exact text (``"tie"``, ``"A>B"``), is its code;
    - a categorical set takes nothing else: a number is not a category;
    - otherwise (an ordinal set, or no set known) a whole-number grade is its
      own code: ``3``, ``3.0`` and the text ``"3"`` give 3 (0..GOLD_MAX; an
      ordinal gold outside the parser's range is kept, as graded);
    - bools, fractions, negative numbers and other text are None.
    """
    if label_set is not None and label_set.names and type(value) is str and value in label_set.names:
        return label_set.low + label_set.names.index(value)
    if label_set is not None and not label_set.is_ordinal:
        return None
    v = _whole_number(value)
    return v if v is not None and 0 <= v <= GOLD_MAX else None


def gold_problem(value: Any, label_set: "LabelSet | None") -> str:
    """Why ``value`` is not a gold of ``label_set`` (for the error naming the file and line)."""
    shown = repr(value) if type(value) in (str, int, float, bool) or value is None else type(value).__name__
    if label_set is None:
        return f"gold must be a non-negative whole-number grade (at most {GOLD_MAX}), got {shown}"
    if label_set.names:
        extra = "" if not label_set.is_ordinal else f", or a whole grade {label_set.low}-{label_set.high}"
        return f"gold {shown} is not a label of the set {label_set}: one of {', '.join(label_set.names)}{extra}"
    return f"gold {shown} is not a whole-number grade of the set {label_set} (at most {GOLD_MAX})"


#: Figures that need ordinal grades (and so labels, not only correctness).
NEEDS_ORDINAL: tuple[str, ...] = ("mae", "pearson_r")


def needs_labels() -> tuple[str, ...]:
    """Figures that need labels, not only correctness: the four-cell figures declared so, and the ordinal ones."""
    from replicate.stats.fourcell import FIGURES  # numpy: loaded only where runs are compared

    return (*(n for n, f in FIGURES.items() if f.needs_labels), *NEEDS_ORDINAL)


def absent_figures(runs: Iterable[Any]) -> dict[str, str]:
    """Figures these runs cannot give, each with why (empty when every figure applies).

    ``runs`` are labelled runs (anything with ``name``, ``yields`` and
    ``label_set``). Correctness-only runs (``yields == "verdicts"``) have no
    labels: change rate, label agreement, MAE and Pearson r are absent. Runs
    whose labels are categorical have no distances: MAE and Pearson r are absent.
    """
    runs = list(runs)
    verdicts = [r.name for r in runs if getattr(r, "yields", "outputs") == "verdicts"]
    if verdicts:
        why = f"run(s) {', '.join(verdicts)} carry correctness verdicts only, no labels"
        return {f: f"{f} needs labels; {why}" for f in needs_labels()}
    cats = [r for r in runs if getattr(r, "label_set", None) is not None and not r.label_set.is_ordinal]
    if cats:
        why = f"the labels of {cats[0].name} are {cats[0].label_set}, without distances"
        return {f: f"{f} needs ordinal grades; {why}" for f in NEEDS_ORDINAL}
    return {}


#: The relevance grades of TREC-style judging (UMBRELA, the DL tracks): 0-3.
RELEVANCE_0_3 = LabelSet.ordinal(0, 3)
