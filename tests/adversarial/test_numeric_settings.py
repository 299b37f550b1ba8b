"""Numbers given as text to the K-trial settings (--eps, --sensitivity, --low, --high, --threshold, a claims
file's [study]) with an exponent no setting means: refused at once, never read exactly.

Before, ``Fraction(Decimal("1e-999999999"))`` built a power of ten of a billion digits: the command ran for
minutes and filled memory (the value lies in [0, 1], so the range checks passed it).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.stats.rational import MAX_DIGITS, exact_decimal
from replicate.trials.settings import DEFAULTS, parse_settings
from support.paths import ROOT

TRIALS = ROOT / "fixtures" / "trials-path" / "trials.jsonl.gz"
HUGE = ("1e-999999999", "1e999999999", "0." + "0" * 200 + "1")


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("command, option", [
    ("items", "--eps"), ("items", "--sensitivity"), ("screen", "--low"), ("screen", "--high"),
    ("screen", "--threshold"), ("plan", "--eps"),
])
def test_a_setting_of_absurd_exponent_is_refused_at_once(command, option, value):
    args = [command, TRIALS, option, value] if command != "plan" else [command, "--n-items", "10", option, value]
    if command == "items":
        args += ["--edge", "v1:v2", "--null", "0"]
    res = _run(*args)
    assert res.exit_code == 2, res.output
    assert f"Error: {option} must be a number in" in res.stderr
    assert f"more than {MAX_DIGITS} digits before or after the point" in res.stderr


@pytest.mark.timeout(20)
def test_a_claims_study_setting_of_absurd_exponent_is_said():
    said: list[str] = []
    out = parse_settings({"eps": "1e-999999999", "threshold": "1e-999999999"}, DEFAULTS, said.append)
    assert out.eps == DEFAULTS.eps and out.threshold == DEFAULTS.threshold
    assert said == ["eps must be a number in (0, 1], got '1e-999999999'",
                    "threshold must be a number in [0, 1], got '1e-999999999'"]


def test_exact_decimal_reads_what_a_setting_means_exactly():
    from fractions import Fraction

    assert exact_decimal("0.2") == Fraction(1, 5) and exact_decimal(0.1) == Fraction(1, 10)
    assert exact_decimal("0.0000001024") == Fraction(1024, 10**10)  # 10 places: kept (eps's limit is its own)
    assert exact_decimal("1e-" + str(MAX_DIGITS)) == Fraction(1, 10**MAX_DIGITS)
    for bad, why in [("nan", "not a finite number"), ("x", "not a number"), ("1e-101", "more than 100 digits")]:
        with pytest.raises(ValueError, match=why):
            exact_decimal(bad)
