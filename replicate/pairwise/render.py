"""Tables of MT-Bench scores and pairwise tallies (pure): plain text or markdown."""

from __future__ import annotations

from replicate.judge.render.errors import how_resampled, interval_cell, with_interval
from replicate.output import Format, FormatArg, md_text, num, pct, table
from replicate.pairwise.human import Agreement, HumanAgreement
from replicate.pairwise.lc import GLM, LengthControl
from replicate.pairwise.mtbench import FIGURES, Mean, MTBenchScores
from replicate.pairwise.tally import PairwiseTally, Share
from replicate.stats.bootstrap import Interval

_TURN_HEADERS = {"overall": "overall (n)", "turn_1": "turn 1 (n)", "turn_2": "turn 2 (n)"}
RULE_WORDS = {
    "fastchat": "FastChat show_result.py's pairwise rule: a record with an error in either game is dropped; a tie in "
                "game 1, or games that disagree, is a tie for both models; else the model both games chose wins",
    "arena-hard-v0.1": "Arena-Hard-Auto v0.1's show_result.py: each game a battle against the baseline (game 1 "
                       "inverted), a strong verdict (>>) {weight} battles, a game without a verdict dropped; the score "
                       "is the battles' mean (the Bradley-Terry win rate against the baseline)",
    "arena-hard-v2.0": "Arena-Hard-Auto v2.0's show_result.py: each game's battles against the baseline (game 1 "
                       "inverted), a strong verdict (>>) {weight} battles, a record dropped when either game has no "
                       "verdict; the score is the battles' mean (it prints the mean of 100 bootstrap means)",
    "alpacaeval": "AlpacaEval's metrics: each annotation's preference (1 the baseline's output, 2 the model's, 1.5 a "
                  "draw, fractional for a weighted annotator) less 1 is the model's unit, null or out-of-range "
                  "preferences dropped; win rate = their mean (AlpacaEval's win_rate), discrete = (wins + draws/2) / "
                  "annotations over the rounded preferences (its discrete_win_rate)",
    "arena": "Chatbot Arena's human votes: each battle one unit for each of its two models, 1 the winner, 0 the "
             "loser, 0.5 both in a tie ('tie (bothbad)' counted as a tie, as Arena's Elo and Bradley-Terry fits "
             "count it; its win-fraction table counts a tie as no win: the 'win' share); win rate = (wins + "
             "ties/2) / battles; every battle counted, anonymous or not",
}


def _first_interval(ivs: list[Interval | None]) -> Interval | None:
    return next((iv for iv in ivs if iv is not None and iv.replicates), None)


def how_means_resampled(iv: Interval) -> str:
    """The bootstrap of a mean's interval in words (a mean has no Wilson floor; it stays within the values' range)."""
    stretched = ", arms stretched for the number of clusters (t, G/(G-1))" if iv.cluster else ""
    by = f"{iv.clusters} {iv.cluster} clusters resampled whole" if iv.cluster else f"{iv.clusters} items resampled one by one"
    return (f"{100 * iv.confidence_level:g}% bootstrap (percentile{stretched}, within the values' range): {by}, "
            f"{iv.replicates} replicates, seed {iv.seed}")


def _mean_cell(m: Mean) -> str:
    if m.value is None:
        return f"- ({m.n})"
    text = f"{num(m.value, 3)} ({m.n})"
    iv = m.interval
    if iv is None:
        return text
    if iv.reason is not None and iv.cluster is not None:
        return f"{text} no interval ({iv.clusters} clusters)"
    if iv.low is None or iv.high is None:
        return text
    return f"{text} [{num(iv.low, 3)}, {num(iv.high, 3)}]"


def _name(text: str, fmt: FormatArg) -> str:
    return md_text(text) if Format(fmt) is Format.markdown else text


def mtbench_text(scores: MTBenchScores, fmt: FormatArg) -> str:
    """The per-model table, then how it was read and resampled."""
    rows = [[_name(s.model, fmt), s.judgments, s.unrated, *(_mean_cell(s.means[name]) for name, _ in FIGURES)]
            for s in scores.models]
    headers = ["model", "judgments", "no rating", *(_TURN_HEADERS[name] for name, _ in FIGURES)]
    out = [f"MT-Bench score per model, read with {scores.parser} ({scores.reader}): the mean rating, "
           "FastChat show_result.py's rule (judgments without a rating, score -1, left out; overall is the mean "
           "over every rated judgment of both turns)", "", table(rows, headers, fmt).rstrip("\n")]
    if scores.departure is not None:
        out.insert(1, f"Departure from FastChat's rule: {scores.departure}.")
    if scores.other_turns:
        out.append(f"\nTurns other than 1 and 2 ({', '.join(scores.other_turns)}) count in overall only.")
    iv = _first_interval([m.interval for s in scores.models for m in s.means.values()])
    if iv is not None:
        out.append(f"\nIntervals: {how_means_resampled(iv)}.")
    return "\n".join(out) + "\n"


