"""Reading a K-trial archive: resuming a collection and ``replicate score``, against plain streaming loops.

A SYNTHETIC archive as ``replicate collect`` writes it: 3 models x N items x K trials, each trial record
with a response of about 1 KB (filler words, then a ``Final answer:`` line, right on about 60% of the
trials), 1% API errors of which a tenth are retried and superseded by a later record, a resume record
in the middle. Fresh interpreters, interleaved in each round (CPU is user + sys; peak memory each
process's own VmHWM, bench/peak_rss.py):

- resume: ``open_for_collection`` (what ``replicate collect`` does before it sends a request: the archive
  read and checked, its done set and API errors kept, a resume record appended) against the plain loop
  (open, for each line ``orjson.loads``, keep the (model, item, trial) keys in a set; print the trials
  done per model); ``replicate collect --dry-run -f json`` as a whole process (its plan too); and
  ``replicate collect`` itself resuming the archive, every trial already recorded, so nothing is sent;
- score: ``replicate score --out trials.jsonl -f json`` against the plain loop (for each line
  ``orjson.loads``, score the trial with the same scorer, categorize it, keep the category in a dict keyed
  by (model, item, trial), a retried error's key replaced; then write a JSONL row per trial and print the
  counts per model and category).

The two must agree: trials done per model; counts per model and category; at ``--small``, the table's
(model, item, trial, category) rows too. ``--before DIR`` also runs the package found in DIR (its
``replicate`` folder) and requires its output to be byte-identical to ours; it reads the whole file, so
keep its archive small (``--before-k``). Children run with their address space bounded (``--limit-gb``).

Usage::

    python bench/bench_archive.py [--small] [--items N] [--k K] [--rounds R] [--before DIR [--before-k K]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replicate.collect.archive import make_header  # noqa: E402
from replicate.collect.config import load_config, load_items  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_items import child  # noqa: E402  (a fresh interpreter's CPU, peak RSS and stdout)

MODELS = ("m1", "m2", "m3")
WORDS = [b"the", b"answer", b"follows", b"from", b"adding", b"both", b"numbers", b"carefully", b"so", b"we",
         b"check", b"each", b"step", b"again", b"before", b"writing", b"it", b"down"]

CONFIG = """[endpoint]
base_url = "http://127.0.0.1:9/v1"
api_key_env = "BENCH_ARCHIVE_KEY"

[collection]
models = ["m1", "m2", "m3"]
k = {k}
seed = 7

[params]
temperature = 1.0
"""

PLAIN_RESUME = r"""
import sys
import orjson
done = set()
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        r = orjson.loads(line)
        if r.get("type") == "trial":
            done.add((r["model"], r["item"], r["trial"]))
per = {}
for m, _, _ in done:
    per[m] = per.get(m, 0) + 1
print(orjson.dumps(dict(sorted(per.items()))).decode())
"""

RESUME = r"""
import sys
import orjson
from replicate.collect.archive import ArchiveLock, open_for_collection
from replicate.collect.config import load_config, load_items
config, items = load_config(sys.argv[1]), load_items(sys.argv[2])
with ArchiveLock(sys.argv[3]):
    opened = open_for_collection(sys.argv[3], config, items)  # appends a resume record
    opened.writer.close()
per = {}
for m, _, _ in opened.done:
    per[m] = per.get(m, 0) + 1
print(orjson.dumps(dict(sorted(per.items()))).decode())
"""

PLAIN_SCORE = r"""
import sys
import orjson
from replicate.scoring import SCORERS
from replicate.scoring.base import CATEGORIES, ScoreInput, categorize
from replicate.scoring.refusal import get_detector
items = {}
with open(sys.argv[2], "rb") as fh:
    for line in fh:
        it = orjson.loads(line)
        items[it["id"]] = it
scorer = SCORERS.get("final-answer-line@1")
detector = get_detector("refusal-phrases@1")
cats = {}
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        r = orjson.loads(line)
        if r.get("type") != "trial":
            continue
        verdict, fires = None, False
        if not (r["error_kind"] or r["finish_reason"] in ("length", "content_filter") or r["refusal"]):
            verdict = scorer.judge(ScoreInput(r["text"] or "", items[r["item"]]["reference"], None, {}))
            fires = verdict.answer is None and detector(r["text"])
        key = (r["model"], r["item"], r["trial"])
        cats.pop(key, None)  # a retried API error: the later record stands
        cats[key] = categorize(error_kind=r["error_kind"], finish_reason=r["finish_reason"], refusal=r["refusal"],
                               verdict=verdict, detector_says_refusal=fires)
counts = {}
with open(sys.argv[3], "wb") as out:
    for (m, i, t), c in cats.items():
        out.write(orjson.dumps({"model": m, "item": i, "trial": t, "category": c}) + b"\n")
        counts.setdefault(m, dict.fromkeys(CATEGORIES, 0))[c] += 1
