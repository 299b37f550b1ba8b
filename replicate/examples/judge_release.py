"""Seeded generator of SYNTHETIC judge releases (the bundled example and the benchmark).

Nothing here is real model output: grades, texts and ids are drawn from a
seeded :class:`random.Random` (stable across Python versions), so the same
arguments always give the same bytes. The layout imitates a real release:
``results/<model>_annotations.jsonl`` (TREC DL 2019-like split) and
``results_2020/<model>_annotations.jsonl`` (DL 2020-like), one JSON object per
item with ``query_id``, ``corpus_id``, ``original_qrel_score``, ``query_text``
and the raw judge reply, in the odd shapes real replies take.

Labels follow a simple version-line model: each version keeps the previous
version's label for an item with probability ``stickiness`` and otherwise
draws afresh (right with probability ``accuracy``), so consecutive versions
share some of their mistakes, as real ones do.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from replicate.outfile import TMP_SUFFIX, fsync_folder, write_file

#: Gold grade distribution of the synthetic qrels (TREC-DL-like: mostly 0).
GOLD_WEIGHTS = (0.45, 0.25, 0.19, 0.11)

_WORDS = (
    "how what why when does cause symptoms treatment definition meaning cost long "
    "average salary weather history first largest population river disease vitamin "
    "tax law court protein cell energy solar market price car engine software "
    "account bank loan credit city county state war president music film book"
).split()


@dataclass(frozen=True)
class Version:
    """One synthetic model version (or a repeat of one).

    ``style``: how its replies look (``plain``, ``mto``, ``bold``, ``reasoning``,
    ``long``); ``output_field``: ``model_output`` or ``gemini_output``;
    ``repeat_of``: name of the version this run repeats (labels re-drawn around it).
    """

    name: str
    accuracy: float
    stickiness: float = 0.6
    style: str = "plain"
    output_field: str = "model_output"
    thoughts: bool = False
    odd_rate: float = 0.03
    unparseable_rate: float = 0.01
    rewritten: int = 0
    numeric_query_ids: bool = False
    repeat_of: str | None = None


@dataclass(frozen=True)
class Split:
    directory: str
    queries: int
    docs_per_query: int
    first_query_id: int
    items: int | None = None  # keep only the first ``items`` pairs (to hit an exact size)


@dataclass
class Release:
    """What :func:`make_release` wrote: file paths per run, relative to the root."""

    root: Path
    files: dict[str, list[str]] = field(default_factory=dict)
    repeats: dict[str, list[str]] = field(default_factory=dict)


def _query_text(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 8)))


def _wrong_label(rng: random.Random, gold: int) -> int:
    # mistakes are mostly off by one
    near = [g for g in (gold - 1, gold + 1) if 0 <= g <= 3]
    if rng.random() < 0.75:
        return rng.choice(near)
    return rng.choice([g for g in range(4) if g != gold])


def _reasoning(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 16)))
        out.append(words.capitalize() + ".")
    return " ".join(out)


def _reply(rng: random.Random, v: Version, label: int) -> str:
    """A raw reply saying ``label`` in the version's style, sometimes in an odd shape."""
    r = rng.random()
    if r < v.unparseable_rate:
        return rng.choice(
            [
                "",
                "I cannot assess the relevance of this passage.",
                "Final score: 2.5",
                "The passage is somewhat relevant.",
            ]
        )
    if r < v.unparseable_rate + v.odd_rate:
        m, t = rng.randint(0, 3), rng.randint(0, 3)
        return rng.choice(
            [
                f"{label}",
                f"{m}: {label}",
                f"{m}final score: {label}",
                f"{m} final score: {label}",
                f"{m}\n{t}\n{label}",
                f"##M: {m}  \n##T: {t}  \n##O: {label}",
                f"O: ##final score: {label}",
                f"##final score: {m}\n##final score: {label}\n##final score: {m}",
                f"{_reasoning(rng, 3)}\nAnswer: {label}",
            ]
        )
    if v.style == "mto":
        m, t = rng.randint(max(0, label - 1), min(3, label + 1)), rng.randint(0, 3)
        return f"M: {m}  \nT: {t}  \nO: {label}  \n##final score: {label}"
    if v.style == "bold":
        return f"**Final score: {label}**"
    if v.style == "reasoning":
        end = rng.choice([f"Final score: {label}", f"O: {label}", f"Final score: {label}"])
        return f"{_reasoning(rng, rng.randint(2, 4))}\n\n{end}"
    if v.style == "long":
        return f"{_reasoning(rng, rng.randint(3, 7))}\n\nFinal score: {label}"
    return f"##final score: {label}"


def _items(rng: random.Random, split: Split) -> list[tuple[str, str, int, str]]:
    items = []
    for q in range(split.queries):
        qid = str(split.first_query_id + q * rng.randint(7, 97))
        text = _query_text(rng)
        docs: set[str] = set()
        while len(docs) < split.docs_per_query:
            docs.add(str(rng.randint(10_000, 8_841_822)))
        for d in sorted(docs, key=int):
            gold = rng.choices(range(4), GOLD_WEIGHTS)[0]
            items.append((qid, d, gold, text))
    return items if split.items is None else items[: split.items]


