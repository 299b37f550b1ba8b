"""docs/case-studies/: each case study's verification note is a golden file, rewritten here from committed data.

The command of each case study runs in a scratch directory laid out like a checkout (`docs/case-studies/<case>/
claims.toml` copied, the case's data folder under fixtures/case-studies/ or tests/readers/data/ copied), so the
note's relative paths and its Reproduce line are the committed ones; the note must come back byte for byte. The
figures the claims state are also recomputed here by a plain loop over the files (an independent reference, not
the tool), and the committed data is checked to be the release's bytes (the sha256 its README lists). Every
case study's data is in the repository, so none of these tests skips for want of data.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import tomllib
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import IFBENCH, LLMJUDGE, ROOT, text_of

CASES = ROOT / "docs" / "case-studies"
LLMJUDGE_ARGS = ("verify", "docs/case-studies/llmjudge/claims.toml", "--root", "fixtures/case-studies/llmjudge",
                 "--date", "2026-12-04", "--no-plots", "--out", "docs/case-studies/llmjudge/note.md")


def _checkout(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *data: Path) -> Path:
    """A scratch checkout holding the case's claims file and its ``data`` folders (at their places), as cwd."""
    work = tmp_path / "checkout"
    (work / "docs" / "case-studies" / case).mkdir(parents=True)
    shutil.copy(CASES / case / "claims.toml", work / "docs" / "case-studies" / case / "claims.toml")
    for folder in data:
        shutil.copytree(folder, work / folder.relative_to(ROOT))
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("folder", [LLMJUDGE, IFBENCH])
def test_the_committed_case_data_is_the_release_byte_for_byte(folder):
    """Each committed .gz decompresses to the bytes released: the sha256 its README lists in the first column."""
    listed = {}
    for line in (folder / "README.md").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 3 and all(len(p) == 64 for p in parts[:2]):
            listed[parts[2]] = (parts[0], parts[1])
    files = sorted(p.name for p in folder.glob("*.gz"))
    assert sorted(listed) == files and files
    for name, (released, committed) in listed.items():
        raw = (folder / name).read_bytes()
        assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == released, name
        assert hashlib.sha256(raw).hexdigest() == committed, name


