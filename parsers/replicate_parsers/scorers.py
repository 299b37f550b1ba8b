"""Built-in K-trial response scorers, shipped through the ``replicate.scorers`` entry point.

Each is a :class:`replicate.scoring.Scorer` with a frozen behaviour: a change
of behaviour is a new ``@N``. Goldens in ``tests/test_score_goldens.py`` pin them.
"""

from __future__ import annotations

from replicate.errors import Message, Param, UsageError
from replicate.scoring.answers import choice_letter, final_answer_line, math_answer, math_equivalent, normalize
from replicate.scoring.base import NoResult, ScoreInput, Verdict, scorer


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
    'replicate-audit[math]')."""
    answer = math_answer(inp.text)
    if answer is None:
        return Verdict(None)
    return Verdict(answer, math_equivalent(answer, str(inp.reference)))


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


SCORERS = [final_answer_line_v1, mcq_letter_v1, math_equivalence_v1, ifbench_v1]
