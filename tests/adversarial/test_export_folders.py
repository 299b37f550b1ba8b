"""Issue 30, item 2: `export ifbench` gives each model a folder of its own (a/b and a_b no longer share one)."""

from __future__ import annotations

import json

import orjson
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.scoring.export import folder_name


def _archive(tmp_path, models):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "p0", "benchmark": "ifbench", "prompt": "Write.", "scorer": "ifbench@2"}) + "\n")
    recs = [{"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x",
             "items": {}}]
    recs += [{"type": "trial", "model": m, "item": "p0", "trial": 0, "text": f"reply of {m}", "finish_reason": "stop",
              "refusal": None, "usage": {}, "error_kind": None} for m in models]
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    return arch, items


def test_slash_and_underscore_models_keep_their_own_responses(tmp_path):
    models = ["a/b", "a_b", "a%2Fb", "..", ".hidden", ""]
    arch, items = _archive(tmp_path, models)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["export", "ifbench", str(arch), "--items", str(items), "--out", str(out),
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    files = json.loads(res.stdout)["files"]
    assert len(files) == len(models)  # one file per model, none overwritten
    got = {}
    for rel in files:
        assert (out / rel).resolve().parent.parent == out.resolve()  # inside --out, one folder deep
        got[rel.split("/")[0]] = [json.loads(x)["response"] for x in (out / rel).read_text().splitlines()]
    assert got == {folder_name(m): [f"reply of {m}"] for m in models}
    assert folder_name("a/b") == "a%2Fb" and folder_name("a_b") == "a_b" and folder_name("a%2Fb") == "a%252Fb"


def test_names_equal_but_for_case_are_refused(tmp_path):
    arch, items = _archive(tmp_path, ["Org/Model", "org/model"])
    res = CliRunner().invoke(app, ["export", "ifbench", str(arch), "--items", str(items), "--out",
                                   str(tmp_path / "out")])
    assert res.exit_code == 2 and "would share the folder" in res.output
    assert not (tmp_path / "out").exists()