def _labels(rng: random.Random, golds: Sequence[int], v: Version, prev: list[int] | None) -> list[int]:
    out = []
    for i, g in enumerate(golds):
        if prev is not None and rng.random() < v.stickiness:
            out.append(prev[i])
        elif rng.random() < v.accuracy:
            out.append(g)
        else:
            out.append(_wrong_label(rng, g))
    return out


def _record(rng: random.Random, v: Version, item, label: int, rewrite: bool) -> dict:
    qid, doc, gold, text = item
    rec: dict = {
        "query_id": int(qid) if v.numeric_query_ids else qid,
        "corpus_id": doc,
        "original_qrel_score": float(gold),
        "query_text": text,
    }
    if v.thoughts:
        rec[v.output_field.replace("_output", "_thought")] = _reasoning(rng, 1)
    rec[v.output_field] = _reply(rng, v, label)
    if rewrite:
        rec["original_output"] = rng.choice(
            ["I'm sorry, I can't help with that.", "The relevance depends on the user's intent."]
        )
        rec[v.output_field] = f"##final score: {label}"
    return rec


def make_release(
    root: str | Path,
    versions: Sequence[Version],
    *,
    splits: Sequence[Split],
    seed: int,
    compact: bool = False,
) -> Release:
    """Write a synthetic release under ``root``; same arguments -> same bytes.

    ``compact`` writes JSON without spaces (faster, for the benchmark).
    """
    root = Path(root)
    rng = random.Random(seed)
    split_items = [_items(rng, s) for s in splits]
    release = Release(root)
    labels_by_version: dict[str, list[list[int]]] = {}
    prev: list[list[int]] | None = None
    seps = (",", ":") if compact else (", ", ": ")
    for v in versions:
        if v.repeat_of is not None:
            base = labels_by_version[v.repeat_of]
            labels = [_labels(rng, [*b], v, b) for b in base]
        else:
            labels = [_labels(rng, [it[2] for it in items], v, None if prev is None else prev[k])
                      for k, items in enumerate(split_items)]
            prev = labels
        labels_by_version[v.name] = labels
        target = release.repeats if v.repeat_of is not None else release.files
        target[v.name] = []
        for k, (split, items) in enumerate(zip(splits, split_items)):
            rewrite_at = set(rng.sample(range(len(items)), v.rewritten)) if k == 0 and v.rewritten else set()
            lines = [
                json.dumps(_record(rng, v, it, lab, i in rewrite_at), ensure_ascii=False, separators=seps)
                for i, (it, lab) in enumerate(zip(items, labels[k]))
            ]
            rel = f"{split.directory}/{v.name}_annotations.jsonl"
            path = root / rel
            write_file(path, ("\n".join(lines) + "\n").encode("utf-8"), make_folder=True)
            target[v.name].append(rel)
    return release


def runs_toml(release: Release, *, header: str = "") -> str:
    """The ``runs.toml`` text naming the release's version line (and repeats)."""

    def entries(runs: dict[str, list[str]]) -> list[str]:
        return [f"{json.dumps(name)} = [{', '.join(json.dumps(f) for f in files)}]" for name, files in runs.items()]

    out = [header] if header else []
    out += ["[runs]", *entries(release.files)]
    if release.repeats:
        out += ["", "# Repeats: another run of one version with the same configuration (for rerun floors).",
                "[repeats]", *entries(release.repeats)]
    return "\n".join(out) + "\n"


# -- grouped EXAM ---------------------------------------------------------------------------


def make_exam(
    root: str | Path,
    versions: Sequence[tuple[str, bool]],
    *,
    seed: int,
    queries: int = 4,
    paragraphs: int = 6,
) -> dict[str, str]:
    """Small synthetic grouped-EXAM files, one per version, over the same paragraphs.

    Each file ``<name>.jsonl.gz`` has lines ``[query_id, [paragraph, ...]]``.
    ``versions`` pairs a name with ``ratings``: True gives ``exam_grades[0]``
    numeric ``self_ratings`` (0-5), False ``correctAnswered``/``wrongAnswered``
    question lists. Gzip is written with mtime 0 so bytes depend only on content.
    Returns name -> file name.
    """
    rng = random.Random(seed)
    items = []
    for q in range(queries):
        qid = str(1000 + 37 * q)
        for _p in range(paragraphs):
            items.append((qid, str(rng.randint(100_000, 999_999)), rng.randint(0, 3), _reasoning(rng, 1)))
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for v, (name, ratings) in enumerate(versions):
        by_query: dict[str, list] = {}
        for k, (qid, pid, gold, text) in enumerate(items):
            # one paragraph of the first version has no graded questions (a counted warning)
            n_questions = 0 if (v == 0 and k == 1) else rng.choice([2, 3, 4, 6])
            qs = [f"{qid}/{j}" for j in range(n_questions)]
            p_cover = min(0.95, max(0.05, gold / 3 + rng.uniform(-0.3, 0.3)))
            if ratings:
                grade: dict = {
                    "self_ratings": [
                        {"question_id": x, "self_rating": rng.randint(4, 5) if rng.random() < p_cover else rng.randint(0, 3)}
                        for x in qs
                    ]
                }
            else:
                right = [x for x in qs if rng.random() < p_cover]
                grade = {"correctAnswered": right, "wrongAnswered": [x for x in qs if x not in right]}
            by_query.setdefault(qid, []).append(
                {
                    "paragraph_id": pid,
                    "text": text,
                    "paragraph_data": {"judgments": [{"query": qid, "relevance": gold}]},
                    "exam_grades": [grade],
                }
            )
        lines = [json.dumps([qid, paras], ensure_ascii=False) for qid, paras in by_query.items()]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        fname = f"{name}.jsonl.gz"
        write_file(root / fname, gzip.compress(data, compresslevel=9, mtime=0))
        out[name] = fname
    return out


