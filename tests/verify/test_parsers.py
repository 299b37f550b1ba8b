"""Which parsers verify uses without --parser, in which order, and which one gates the exit code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.parsing import PARSERS, Parser
from replicate.verify.api import default_parsers, parser_columns
from replicate.verify.claims_file import parse_claims

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"
needs_example = pytest.mark.skipif(
    not (EXAMPLE / "results").is_dir(), reason="the bundled example release (fixtures/example) is not present"
)

# The released readings (what the paper's scripts did) and the project's own correction.
RELEASED = ("umbrela-fallback@1", "umbrela-strict@1")
CORRECTED = "umbrela-checked@1"


def _claims(study: dict, *, pinned: str | None = None):
    claim = {"id": "c", "metric": "em", "run": "a", "value": "50", "unit": "percent"}
    if pinned:
        claim["parser"] = pinned
    return parse_claims({"study": study, "runs": {"a": ["a.jsonl"]}, "claims": [claim]},
                        path="c.toml", parsers=PARSERS.names())


def test_released_readings_come_first_and_the_correction_last():
    # registry order would put umbrela-checked@1 first (alphabetical); it must never gate by default
    assert PARSERS.names(family="umbrela")[0] == CORRECTED
    assert default_parsers(_claims({})) == (*RELEASED, CORRECTED)


def test_order_follows_the_released_field_not_names():
    # a released reading and a correction registered at run time: released=False goes last, whatever its name
    def first_digit(text: str) -> int | None:
        return next((int(c) for c in text if c in "0123"), None)

    extra = [Parser("umbrela-aaa@1", "a correction", first_digit, released=False),
             Parser("umbrela-zzz@1", "a released reading", first_digit)]
    for q in extra:
        PARSERS.register(q)
    try:
        assert PARSERS.names(family="umbrela")[0] == "umbrela-aaa@1"
        # released readings in registry order, then corrections in registry order
        assert default_parsers(_claims({})) == (*RELEASED, "umbrela-zzz@1", "umbrela-aaa@1", CORRECTED)
        # a [study] parser still comes first, even a correction
        assert default_parsers(_claims({"parser": "umbrela-aaa@1"})) == (
            "umbrela-aaa@1", *RELEASED, "umbrela-zzz@1", CORRECTED)
    finally:
        for q in extra:
            PARSERS.unregister(q.name)
    assert default_parsers(_claims({})) == (*RELEASED, CORRECTED)


def test_study_parser_comes_first():
    cf = _claims({"parser": "umbrela-strict@1"})
    assert default_parsers(cf) == ("umbrela-strict@1", "umbrela-fallback@1", CORRECTED)
    assert parser_columns(cf, None) == (default_parsers(cf), False)


def test_given_parsers_keep_their_order():
    cf = _claims({"parser": "umbrela-strict@1"})
    assert parser_columns(cf, [CORRECTED, "umbrela-fallback@1"]) == ((CORRECTED, "umbrela-fallback@1"), True)


def test_unknown_study_parser_is_reported_with_the_others():
    with pytest.raises(BadInput, match=r"\[study\]: unknown parser 'umbrela-fallbak@1' "
                                       r"\(did you mean 'umbrela-fallback@1'\?\); parsers: "):
        _claims({"parser": "umbrela-fallbak@1"})
    with pytest.raises(BadInput, match=r"\[study\]: parser must be a string"):
        _claims({"parser": 1})


@pytest.fixture
def one_claim(tmp_path, monkeypatch):
    """The example release and a claims file whose only claim reproduces under umbrela-fallback@1 only."""
    shutil.copytree(EXAMPLE, tmp_path / "example")
    monkeypatch.chdir(tmp_path)
    files = ["results/alpha-2024-05_annotations.jsonl", "results_2020/alpha-2024-05_annotations.jsonl"]

    def write(study_parser: str | None) -> str:
        study = "" if study_parser is None else f'parser = "{study_parser}"\n'
        Path("c.toml").write_text(
            f'[study]\ntitle = "t"\n{study}\n[runs]\n"alpha-2024-05" = ["{files[0]}", "{files[1]}"]\n'
            '\n[[claims]]\nid = "em"\nmetric = "em"\nrun = "alpha-2024-05"\nvalue = "47.1"\nunit = "percent"\n',
            encoding="utf-8",
        )
        return "c.toml"

    return write


def _verify(path, *extra):
    return CliRunner().invoke(app, ["verify", path, "--root", "example", "--date", "2026-01-01", *extra])


@needs_example
def test_without_parser_a_released_reading_gates(one_claim):
    result = _verify(one_claim(None))
    # 47.1% comes back under the released fallback reading (47.14%), not under the correction (47.57%)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        "1 of 1 claims match under umbrela-fallback@1; 0 of 1 under umbrela-strict@1; 0 of 1 under umbrela-checked@1"
    )


@needs_example
def test_study_parser_gates_when_no_parser_is_given(one_claim):
    result = _verify(one_claim("umbrela-strict@1"))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "Error: 1 claim(s) mismatch: em"
    assert result.stdout.splitlines()[-1].startswith("0 of 1 claims match under umbrela-strict@1; 1 of 1 under")


@needs_example
def test_first_given_parser_gates(one_claim):
    path = one_claim("umbrela-fallback@1")
    assert _verify(path, "--parser", CORRECTED, "--parser", "umbrela-fallback@1").exit_code == 1
    assert _verify(path, "--parser", "umbrela-fallback@1", "--parser", CORRECTED).exit_code == 0


def test_a_study_parser_brings_its_family_with_the_same_labels_only():
    # arena-hard-last@1 reads the same five verdicts as arena-hard@1: an alternative reading
    assert PARSERS.get("arena-hard@1").label_set == PARSERS.get("arena-hard-last@1").label_set
    assert default_parsers(_claims({"parser": "arena-hard@1"})) == ("arena-hard@1", "arena-hard-last@1")
    # mtbench-pair@1 shares the family but reads verdicts, not 1-10 ratings; no umbrela parser joins either
    assert PARSERS.get("mtbench-single@1").label_set != PARSERS.get("mtbench-pair@1").label_set
    assert default_parsers(_claims({"parser": "mtbench-single@1"})) == ("mtbench-single@1",)
    # a study naming an umbrela parser keeps every umbrela reading, as before
    assert default_parsers(_claims({"parser": "umbrela-strict@1"})) == ("umbrela-strict@1", "umbrela-fallback@1",
                                                                         CORRECTED)


def test_verify_without_parser_on_an_mtbench_release_uses_its_study_parser_alone(tmp_path):
    claims = ROOT / "docs" / "case-studies" / "mtbench" / "claims.toml"
    out = tmp_path / "note.md"
    result = CliRunner().invoke(app, ["verify", str(claims), "--root", str(ROOT / "tests/readers/data/fastchat/real"),
                                      "--date", "2026-12-04", "--no-plots", "--out", str(out)])
    assert result.exit_code == 0, result.output
    note = out.read_text()
    assert "umbrela" not in note
    assert "recomputed under mtbench-single@2, the claims file's parser" in note
    assert "Check passed: no claim mismatches under mtbench-single@2." in note
