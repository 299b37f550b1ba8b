"""Printed-precision matching: exact half-open boundaries, counts, units, rounding display."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from replicate.printed import Printed, Verdict, match, misprint, rounded


def P(text, unit="percent"):
    return Printed.parse(text, unit)


@pytest.mark.parametrize(
    "text,unit,value,expected",
    [
        # "28.0" percent covers 27.95 <= x <= 28.05 (x given as a fraction 0-1); both boundaries are ties
        ("28.0", "percent", Fraction(2795, 10000), Verdict.match),
        ("28.0", "percent", Fraction(2805, 10000), Verdict.match),
        ("28.0", "percent", Fraction(2805, 10000) + Fraction(1, 10**12), Verdict.mismatch),
        # 559/2000 = 27.95%: Python prints "27.9", school rounding "28.0"; both match
        ("27.9", "percent", Fraction(559, 2000), Verdict.match),
        ("28.0", "percent", Fraction(559, 2000), Verdict.match),
        ("28.0", "percent", Fraction(2795, 10000) - Fraction(1, 10**12), Verdict.mismatch),
        ("28.0", "percent", Fraction(2805, 10000) - Fraction(1, 10**12), Verdict.match),
        ("28.0", "percent", Fraction(5776, 20646), Verdict.match),
        # "0.77" ratio covers 0.765 <= x <= 0.775
        ("0.77", "ratio", Fraction(765, 1000), Verdict.match),
        ("0.77", "ratio", Fraction(775, 1000), Verdict.match),
        ("0.77", "ratio", Fraction(7750001, 10**7), Verdict.mismatch),
        ("0.77", "ratio", Fraction(7649999, 10**7), Verdict.mismatch),
        ("0.77", "ratio", Fraction(7749999, 10**7), Verdict.match),
        # fraction unit: no scaling
        ("0.581", "fraction", Fraction(5805, 10000), Verdict.match),
        ("0.581", "fraction", Fraction(5816, 10000), Verdict.mismatch),
        # no decimals: "13" covers [12.5, 13.5]
        ("13", "percent", Fraction(1, 8), Verdict.match),
        ("13", "percent", Fraction(136, 1000), Verdict.mismatch),
        # negative values round symmetrically: "-0.12" covers [-0.125, -0.115], the mirror of "0.12"
        ("-0.12", "ratio", Fraction(-125, 1000), Verdict.match),
        ("-0.13", "ratio", Fraction(-125, 1000), Verdict.match),
        ("-0.12", "ratio", Fraction(-115, 1000), Verdict.match),
        ("-0.12", "ratio", Fraction(-1251, 10000), Verdict.mismatch),
        ("-0.12", "ratio", Fraction(-1149, 10000), Verdict.mismatch),
        # counts are exact
        ("6252", "count", 6252, Verdict.match),
        ("6,252", "count", 6252, Verdict.match),
        ("6252", "count", 6253, Verdict.mismatch),
        ("6252", "count", 6252.5, Verdict.mismatch),
        # a trailing % is allowed with unit percent
        ("28.0%", "percent", Fraction(28, 100), Verdict.match),
    ],
)
def test_boundaries_are_exact(text, unit, value, expected):
    assert match(Printed.parse(text, unit), value).verdict is expected


def test_floats_are_compared_by_their_exact_binary_value():
    # 0.765 as a double is 0.76500000000000001332..., just above the boundary: a match
    assert Fraction(0.765) > Fraction(765, 1000)
    assert match(P("0.77", "ratio"), 0.765).verdict is Verdict.match
    # 0.775 as a double is 0.77500000000000002220...: just above the upper boundary
    assert match(P("0.77", "ratio"), 0.775).verdict is Verdict.mismatch
    assert not match(P("0.78", "ratio"), 0.775).tie
    # the percent scaling is exact: 0.2795 * 100 in floating point would be 27.950000000000003
    assert match(P("28.0"), Fraction(2795, 10000)).scaled == Fraction(2795, 100)


def test_tie_is_reported_on_either_boundary():
    assert match(P("13"), Fraction(1, 8)).tie
    assert match(P("13"), Fraction(135, 1000)).tie
    assert not match(P("13"), Fraction(13, 100)).tie
    assert not match(P("6252", "count"), 6252).tie


def test_interval_text():
    assert P("28.0").show_interval() == "[27.95, 28.05]"
    assert P("0.77", "ratio").show_interval() == "[0.765, 0.775]"
    assert P("1.84").show_interval() == "[1.835, 1.845]"
    assert P("13").show_interval() == "[12.5, 13.5]"
    assert P("6,252", "count").show_interval() == "= 6252"


def test_parse_keeps_precision():
    p = P("2.20")
    assert (p.value, p.places, p.text) == (Decimal("2.20"), 2, "2.20")
    assert P(".5", "ratio").value == Decimal("0.5")


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "1,00", "12,3456", "%", "--1", "1e3"])
def test_parse_rejects(text):
    with pytest.raises(ValueError, match="is not a number as printed"):
        P(text)


def test_parse_rejects_non_string():
    with pytest.raises(ValueError, match="value must be a string as printed, got float"):
        Printed.parse(28.0, "percent")


def test_rounded_halves_away_from_zero_in_printed_scale():
    assert rounded(P("28.0"), Fraction(5776, 20646)) == "28.0"
    assert rounded(P("13"), Fraction(1, 8)) == "13"  # half up, where round() would give 12
    assert round(12.5) == 12
    assert rounded(P("0.77", "ratio"), Fraction(775, 1000)) == "0.78"
    assert rounded(P("0.77", "ratio"), Fraction(-775, 1000)) == "-0.78"  # symmetric: halves away from zero


def test_a_boundary_value_matches_both_neighbours_as_a_tie():
    x = Fraction(559, 2000)  # 27.95%: Python's format gives "27.9"
    assert f"{100 * 559 / 2000:.1f}" == "27.9"
    for text in ("27.9", "28.0"):
        m = match(P(text), x)
        assert m.matched and m.tie, text
    assert not match(P("27.8"), x).matched and not match(P("28.1"), x).matched
    # symmetric in sign
    for text in ("-27.9", "-28.0"):
        assert match(P(text), -x).matched and match(P(text), -x).tie


def test_misprint_is_printed_minus_computed_as_a_fraction_and_zero_where_it_matches():
    assert misprint(Printed.parse("28.0", "percent"), Fraction(28, 100)) == 0
    assert misprint(Printed.parse("28.0", "percent"), Fraction(2804, 10000)) == 0  # rounds to 28.0: a match
    assert misprint(Printed.parse("30.0", "percent"), Fraction(1, 4)) == Fraction(5, 100)
    assert misprint(Printed.parse("0.20", "fraction"), Fraction(1, 4)) == Fraction(-5, 100)
    assert misprint(Printed.parse("12", "count"), 10, 40) == Fraction(2, 40)  # a count as a share of its items
    assert misprint(Printed.parse("12", "count"), 10, None) == 0  # without its items there is no share
