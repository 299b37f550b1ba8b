"""Built-in K-trial response scorers, shipped through the ``replicate.scorers`` entry point.

Each is a :class:`replicate.scoring.Scorer` with a frozen behaviour: a change
of behaviour is a new ``@N``. Goldens in ``tests/scoring/test_goldens.py`` pin them.
The answer extraction they share is in :mod:`replicate_parsers.answers`; core
(``replicate.scoring``) holds only the contract, the categories and the pipeline.
"""

from __future__ import annotations

from replicate.errors import Message, Param, UsageError
from replicate.scoring.base import NoResult, ScoreInput, Verdict, scorer
from replicate_parsers.answers import choice_letter, final_answer_line, math_answer, math_equivalent, normalize


@scorer("final-answer-line@1", "Answer after the last 'Answer:'/'Final answer:' line; exact match after whitespace and case normalisation.")
def final_answer_line_v1(inp: ScoreInput) -> Verdict:
    """The answer is the text after the last line that starts with "Answer:" or
    "Final answer:" (any case; markdown emphasis allowed; if the label ends its
    line, the next non-empty line). Correct when it equals the reference after
    collapsing whitespace and case-folding both. No such line: no answer."""
    answer = final_answer_line(inp.text)
    if answer is None:
        return Verdict(None)
    return Verdict(answer, normalize(answer) == normalize(str(inp.reference)))


@scorer("mcq-letter@1", "A choice letter A-J read from the final answer line, compared with the reference letter.")
def mcq_letter_v1(inp: ScoreInput) -> Verdict:
    """The final answer line (as in final-answer-line@1) must start with a choice
    letter A-J: "B", "(B)", "B)", "B." or "B: text" (a lone lower-case letter is
    accepted too). No line or no letter: no answer. Correct when the letter
    equals the reference's letter (reference "b" or "(B)" read the same way)."""
    letter = choice_letter(final_answer_line(inp.text))
    if letter is None:
        return Verdict(None)
    ref = choice_letter(str(inp.reference)) or str(inp.reference).strip().upper()
    return Verdict(letter, letter == ref)


@scorer("math-equivalence@1", "Final answer line (or last \\boxed{}): exact match after LaTeX clean-up, then sympy symbolic equivalence.")
def math_equivalence_v1(inp: ScoreInput) -> Verdict:
    """The answer is the final answer line's content (a \\boxed{} inside it wins),
    else the last \\boxed{} in the response. Correct when it equals the reference
    after removing $, \\left/\\right, spacing commands, spaces, a trailing period
    and a leading "x =" ; otherwise when sympy shows simplify(answer - reference)
    == 0. Only a safe subset of text (numbers, operators, \\frac, \\sqrt, pi,
    common functions, one-letter variables) is handed to sympy; anything else is
    not equivalent. sympy is imported only when needed (pip install
    'replicate-audit[math]'). Unsafe on adversarial input: sympy runs in the
    scorer's process without a time limit, so an answer like "9^9^9" never
    returns; use math-equivalence@2."""
    answer = math_answer(inp.text)
    if answer is None:
        return Verdict(None)
    return Verdict(answer, math_equivalent(answer, str(inp.reference)))


@scorer("math-equivalence@2", "As math-equivalence@1, plus sets, \\pm, percent, degrees and \\frac12; sympy in a worker with a 2 s limit per answer; power towers refused.")
def math_equivalence_v2(inp: ScoreInput) -> Verdict:
    """The answer is found as in math-equivalence@1. Before comparing, degrees
    (^\\circ), a trailing percent sign and brace-less \\frac12 are normalised;
    sets and comma lists ({1,2} vs {2,1}) compare as multisets element by
    element, and \\pm a stands for the list a, -a. Then exact match after
    LaTeX clean-up, then sympy simplify(answer - reference) == 0, run in a
    worker process killed after 2 seconds (the answer is then not shown
    equivalent). Power towers (a^b^c) and exponents above 10,000 are refused
    before sympy sees them."""
    from replicate_parsers.mathv2 import math_equivalent_v2

    answer = math_answer(inp.text)
    if answer is None:
        return Verdict(None)
    return Verdict(answer, math_equivalent_v2(answer, str(inp.reference)))


@scorer("math-verify@1", "Final answer line (or last \\boxed{}) checked against the reference by the math-verify package (optional extra).",
        package="math-verify")
def math_verify_v1(inp: ScoreInput) -> Verdict:
    """The answer is found as in math-equivalence@1 and wrapped in $...$; the
    reference likewise; math_verify.verify(parse(reference), parse(answer))
    decides (its own LaTeX and expression extraction, with its own time
    limits). Needs pip install 'replicate-audit[math-verify]'; the package's
    version is recorded in each trial row (scorer_provenance)."""
    try:
        from math_verify import parse, verify
    except ImportError:
        raise UsageError("math-verify@1 needs the math-verify package: pip install "
                         "'replicate-audit[math-verify]'") from None
    answer = math_answer(inp.text)
    if answer is None:
        return Verdict(None)
    try:
        gold = parse(f"${inp.reference}$")
        pred = parse(f"${answer}$")
        ok = bool(gold) and bool(pred) and bool(verify(gold, pred))
    except Exception:  # math-verify raising on odd input: not shown equivalent
        ok = False
    return Verdict(answer, ok)


@scorer("ifbench@1", "Official IFBench verifier results (strict, with loose as the loose reading), joined by prompt and response text.",
        needs=("ifbench",), has_loose=True)
def ifbench_v1(inp: ScoreInput) -> Verdict:
    """Reads the verdict the official IFBench verifier gave this exact response to
    this exact prompt (follow_all_instructions): strict from
    eval_results_strict.jsonl, loose from eval_results_loose.jsonl. An empty
    response is no answer. A response the verifier never saw has no verdict: the
    trial is counted as unscored and left out of the table."""
    results = inp.resources.get("ifbench")
    if results is None:
        raise UsageError(Message("ifbench@1 needs the verifier's results: pass ", Param("ifbench_strict"),
                                 " (and ", Param("ifbench_loose"), ")"))
    if not inp.text or not inp.text.strip():
        return Verdict(None)
    prompt = inp.item.prompt_text if inp.item is not None else str(inp.reference)
    found = results.lookup(prompt, inp.text)
    if found is None:
        raise NoResult("no IFBench verifier result for this response")
    strict, loose = found
    return Verdict(inp.text, strict, loose)


@scorer("ifbench@2", "As ifbench@1, but prompts are joined ignoring surrounding whitespace, as the official verifier now does.",
        needs=("ifbench",), has_loose=True)
def ifbench_v2(inp: ScoreInput) -> Verdict:
    """As ifbench@1, except that the item's prompt and the verifier's prompt
    are compared after stripping surrounding whitespace (the official
    verifier strips prompts when it pairs them with responses); the response
    must still be identical."""
    results = inp.resources.get("ifbench")
    if results is None:
        raise UsageError("ifbench@2 needs the verifier's results: pass --ifbench-strict (and --ifbench-loose)")
    if not inp.text or not inp.text.strip():
        return Verdict(None)
    prompt = inp.item.prompt_text if inp.item is not None else str(inp.reference)
    found = results.lookup_stripped(prompt, inp.text)
    if found is None:
        raise NoResult("no IFBench verifier result for this response")
    strict, loose = found
    return Verdict(inp.text, strict, loose)


SCORERS = [final_answer_line_v1, mcq_letter_v1, math_equivalence_v1, math_equivalence_v2, math_verify_v1,
           ifbench_v1, ifbench_v2]
