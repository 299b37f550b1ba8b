"""The worked audit's claims file stays valid, and its printed figures agree with its printed cells."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from replicate.errors import BadInput
from replicate.parsing import PARSERS
from replicate.printed import Verdict, match
from replicate.stats.fourcell import FourCell
from replicate.verify.claims_file import parse_claims

DOC = Path(__file__).resolve().parents[2] / "docs" / "worked-audit.md"


def _claims_toml() -> str:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "the worked audit has one claims file"
    return blocks[0]


def test_placeholders_are_reported_together():
    data = tomllib.loads(_claims_toml())
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="backbone-claims.toml", parsers=PARSERS.names())
    assert str(info.value) == (
        "backbone-claims.toml: 2 problems in the claims file:\n"
        "claim 't1-em-gpt-4o-mini': value 'COPY FROM TABLE 1' is not a number as printed "
        "(e.g. \"28.0\", \"0.77\", \"6,252\")\n"
        "claim 't1-em-gpt-5-mini': value 'COPY FROM TABLE 1' is not a number as printed "
        "(e.g. \"28.0\", \"0.77\", \"6,252\")"
    )


def test_edge_claims_match_the_printed_cells():
    data = tomllib.loads(_claims_toml().replace("COPY FROM TABLE 1", "50.0"))
    cf = parse_claims(data, path="backbone-claims.toml", parsers=PARSERS.names())
    cells = FourCell(both=6252, only_old=5776, only_new=1455, neither=7163)
    from replicate.verify.recompute import EdgeFigures

    edge = EdgeFigures("gpt-4o-mini", "gpt-5-mini", "-", "intersect", cells, 0, cells.n, 0, 0)
    checked = 0
    for c in cf.claims:
        if c.scope == "edge" and c.metric != "change_rate":
            assert match(c.printed, edge.value(c.metric)).verdict is Verdict.match, c.id
            checked += 1
    assert checked == 9
