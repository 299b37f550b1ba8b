"""Numbers read from input the user does not write by hand (a batch output's custom_id, a host's
X-RateLimit-Reset header, an environment variable): str.isdigit() says yes to '²' and other digits int()
refuses (ValueError: a traceback), and a header's epoch of 30 digits overflowed datetime (OverflowError).
Each is now read only from ASCII digits (and a plausible epoch), and otherwise left as unknown."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.batchfile import parse_custom_id
from replicate.command_input import MAX_LINE_BYTES, max_line_bytes
from replicate.fetch.httpfetch import rate_limit_error
from support.paths import ROOT


@pytest.mark.parametrize("trial", ["\u00b2", "\u0663", "1\u00b2"])
def test_a_custom_id_whose_trial_is_no_ascii_number_is_no_request_of_ours(trial):
    assert parse_custom_id(f"m|item|{trial}", ["m"]) is None
    assert parse_custom_id("m|item|3", ["m"]) == ("m", "item", 3)


@pytest.mark.parametrize("value", ["\u00b2", "\u0661\u0660"])
def test_a_line_bound_of_no_ascii_digits_is_the_default(monkeypatch, value):
    monkeypatch.setenv("REPLICATE_MAX_LINE_BYTES", value)
    assert max_line_bytes() == MAX_LINE_BYTES
    res = CliRunner().invoke(app, ["parse", "-"], input=(ROOT / "tests/readers/data/old.txt").read_text())
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("reset", ["\u00b2", "9" * 30])
def test_a_rate_limit_reset_that_is_no_epoch_is_left_out(reset):
    class Resp:
        status_code = 403
        headers = {"X-RateLimit-Reset": reset}

    err = rate_limit_error(Resp(), "https://api.example/x", now=40.0)
    assert "resets at" not in str(err)
