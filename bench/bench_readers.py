"""Benchmark: each reader beside the straightforward script on the same SYNTHETIC files.

Writes, into a temp dir, files in the exact shapes the readers take
(seeded, so every run writes the same bytes):

- ``umbrela-judge@1``: UMBRELA judge JSONL (model, qid, docid, query, passage,
  prompt, prediction, judgment, result_status), default 100,000 lines;
- ``judge-jsonl@1``: flat JSONL (query_id, corpus_id, original_qrel_score,
  model_output), default 100,000 lines;
- ``trec-qrels@1``: TREC qrels ``qid 0 docid grade``, default 500,000 lines;
- ``gold-jsonl@1``: gold-only JSONL (query_id, corpus_id, original_qrel_score),
  default 500,000 lines;
- ``helm-run@1``: a HELM run directory (tests/support/synth/helm_runs.py),
  default 5,000 predictions (10,000 entries of per_instance_stats.json, two
  metric classes; a tenth perturbed), read with ``--correct-field exact_match``;
- ``inspect-log@1``: an inspect_ai ``.eval`` zip (tests/support/synth/inspect_logs.py),
  default 20,000 samples, scorer ``match``, through the built-in reader of the layout.

For each it times, best of three:

- straightforward: read bytes, orjson.loads per line into a dict per run
  (key -> output), or for qrels a plain split-lines loop into a dict; for
  HELM, orjson.loads of per_instance_stats.json and a dict (instance,
  perturbation) -> exact_match; for inspect, zipfile and orjson.loads per
  sample member into a dict id -> match verdict;
- ours: ``replicate.judge.load.load_run`` with the reader named (every check,
  duplicate detection, line origins and the sha256 provenance included).

Both must hold the same items (every value, for the verdict readers). Prints
each time and the ratio ours / straightforward (the target: within 2x of bare
orjson).

    python bench/bench_readers.py [--small]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import orjson

from replicate.diagnostics import Diagnostics

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from replicate.judge.load import load_run
from replicate.judge.model import KEY_SEP
from replicate.reading.contract import ReadOptions
from support.synth import helm_runs as hr, inspect_logs as il  # noqa: E402

PROMPT = ("Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following "
          "meanings: ... Query: {q}\nPassage: {p}\nSplit this problem into steps: ... ##final score:")
ANSWERS = ["##final score: 0", "##final score: 1", "##final score: 2", "##final score: 3", "I cannot tell."]


def write_umbrela(path: Path, n: int, rng: random.Random) -> None:
    with path.open("wb") as f:
        for i in range(n):
            q, d = f"q{i // 100}", f"p{i}"
            query, passage = f"query text {i // 100}", f"passage text number {i} " * 3
            pred = "The passage partly answers the query.\n\n" + rng.choice(ANSWERS)
            f.write(orjson.dumps({"model": "gpt-4o", "qid": q, "docid": d, "query": query, "passage": passage,
                                  "prompt": PROMPT.format(q=query, p=passage), "prediction": pred,
                                  "judgment": rng.randrange(4), "result_status": 1}) + b"\n")


def write_jsonl(path: Path, n: int, rng: random.Random) -> None:
    with path.open("wb") as f:
        for i in range(n):
            f.write(orjson.dumps({"query_id": str(19335 + i // 200), "corpus_id": str(1000000 + i),
                                  "original_qrel_score": float(rng.randrange(4)),
                                  "model_output": "Reasoning about relevance. " + rng.choice(ANSWERS)}) + b"\n")


def write_gold(path: Path, n: int, rng: random.Random) -> None:
    with path.open("wb") as f:
        for i in range(n):
            f.write(orjson.dumps({"query_id": f"q{i // 50}", "corpus_id": f"p{i}", "original_qrel_score": rng.randrange(4)}) + b"\n")


def plain_gold(path: Path) -> dict:
    loads = orjson.loads
    out = {}
    for line in path.read_bytes().splitlines():
        r = loads(line)
        out[(r["query_id"], r["corpus_id"])] = r["original_qrel_score"]
    return out


def write_qrels(path: Path, n: int, rng: random.Random) -> None:
    path.write_text("".join(f"q{i // 50} 0 p{i} {rng.randrange(4)}\n" for i in range(n)))


def plain_umbrela(path: Path) -> dict:
    loads = orjson.loads
    out = {}
    for line in path.read_bytes().splitlines():
        r = loads(line)
        out[(r["qid"], r["docid"])] = r["prediction"]
    return out


def plain_jsonl(path: Path) -> dict:
    loads = orjson.loads
    out = {}
    for line in path.read_bytes().splitlines():
        r = loads(line)
        out[(r["query_id"], r["corpus_id"])] = r["model_output"]
    return out


def plain_qrels(path: Path) -> dict:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, d, g = line.split()
        out[(q, d)] = int(g)
    return out


def write_helm(path: Path, n: int, rng: random.Random) -> None:
    """A HELM run directory of ``n`` predictions (a tenth of them perturbed by typos)."""
    preds = []
    for i in range(n):
        gold = rng.randrange(4)
        pert = hr.TYPOS if i % 10 == 9 else None
        iid = f"id{i - 1}" if pert is not None else f"id{i}"
        preds.append(hr.Prediction(iid, "test" if i % 5 else "valid", gold, gold if rng.random() < 0.6 else (gold + 1) % 4,
                                   pert, runtime=round(rng.uniform(0.2, 2.0), 3)))
    hr.write_run(path, "example/model-a", preds)


def plain_helm(path: Path) -> dict:
    out = {}
    for e in orjson.loads((path / "per_instance_stats.json").read_bytes()):
        pert = e.get("perturbation")
        key = (e["instance_id"],) if pert is None else (e["instance_id"], pert["name"])
        for s in e["stats"]:
            if s["name"]["name"] == "exact_match":
                out[key] = int(s["mean"])
    return out


def write_inspect(path: Path, n: int, rng: random.Random) -> None:
    samples = [il.Sample(i, {"match": rng.choice("CI")}) for i in range(1, n + 1)]
    il.write_eval_log(path, samples, model="example/model-a")


def plain_inspect(path: Path) -> dict:
    out = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if name.startswith("samples/"):
                s = orjson.loads(zf.read(name))
                out[(str(s["id"]),)] = int(s["scores"]["match"]["value"] == "C")
    return out


#: Reader options of the verdict readers.
OPTIONS = {"helm-run@1": {"correct_field": "exact_match"}, "inspect-log@1": {"scorer": "match", "log_reader": "builtin"}}


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a tenth of the sizes (quick check)")
    args = ap.parse_args(argv)
    scale = 0.1 if args.small else 1.0
    rng = random.Random(20251202)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        cases = [
            ("umbrela-judge@1", d / "umbrela.jsonl", write_umbrela, plain_umbrela, int(100_000 * scale)),
            ("judge-jsonl@1", d / "judge.jsonl", write_jsonl, plain_jsonl, int(100_000 * scale)),
            ("trec-qrels@1", d / "run.txt", write_qrels, plain_qrels, int(500_000 * scale)),
            ("gold-jsonl@1", d / "gold.jsonl", write_gold, plain_gold, int(500_000 * scale)),
            ("helm-run@1", d / "runs" / "v1" / "mmlu:subject=anatomy,model=a", write_helm, plain_helm, int(5_000 * scale)),
            ("inspect-log@1", d / "a.eval", write_inspect, plain_inspect, int(20_000 * scale)),
        ]
        print(f"{'reader':<16} {'lines':>8} {'MB':>7} {'straightforward s':>18} {'ours s':>8} {'ratio':>6}")
        for name, path, write, plain, n in cases:
            write(path, n, rng)
            t_plain, ref = best(lambda: plain(path))  # noqa: B023
            opts = ReadOptions(extra=OPTIONS.get(name, {}))
            t_ours, run = best(lambda: load_run("r", path, reader=name, diagnostics=Diagnostics(), options=opts))  # noqa: B023
            assert isinstance(ref, dict) and len(ref) == len(run) == n  # type: ignore[arg-type]
            first = tuple(run.keys[0].split(KEY_SEP))  # type: ignore[attr-defined]
            value = run.outputs[0] if run.labels is None else int(run.labels[0])  # type: ignore[attr-defined]
            if name == "gold-jsonl@1":  # gold alone: every grade agrees
                value = int(run.gold[0])  # type: ignore[attr-defined]
                assert dict(zip((tuple(k.split(KEY_SEP)) for k in run.keys.tolist()), run.gold.tolist())) == ref  # type: ignore[attr-defined]
            assert ref[first] == value, (name, first)
            if name in OPTIONS:  # verdicts: every one agrees
                ours = dict(zip((tuple(k.split(KEY_SEP)) for k in run.keys.tolist()), run.labels.tolist()))  # type: ignore[attr-defined]
                assert ours == ref, name
            mb = (path / "per_instance_stats.json" if path.is_dir() else path).stat().st_size / 1e6
            print(f"{name:<16} {n:>8} {mb:>7.1f} {t_plain:>18.3f} {t_ours:>8.3f} {t_ours / t_plain:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