print(orjson.dumps(counts).decode())
"""


def write_inputs(top: Path, n_items: int, k: int, seed: int = 0) -> tuple[Path, Path, Path, int]:
    """The config, the items and the archive (written as drawn); returns their paths and the trial records."""
    cfg_path, items_path, arch = top / f"config_{k}.toml", top / f"items_{n_items}.jsonl", top / f"archive_{n_items}x{k}.jsonl"
    cfg_path.write_text(CONFIG.format(k=k), encoding="utf-8")
    refs = [str(7 + i % 50) for i in range(n_items)]
    with items_path.open("wb") as fh:
        for i in range(n_items):
            fh.write(orjson.dumps({"id": f"q{i:05d}", "benchmark": f"b{i % 3}",
                                   "prompt": f"What is {i % 50} + 7? End with a line 'Final answer: N'.",
                                   "reference": refs[i], "scorer": "final-answer-line@1",
                                   "metadata": {"difficulty": "easy" if i % 2 else "hard"}}) + b"\n")
    config, items = load_config(cfg_path), load_items(items_path)
    rng = np.random.default_rng(seed)
    filler = [b" ".join(rng.choice(WORDS, 190)) for _ in range(64)]
    n = 0
    retried: list[bytes] = []
    with arch.open("wb") as fh:
        fh.write(orjson.dumps(make_header(config, items)) + b"\n")
        for mi, model in enumerate(MODELS):
            if mi == 1:
                fh.write(b'{"type":"resume","ts":"2026-12-06T00:00:00+00:00","config":{},"seed":7,'
                         b'"already_done":%d,"torn_bytes_discarded":0}\n' % n)
            ok = rng.random((n_items, k)) < 0.6
            err = rng.random((n_items, k)) < 0.01
            pick = rng.integers(0, len(filler), (n_items, k))
            for i in range(n_items):
                lines = []
                for t in range(k):
                    head = b'{"type":"trial","model":"%s","item":"q%05d","trial":%d,' % (model.encode(), i, t)
                    if err[i, t]:
                        line = head + (b'"text":null,"finish_reason":null,"refusal":null,"usage":{},'
                                       b'"error_kind":"http_500","error_message":"HTTP 500","ts":"2026-12-06T01:00:00+00:00"}')
                        if (i + t) % 10 == 0:
                            retried.append(head)
                    else:
                        answer = refs[i].encode() if ok[i, t] else b"%d" % (int(refs[i]) + 1)
                        line = head + (b'"text":"%s\\nFinal answer: %s","finish_reason":"stop","refusal":null,'
                                       b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"reasoning_tokens":0},'
                                       b'"error_kind":null,"response_model":"%s-2026","system_fingerprint":"fp_%d",'
                                       b'"ts":"2026-12-06T01:00:00+00:00"}'
                                       % (filler[pick[i, t]], answer, 20 + i % 7, 180 + pick[i, t], model.encode(), mi))
                    lines.append(line)
                    n += 1
                fh.write(b"\n".join(lines) + b"\n")
        for head in retried:  # collect --retry-errors: the later record supersedes the error
            fh.write(head + b'"text":"Final answer: 7","finish_reason":"stop","refusal":null,"usage":{},'
                            b'"error_kind":null,"ts":"2026-12-06T02:00:00+00:00"}\n')
            n += 1
    return cfg_path, items_path, arch, n


def done_per_model(plan_json: str) -> dict[str, int]:
    """Trials done per model, from ``collect --dry-run -f json``."""
    return {p["model"]: p["already_done"] for p in json.loads(plan_json)["phases"]}


def table_rows(path: Path) -> list[tuple]:
    with path.open("rb") as fh:
        return sorted((r["model"], r["item"], r["trial"], r["category"]) for r in map(orjson.loads, fh))


def run(n_items: int, k: int, rounds: int, top: Path, before: Path | None, before_k: int, limit_gb: float,
        *, small: bool) -> tuple[dict, bool]:
    cfg, items, arch, n = write_inputs(top, n_items, k)
    print(f"  archive: {n:,} trial records, {arch.stat().st_size / 1e6:.0f} MB", flush=True)
    (top / "plain_resume.py").write_text(PLAIN_RESUME, encoding="utf-8")
    (top / "plain_score.py").write_text(PLAIN_SCORE, encoding="utf-8")
    (top / "resume.py").write_text(RESUME, encoding="utf-8")
    env = {**os.environ, "BENCH_ARCHIVE_KEY": "x", "REPLICATE_CACHE_DIR": str(top / "cache"),
           "PYTHONPATH": str(ROOT)}

    def cmds(c: Path, a: Path, tag: str) -> dict[str, list[str]]:
        return {
            f"resume: plain{tag}": [str(top / "plain_resume.py"), str(a)],
            f"resume: ours{tag}": [str(top / "resume.py"), str(c), str(items), str(a)],
            f"dry-run: ours{tag}": ["-m", "replicate", "collect", str(c), "--items", str(items), "--archive", str(a),
                                    "--dry-run", "-f", "json"],
            f"collect: ours{tag}": ["-m", "replicate", "collect", str(c), "--items", str(items), "--archive", str(a),
                                    "--no-progress", "-f", "json"],
            f"score: plain{tag}": [str(top / "plain_score.py"), str(a), str(items), str(top / f"plain{tag}.jsonl")],
            f"score: ours{tag}": ["-m", "replicate", "score", str(a), "--items", str(items), "--out",
                                  str(top / f"ours{tag}.jsonl"), "--force", "-f", "json"],
        }

    plan = cmds(cfg, arch, "")
    if before is not None:
        bcfg, _, barch, bn = write_inputs(top, n_items, before_k)
        print(f"  archive for 'before': {bn:,} trial records, {barch.stat().st_size / 1e6:.0f} MB", flush=True)
        small_plan = cmds(bcfg, barch, f" (K={before_k})")
        plan.update(small_plan)
        for name in ("resume", "dry-run", "collect", "score"):
            plan[f"{name}: before (K={before_k})"] = small_plan[f"{name}: ours (K={before_k})"]
    res: dict = {name: {"cpu": [], "rss": []} for name in plan}
    ok = True
    for _ in range(rounds):
        outs = {}
        for name, cmd in plan.items():
            run_env = {**env, "PYTHONPATH": str(before)} if "before" in name else env
            if "before" in name:
                cmd = [(str(top / "before.jsonl") if a.endswith(f"ours (K={before_k}).jsonl") else a) for a in cmd]
            cpu, rss, out = child(cmd, run_env, top, limit_gb)
            res[name]["cpu"].append(cpu)
            res[name]["rss"].append(rss)
            outs[name] = out
            print(f"    {name}: {cpu:.2f} s CPU, {rss:.0f} MB", flush=True)
        for tag in [""] + ([f" (K={before_k})"] if before is not None else []):
            plain_done = json.loads(outs[f"resume: plain{tag}"])
            if json.loads(outs[f"resume: ours{tag}"]) != plain_done or \
                    done_per_model(outs[f"dry-run: ours{tag}"]) != plain_done or \
                    json.loads(outs[f"collect: ours{tag}"])["already_done"] != sum(plain_done.values()):
                print(f"MISMATCH: the done set{tag} differs from the plain loop's", file=sys.stderr)
                ok = False
            if json.loads(outs[f"score: ours{tag}"])["counts"] != json.loads(outs[f"score: plain{tag}"]):
                print(f"MISMATCH: score's counts{tag} differ from the plain loop's", file=sys.stderr)
                ok = False
        if small and table_rows(top / "ours.jsonl") != table_rows(top / "plain.jsonl"):
            print("MISMATCH: score's table differs from the plain loop's", file=sys.stderr)
            ok = False
        if before is not None:
            tag = f" (K={before_k})"
            same = all(outs[f"{w}: before{tag}"] == outs[f"{w}: ours{tag}"] for w in ("resume", "dry-run")) and \
                outs[f"score: before{tag}"].replace(str(top / "before.jsonl"), "T") == \
                outs[f"score: ours{tag}"].replace(str(top / f"ours{tag}.jsonl"), "T") and \
                (top / "before.jsonl").read_bytes() == (top / f"ours{tag}.jsonl").read_bytes()
            if not same:
                print("MISMATCH: the earlier package's output differs from ours", file=sys.stderr)
                ok = False
    return res, ok


def report(res: dict) -> None:
    print("\nmedian CPU s (user + sys), peak RSS MB, ratios to the plain loop on the same archive")
    for name, r in res.items():
        what, _, who = name.partition(": ")
        tag = who[who.find(" ("):] if " (" in who else ""
        plain = res[f"{'score' if what == 'score' else 'resume'}: plain{tag}"]
        pc, pr = statistics.median(plain["cpu"]), max(plain["rss"])
        cpu, rss = statistics.median(r["cpu"]), max(r["rss"])
        print(f"  {name:28} {cpu:7.2f} s {rss:7.0f} MB   CPU {cpu / pc:5.2f}x   memory {rss / pr:5.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="CI size: 300 items, K = 10, one round")
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--before", type=Path, help="a folder holding an earlier replicate package, run beside ours")
    ap.add_argument("--before-k", type=int, default=5, help="K of the (smaller) archive the earlier package reads")
    ap.add_argument("--limit-gb", type=float, default=4.5, help="address-space bound of every child (GiB)")
    args = ap.parse_args(argv)
    n_items, k, rounds = (300, 10, 1) if args.small else (args.items, args.k, args.rounds)
    with tempfile.TemporaryDirectory(prefix="bench_archive_") as tmp:
        print(f"archive: 3 models x {n_items:,} items x K = {k}", flush=True)
        res, ok = run(n_items, k, rounds, Path(tmp), args.before, args.before_k, args.limit_gb, small=args.small)
    report(res)
    if not ok:
        print("FAILED: an approach disagrees", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