def _share_cell(s: Share, digits: int = 1) -> str:
    count = f"{s.count:g}"
    return with_interval(f"{count} ({pct(s.value, digits)})", s.interval, "share")


def _rate_cell(s: Share) -> str:
    return with_interval(pct(s.value, 1), s.interval, "win_rate")


def pairwise_text(result: PairwiseTally, fmt: FormatArg) -> str:
    """The per-model table (win, tie, loss, win rate with ties as half, position disagreement), then the rule."""
    if result.rule == "arena":
        return _arena_text(result, fmt)
    alpaca = result.rule == "alpacaeval"
    rows = []
    for t in result.models:
        row = [
            _name(t.model, fmt), ", ".join(_name(o, fmt) for o in t.opponents) or "-", t.records, t.dropped,
            f"{t.win_rate.n:g}", *(_share_cell(t.shares[f]) for f in ("win", "tie", "loss")), _rate_cell(t.win_rate),
        ]
        if alpaca:  # one annotation per instruction: no second game, so no position figure
            row.append(pct(t.discrete_win_rate, 1))
        else:
            row.append(with_interval(f"{t.position.count:g} of {t.position.n:g} ({pct(t.position.value, 1)})",
                                     t.position.interval, "share"))
        rows.append(row)
    headers = ["model", "against", {"record": "records", "battle": "questions", "annotation": "instructions"}[result.unit],
               "dropped", {"record": "counted", "battle": "battles", "annotation": "counted"}[result.unit], "win",
               "tie", "loss", "win rate (ties half)", "discrete win rate" if alpaca else "games disagree"]
    head = (f"Pairwise judgments by model ({result.parser}, {result.reader}), "
            + RULE_WORDS[result.rule].format(weight=result.weight) + ".")
    if result.baseline is not None:
        head += f" Records with {result.baseline} only; its own row left out (pairwise-baseline)."
    if result.departure is not None:
        head += f"\nDeparture from the harness's rule: {result.departure}."
    out = [head, "", table(rows, headers, fmt).rstrip("\n"), ""]
    if not alpaca:
        counted_as = ("FastChat counts them as ties (inconsistent ties: "
                      + ", ".join(f"{_name(t.model, fmt)} {t.inconsistent}" for t in result.models) + ")."
                      if result.rule == "fastchat" else "Arena-Hard counts each game's battles as they are.")
        out.append("'games disagree': records whose two games (the answers shown in both orders) disagree about the "
                   "models, over those with a verdict in both: the judge's position bias. " + counted_as)
    else:
        out.append("AlpacaEval's annotator judges each instruction once (it may randomise the order shown; the file "
                   "records the preference by model): no position figure.")
        if result.length_controlled is not None:
            out.append(_lc_text(result.length_controlled, fmt))
    if result.unpaired:
        out.append(f"{result.unpaired} game(s) without their other game were left out.")
    iv = _first_interval([t.win_rate.interval for t in result.models])
    if iv is not None:
        out.append(f"Intervals: {how_resampled(iv)}.")
    return "\n".join(out) + "\n"


def _lc_text(lc: LengthControl, fmt: FormatArg) -> str:
    """AlpacaEval's length-controlled win rates (or why there are none), with how they were fitted."""
    if lc.reason is not None:
        return f"Length-controlled win rate: {lc.reason}."
    rows = []
    for r in lc.results:
        w = r.fit.weights if r.fit is not None else None
        rows.append([_name(r.model, fmt), _name(r.baseline, fmt), f"{r.fitted} of {r.annotations}",
                     f"{100 * r.win_rate:.2f}%", "-" if r.standard_error is None else f"{100 * r.standard_error:.2f}",
                     "-" if r.fit is None else f"{r.fit.c:.4g}",
                     "-" if w is None else ", ".join(num(v, 4) for v in w)])
    headers = ["model", "baseline", "fitted", "LC win rate", "SE", "C", "weights (length, difficulty, model)"]
    gamed = lc.results[0].gamed_rows if lc.results else 0
    return "\n".join([
        "", f"Length-controlled win rate, AlpacaEval 2.0's GLM {GLM} fitted with {lc.gamed} ({gamed} gamed-baseline "
        "rows, weight 0.1 each): logistic in tanh(standardised length difference), instruction difficulty and the "
        "model, L1 penalty C chosen by 5-fold cross-validation; each annotation's preference predicted at equal "
        "lengths, averaged over every annotation (SE: their standard error).", "",
        table(rows, headers, fmt).rstrip("\n"), "",
        "Solved to the optimum: AlpacaEval's liblinear solver stops at a tolerance of 1e-4, so its own figure may "
        "differ in the second decimal (about 0.01 points)."])