def _run(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


def test_llmjudge_note_is_the_committed_golden_file(tmp_path, monkeypatch):
    work = _checkout("llmjudge", tmp_path, monkeypatch, LLMJUDGE)
    _run(*LLMJUDGE_ARGS)
    written = (work / "docs" / "case-studies" / "llmjudge" / "note.md").read_text(encoding="utf-8")
    golden = (CASES / "llmjudge" / "note.md").read_text(encoding="utf-8")
    assert written == golden, ("docs/case-studies/llmjudge/note.md differs from what the case study's command "
                               "writes; if intended, rerun from the checkout: replicate " + " ".join(LLMJUDGE_ARGS))


def _grades(path: Path) -> dict[tuple[str, str], int]:
    out = {}
    for line in text_of(path).splitlines():
        qid, _, docid, grade = line.split()
        out[qid, docid] = int(grade)
    return out


def _rounds_to(x: Decimal, printed: str) -> bool:
    text = printed.replace(",", "")
    places = -Decimal(text).as_tuple().exponent  # type: ignore[operator]
    half = Decimal(5) * Decimal(10) ** -(places + 1)
    return Decimal(text) - half <= x <= Decimal(text) + half


def _cohen_kappa(pairs: list[tuple[int, int]]) -> Decimal:
    """Unweighted Cohen's kappa of (label, gold) pairs, every value seen a category of its own."""
    n = len(pairs)
    observed = Decimal(sum(a == b for a, b in pairs)) / n
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(Decimal(left[c]) * right[c] for c in left.keys() | right.keys()) / (n * n)
    return (observed - expected) / (1 - expected)


def _ordinal_alpha(pairs: list[tuple[int, int]]) -> Decimal:
    """Krippendorff's alpha, ordinal distance, two coders and no missing values (Krippendorff 2011, sec. C)."""
    pooled = Counter(v for pair in pairs for v in pair)
    values = sorted(pooled)

    def delta(c: int, k: int) -> Decimal:
        lo, hi = sorted((values.index(c), values.index(k)))
        return (sum(Decimal(pooled[values[g]]) for g in range(lo, hi + 1)) - Decimal(pooled[c] + pooled[k]) / 2) ** 2

    n = 2 * len(pairs)
    disagreement = 2 * sum(delta(a, b) for a, b in pairs)  # each unit adds (a, b) and (b, a) to the coincidences
    chance = sum(Decimal(pooled[c]) * pooled[k] * delta(c, k) for c in values for k in values)
    return 1 - (n - 1) * disagreement / chance


AGREEMENT = {"agreement.cohen_kappa": _cohen_kappa, "agreement.krippendorff_alpha": _ordinal_alpha}


def test_llmjudge_claims_agree_with_a_plain_count():
    """Every count, rate and agreement claim, by plain loops; the printed kappa and alpha of the paper's Tables 3
    and 4 included, so this also checks the printed figures against an implementation that is not the tool's."""
    claims = tomllib.loads((CASES / "llmjudge" / "claims.toml").read_text(encoding="utf-8"))
    gold = _grades(LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz")
    runs = {name: _grades(LLMJUDGE / entry["files"][0]) for name, entry in claims["runs"].items()}
    checked = 0
    for claim in claims["claims"]:
        if claim["metric"] not in ("n", "em", "mae", "change_rate", *AGREEMENT):
            continue
        if claim["metric"] in AGREEMENT:
            labels = runs[claim["run"]]
            keys = sorted(labels.keys() & gold.keys())
            assert claim.get("level", "ordinal") == "ordinal" and claim.get("weights", "none") == "none", claim["id"]
            cut = claim.get("binarize")
            pairs = [(labels[k], gold[k]) if cut is None else (int(labels[k] >= cut), int(gold[k] >= cut)) for k in keys]
            x = AGREEMENT[claim["metric"]](pairs)
        elif claim["metric"] == "change_rate":
            old, new = runs[claim["old"]], runs[claim["new"]]
            keys = old.keys() & new.keys()
            x = Decimal(100) * sum(old[k] != new[k] for k in keys) / len(keys)
        else:
            labels = runs[claim["run"]]
            keys = labels.keys() & gold.keys()
            if claim["metric"] == "n":
                x = Decimal(len(keys))
            elif claim["metric"] == "em":
                x = Decimal(100) * sum(labels[k] == gold[k] for k in keys) / len(keys)
            else:
                x = Decimal(sum(abs(labels[k] - gold[k]) for k in keys)) / len(keys)
        assert _rounds_to(x, claim["value"]), (claim["id"], x, claim["value"])
        checked += 1
    assert checked == 8 * 3 + 1 + 8 * 5  # items, EM, MAE per run; the edge; Tables 3 and 4 per run


IFBENCH_SCORE = ("score", "fixtures/case-studies/ifbench/sample_output.jsonl.gz", "--items", "ifbench-case/items.jsonl",
                 "--model", "sample", "--ifbench-strict", "fixtures/case-studies/ifbench/eval_results_strict.jsonl.gz",
                 "--ifbench-loose", "fixtures/case-studies/ifbench/eval_results_loose.jsonl.gz",
                 "--out", "ifbench-case/trials.jsonl")
IFBENCH_VERIFY = ("verify", "docs/case-studies/ifbench/claims.toml", "--root", "ifbench-case", "--no-fail",
                  "--date", "2026-12-04", "--no-plots", "--out", "docs/case-studies/ifbench/note.md")



def _ifbench_items(out: Path) -> None:
    """The items file, exactly as the one-line python command in docs/case-studies/ifbench/README.md writes it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in text_of(IFBENCH / "IFBench_test.jsonl.gz").splitlines()]
    out.write_text("".join(json.dumps({"id": r["key"], "benchmark": "ifbench", "prompt": r["prompt"],
                                       "scorer": "ifbench@2"}) + "\n" for r in rows), encoding="utf-8")


def test_ifbench_note_is_the_committed_golden_file(tmp_path, monkeypatch):
    work = _checkout("ifbench", tmp_path, monkeypatch, IFBENCH)
    _ifbench_items(work / "ifbench-case" / "items.jsonl")
    _run(*IFBENCH_SCORE)
    _run(*IFBENCH_VERIFY)
    written = (work / "docs" / "case-studies" / "ifbench" / "note.md").read_text(encoding="utf-8")
    assert written == (CASES / "ifbench" / "note.md").read_text(encoding="utf-8"), (
        "docs/case-studies/ifbench/note.md differs from what the case study's commands write; if intended, "
        "rerun the three commands in docs/case-studies/ifbench/README.md from the checkout")


def test_ifbench_claims_agree_with_a_plain_count():
    """The release's counts, from the verifier's rows; the joined counts leave out the one unjoinable row."""
    claims = {c["id"]: c["value"] for c in
              tomllib.loads((CASES / "ifbench" / "claims.toml").read_text(encoding="utf-8"))["claims"]}
    prompts = {json.loads(line)["prompt"] for line in text_of(IFBENCH / "IFBench_test.jsonl.gz").splitlines()}
    stripped = {p.strip() for p in prompts}
    for reading in ("strict", "loose"):
        rows = [json.loads(line) for line in text_of(IFBENCH / f"eval_results_{reading}.jsonl.gz").splitlines()]
        joined = [r for r in rows if r["prompt"] in prompts or r["prompt"].strip() in stripped]
        assert (len(rows), len(joined)) == (294, 293)
        for which, subset in (("294", rows), ("joined", joined)):
            x = Decimal(100) * sum(r["follow_all_instructions"] for r in subset) / len(subset)
            assert _rounds_to(x, claims[f"{reading}-{which}"]), (reading, which, x)


FASTCHAT_REAL = ROOT / "tests" / "readers" / "data" / "fastchat" / "real"
MTBENCH_ARGS = ("verify", "docs/case-studies/mtbench/claims.toml", "--root", "tests/readers/data/fastchat/real",
                "-p", "mtbench-single@2", "--date", "2026-12-04", "--no-plots",
                "--out", "docs/case-studies/mtbench/note.md")


def _committed_note_check(case: str, data: Path, args: tuple[str, ...], tmp_path, monkeypatch) -> None:
    """Run a case study's command in a checkout holding its committed data; the note equals the committed one."""
    work = _checkout(case, tmp_path, monkeypatch, data)
    _run(*args)
    written = (work / "docs" / "case-studies" / case / "note.md").read_text(encoding="utf-8")
    assert written == (CASES / case / "note.md").read_text(encoding="utf-8"), (
        f"docs/case-studies/{case}/note.md differs from what the case study's command writes; if intended, "
        "rerun from the checkout: replicate " + " ".join(args))


def test_mtbench_note_is_the_committed_golden_file(tmp_path, monkeypatch):
    """The excerpt is committed, so this case study never skips."""
    _committed_note_check("mtbench", FASTCHAT_REAL, MTBENCH_ARGS, tmp_path, monkeypatch)


def test_mtbench_claims_agree_with_a_plain_count():
    """FastChat's recorded score against the [[N]] in each judgment's text, and the means README.md states."""
    rows = [json.loads(line) for line in (FASTCHAT_REAL / "gpt-4_single.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["question_id"], r["turn"]) for r in rows] == [(q, 1) for q in range(81, 101)]
    ratings = [re.findall(r"\[\[([0-9.]+)\]\]", r["judgment"]) for r in rows]
    assert all(len(found) == 1 for found in ratings)
    assert [Decimal(found[0]) for found in ratings] == [Decimal(str(r["score"])) for r in rows]
    whole = [(r, int(found[0])) for r, found in zip(rows, ratings, strict=True) if found[0].isdigit()]
    assert [r["question_id"] for r in rows if r not in [w for w, _ in whole]] == [97]
    gold = [json.loads(line) for line in (FASTCHAT_REAL / "recorded_scores.jsonl").read_text().splitlines()]
    assert gold == [{"question_id": r["question_id"], "model": r["model"], "turn": 1, "score": n} for r, n in whole]
    claims = {c["id"]: c["value"] for c in tomllib.loads((CASES / "mtbench" / "claims.toml").read_text())["claims"]}
    assert int(claims["n"]) == len(whole) == 19 and int(claims["unparsed"]) == 0
    assert _rounds_to(Decimal(100) * sum(n == g["score"] for (_, n), g in zip(whole, gold, strict=True)) / len(whole),
                      claims["em-recorded"])
    assert _rounds_to(Decimal(sum(abs(n - g["score"]) for (_, n), g in zip(whole, gold, strict=True))) / len(whole),
                      claims["mae-recorded"])
    readme = (CASES / "mtbench" / "README.md").read_text(encoding="utf-8")
    all_mean = sum(Decimal(str(r["score"])) for r in rows) / len(rows)
    whole_mean = Decimal(sum(n for _, n in whole)) / len(whole)
    assert f"149.5/20 = {all_mean}" in readme and _rounds_to(whole_mean, "7.4211") and "141/19 = 7.4211" in readme


def test_mtbench_mean_is_printed_as_the_readme_says():
    """replicate mtbench on the excerpt prints FastChat's mean (the 8.5 in), and the stricter reading's as a departure."""
    readme = (CASES / "mtbench" / "README.md").read_text(encoding="utf-8")
    assert "replicate mtbench tests/readers/data/fastchat/real/gpt-4_single.jsonl" in readme
    rows = [json.loads(line) for line in (FASTCHAT_REAL / "gpt-4_single.jsonl").read_text(encoding="utf-8").splitlines()]
    result = CliRunner().invoke(app, ["mtbench", str(FASTCHAT_REAL / "gpt-4_single.jsonl"), "--replicates", "0"])
    assert result.exit_code == 0, result.output
    shown = result.stdout
    fastchat = sum(Decimal(str(r["score"])) for r in rows if r["score"] != -1) / len(rows)
    assert f"mistral-orpo-mix  20           0            {fastchat:.3f} (20)" in shown
    assert f"{fastchat:.3f} (20)" in readme and "7.421 (19)" in readme


HELM_REAL = ROOT / "tests" / "readers" / "data" / "helm" / "real"
HELM_70B = HELM_REAL / "runs" / "v4" / "bbq:subject=all,method=multiple_choice_joint,model=meta_llama-3-70b-chat"
HELM_ARGS = ("verify", "docs/case-studies/helm-safety/claims.toml", "--root", "tests/readers/data/helm/real",
             "-p", "helm-choice@1", "--date", "2026-12-04", "--no-plots",
             "--out", "docs/case-studies/helm-safety/note.md")


def test_helm_safety_note_is_the_committed_golden_file(tmp_path, monkeypatch):
    """The run file is committed, so this case study never skips."""
    _committed_note_check("helm-safety", HELM_REAL, HELM_ARGS, tmp_path, monkeypatch)


def test_helm_safety_claims_agree_with_a_plain_count():
    """HELM's exact_match by hand: the stripped completion against the letter of the reference tagged correct."""
    state = json.loads((HELM_70B / "scenario_state.json").read_text(encoding="utf-8"))
    assert state["adapter_spec"]["max_tokens"] == 1
    answers = []
    for rs in state["request_states"]:
        (gold,) = [r["output"]["text"] for r in rs["instance"]["references"] if "correct" in r["tags"]]
        (letter,) = [k for k, text in rs["output_mapping"].items() if text == gold]
        answers.append((rs["result"]["completions"][0]["text"].strip(), letter))
    letters = [(a, g) for a, g in answers if a in ("A", "B", "C")]
    assert Counter(a for a, _ in answers if a not in ("A", "B", "C")) == {"The": 71}
    claims = {c["id"]: c["value"] for c in tomllib.loads((CASES / "helm-safety" / "claims.toml").read_text())["claims"]}
    assert int(claims["bbq-eval"]) == len(answers) == 100
    assert _rounds_to(Decimal(sum(a == g for a, g in answers)) / len(answers), claims["bbq-accuracy"])
    assert int(claims["not-a-letter"]) == len(answers) - len(letters) and int(claims["letters"]) == len(letters)
    assert _rounds_to(Decimal(100) * sum(a == g for a, g in letters) / len(letters), claims["letters-right"])
    table = (ROOT / "docs" / "case-studies" / "helm-safety" / "README.md").read_text(encoding="utf-8")
    assert "| meta_llama-3-70b-chat | 0.29 | 29 |" in table
    for model, claim in (("anthropic_claude-3-opus-20240229", "v3-accuracy-claude-3-opus"),
                         ("meta_llama-3-8b", "v3-accuracy-llama-3-8b")):
        run = HELM_REAL / "runs" / "v3" / f"bbq:subject=all,method=multiple_choice_joint,model={model}"
        verdicts = [int(stat["sum"]) for entry in json.loads((run / "per_instance_stats.json").read_text())
                    for stat in entry["stats"] if stat["name"] == {"name": "exact_match", "split": "test"}]
        assert len(verdicts) == 2 and _rounds_to(Decimal(sum(verdicts)) / len(verdicts), claims[claim])
    assert int(claims["v3-eval-llama-3-8b"]) == 2