# -- the bundled example (fixtures/example/) ---------------------------------------------

EXAMPLE_SEED = 20250101

EXAMPLE_VERSIONS = [
    # a short version line with the odd shapes real releases show
    Version("alpha-2024-05", accuracy=0.52, style="plain", odd_rate=0.08, unparseable_rate=0.02),
    Version("alpha-2024-08", accuracy=0.58, stickiness=0.55, style="mto", odd_rate=0.06, rewritten=2),
    Version(
        "alpha-2025-01", accuracy=0.55, stickiness=0.4, style="reasoning", output_field="gemini_output",
        thoughts=True, numeric_query_ids=True, unparseable_rate=0.03,
    ),
    Version("alpha-2025-04", accuracy=0.6, stickiness=0.5, style="bold", odd_rate=0.05),
    # a second run of alpha-2025-01 with the same configuration
    Version("alpha-2025-01-repeat", accuracy=0.55, stickiness=0.85, style="reasoning",
            output_field="gemini_output", thoughts=True, numeric_query_ids=True, repeat_of="alpha-2025-01"),
]

EXAMPLE_SPLITS = [
    Split("results", queries=8, docs_per_query=16, first_query_id=19335),
    Split("results_2020", queries=10, docs_per_query=16, first_query_id=1030303),
]

HEADER = """\
# SYNTHETIC example release (generated by tools/make_example.py; do not edit).
# [runs] is the version line, oldest first: `replicate chain --runs runs.toml`.
# Each run pools its DL 2019-like and DL 2020-like files. Paths are relative to this file."""

EXAM_HEADER = """\
# SYNTHETIC grouped-EXAM runs (generated by tools/make_example.py; do not edit).
# Labels come from the exam grades: round(3 x covered / total)."""


def write_example(out: str | Path) -> Path:
    """Write the bundled example release (fixtures/example/) to ``out``.

    Replaces the generated parts (split folders, ``exam/``, ``runs.toml``) and
    leaves other files in ``out`` alone; refuses a non-empty folder that holds
    no generated example. Every file goes through the one atomic writer
    (replicate.outfile) into a staging folder inside ``out``, and the parts are
    renamed into place only once all are written: when a write fails (a full
    disk), the staging folder is removed, an earlier example is left whole, a
    folder made for this call is removed again, and the error is raised.
    """
    import shutil
    import tempfile

    out = Path(out)
    existed = out.exists()
    if existed and any(out.iterdir()):
        toml = out / "runs.toml"
        if not (toml.is_file() and toml.read_text(encoding="utf-8").startswith(HEADER.splitlines()[0])):
            raise FileExistsError(f"{out} is not empty and holds no generated example; refusing to replace it")
    out.mkdir(parents=True, exist_ok=True)
    try:
        stage = Path(tempfile.mkdtemp(prefix=".example.", suffix=TMP_SUFFIX, dir=out))
        try:
            release: Release = make_release(stage, EXAMPLE_VERSIONS, splits=EXAMPLE_SPLITS, seed=EXAMPLE_SEED)
            exam = make_exam(stage / "exam", [("exam-beta-1", False), ("exam-beta-2", True)], seed=EXAMPLE_SEED + 1)
            exam_release = Release(stage / "exam", files={k: [v] for k, v in exam.items()})
            write_file(stage / "exam" / "runs.toml", runs_toml(exam_release, header=EXAM_HEADER).encode("utf-8"))
            write_file(stage / "runs.toml", runs_toml(release, header=HEADER).encode("utf-8"))
            # replace what this function writes, runs.toml (the mark of a generated example) last;
            # leave other files (e.g. a claims file) alone
            for part in [*(s.directory for s in EXAMPLE_SPLITS), "exam", "runs.toml"]:
                if (out / part).is_dir() and not (out / part).is_symlink():
                    shutil.rmtree(out / part)
                os.replace(stage / part, out / part)
            fsync_folder(out)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    except BaseException:
        if not existed:
            shutil.rmtree(out, ignore_errors=True)
        raise
    return out