def _arena_text(result: PairwiseTally, fmt: FormatArg) -> str:
    """Human battles per model: opponents, battles, win, tie, loss, win rate (no games, no position figure)."""
    rows = [[_name(t.model, fmt), len(t.opponents), f"{t.win_rate.n:g}",
             *(_share_cell(t.shares[f]) for f in ("win", "tie", "loss")), _rate_cell(t.win_rate)]
            for t in result.models]
    headers = ["model", "opponents", "battles", "win", "tie", "loss", "win rate (ties half)"]
    out = [f"Battles by model ({result.reader}), " + RULE_WORDS["arena"] + ".", "",
           table(rows, headers, fmt).rstrip("\n"), ""]
    iv = _first_interval([t.win_rate.interval for t in result.models])
    if iv is not None:
        out.append(f"Intervals: {how_resampled(iv)}.")
    return "\n".join(out) + "\n"


def _kappa_cell(a: Agreement) -> str:
    if a.kappa is None:
        return "-"
    iv = a.kappa_interval
    if iv is None:
        return num(a.kappa, 3)
    if iv.low is None or iv.high is None:
        return f"{num(a.kappa, 3)} {interval_cell(iv, 'kappa')}"
    return f"{num(a.kappa, 3)} [{num(iv.low, 3)}, {num(iv.high, 3)}]"


def _agreement_cells(a: Agreement) -> list[str]:
    return [str(a.n), with_interval(f"{a.agree} ({pct(a.rate, 1)})", a.rate_interval, "share"), _kappa_cell(a)]


def human_text(result: HumanAgreement, fmt: FormatArg) -> str:
    """Agreement with and without ties (overall, then per turn), then what was paired and what was not."""
    rows = [["all", *_agreement_cells(result.with_ties), *_agreement_cells(result.without_ties)]]
    if len(result.by_turn) > 1:
        rows += [[f"turn {t}", *_agreement_cells(w), *_agreement_cells(wo)] for t, w, wo in result.by_turn]
    headers = ["", "pairs", "agree", "kappa", "pairs w/o ties", "agree w/o ties", "kappa w/o ties"]
    annotator = result.unit == "instruction"
    against = ("a second annotator on the same instruction and model pair" if annotator else
               f"human votes on the same question and model pair{' and turn' if result.by_turns else ''}")
    out = [
        f"Judge against {against}: judge {result.judge}; "
        f"{'second annotator' if annotator else 'humans'} {result.human}. Each (judge verdict, "
        f"{'annotation' if annotator else 'human vote'}) pair counts once, both "
        "oriented with the two models in sorted order (a pair named the other way round flipped; 'tie (bothbad)' "
        "is a tie); 'w/o ties': the pairs where neither says tie (MT-Bench's setups S1 and S2). Cohen's kappa over "
        "the same pairs (first model wins, tie, second wins).",
        "", table(rows, headers, fmt).rstrip("\n"), "",
        f"{result.paired_battles} of {result.battles} {'annotations' if annotator else 'battles'} paired with "
        f"{result.judged_pairs} judge verdicts ({result.flipped} of them with the models in the other order); not "
        f"paired: {result.no_judgment} {'annotations' if annotator else 'battles'} with no judge verdict on their "
        f"pair, {result.judge_dropped} whose judge verdict the harness dropped (no verdict), {result.no_battle} judge "
        f"verdicts with no {'annotation' if annotator else 'battle'}"
        + (f", {result.human_without_verdict} annotations of the second annotator without a preference."
           if annotator else "."),
    ]
    iv = result.with_ties.rate_interval
    if iv is not None:
        out.append(f"Intervals: {how_resampled(iv)}.")
    return "\n".join(out) + "\n"
