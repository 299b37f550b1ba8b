"""Markdown of a fresh collection beside a release (:mod:`replicate.trials.fresh`): what the collection says
about itself, and the item-level agreement of one cell's two classifications (pure rendering).

The verification note shows these under each ``## Replication`` (:mod:`replicate.verify.sources.trials`);
nothing here knows of claims.
"""

from __future__ import annotations

from replicate.output import Format, md_code, md_text, pct, table
from replicate.stats.classify import CLASSES
from replicate.trials.fresh import Agreement, CollectionProvenance


def collection_lines(p: CollectionProvenance) -> list[str]:
    """The collection's file, rows, models, benchmarks, scorers, reported snapshots and archive (config and
    dates) as a table, its trials by category, and how its items differ from the release's."""
    f = p.trials
    rows = [["Trials table", f"{md_code(f.get('path'))} ({f.get('size', '-')} bytes, sha256 `{f.get('sha256', '-')}`)"],
            ["Rows", str(p.rows)], ["Models", ", ".join(map(md_text, p.models))],
            ["Benchmarks", ", ".join(map(md_text, p.benchmarks))],
            ["Scorers", ", ".join(f"`{s}`" for s in p.scorers) or "-"]]
    for col, per in p.snapshots.items():
        rows.append([f"Reported `{col}`",
                     "; ".join(f"{m}: {', '.join(v)}" for m, v in per.items()) or "none (empty in every row)"])
    a = p.archive
    if a is None:
        rows.append(["Archive", "not given (pass --replication-archive NAME=ARCHIVE for the collection's config "
                     "and dates)"])
    else:
        cfg = a.get("config") or {}
        coll = cfg.get("collection", {})
        rows += [
            ["Archive", f"`{a['path']}` (sha256 `{a['sha256']}`), {a['trials']} trial records, "
                        f"{a['resumes']} resume(s)"],
            ["Endpoint", f"{cfg.get('endpoint', {}).get('base_url', '-')} (key from "
                         f"${cfg.get('endpoint', {}).get('api_key_env', '-')}; the key itself is never stored)"],
            ["Collection", f"models {', '.join(coll.get('models', []))}; k = {coll.get('k', '-')}; "
                           f"seed {coll.get('seed', '-')}; params {_params(cfg.get('params', {}))}"],
            ["Trials dated", f"{a.get('first_trial') or '-'} to {a.get('last_trial') or '-'}"],
        ]
    out = [table(rows, ["", ""], Format.markdown).rstrip("\n"), ""]
    cat_rows = [[m, *[p.categories[m][c] for c in p.categories[m]]] for m in p.categories]
    if cat_rows:
        cats = list(next(iter(p.categories.values())))
        out += ["Trials by category:", "", table(cat_rows, ["model", *cats], Format.markdown).rstrip("\n"), ""]
    d = p.items
    if d is not None:
        if d.same:
            out += [f"The fresh collection has exactly the release's items ({d.shared}).", ""]
        else:
            def by(x: dict[str, int]) -> str:
                return ", ".join(f"{b}: {n}" for b, n in x.items()) or "none"

            out += [f"**The item sets differ.** Compared on the {d.shared} items both have. Only in the release: "
                    f"{by(d.only_released)}. Only in the fresh collection (left out): {by(d.only_fresh)}.", ""]
    return out


def _params(params: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in params.items()) or "none"


def agreement_lines(a: Agreement) -> list[str]:
    """One cell's items classified in the release (rows) and in the fresh collection (columns), with how many
    of the release's reliable changes recur, reverse or are new."""
    where = f"{md_text(a.source)} -> {md_text(a.target)}, " + (
        md_text(a.benchmark) if a.benchmark is not None else "all benchmarks pooled")
    rows = [[f"release: {CLASSES[i]}", *row, sum(row)] for i, row in enumerate(a.table)]
    totals = [sum(a.table[i][j] for i in range(len(CLASSES))) for j in range(len(CLASSES))]
    rows.append(["total", *totals, a.items_compared])
    share = "-" if not a.items_compared else pct(a.same_class / a.items_compared, 1)
    return [
        f"**{where}** ({a.items_compared} items in both): of the {a.significant_released} items the release "
        f"finds reliably changed, {a.again} change the same way again in the fresh data and {a.reversed} the "
        f"other way; {a.new} items are reliably changed in the fresh data only. Same class: {share}.", "",
        table(rows, ["", *[f"fresh: {c}" for c in CLASSES], "total"], Format.markdown).rstrip("\n"), "",
    ]
