"""``helm-completions@1``: a HELM run's raw completions and gold references, for replicate's own parsers.

``helm-run@1`` reads HELM's per-instance metric as a decided verdict; this
reader reads what the metric was computed from, in ``scenario_state.json``:
each request state's completion (``result.completions[0].text``) as the
output a ``--parser`` reads, and the instance's reference tagged ``correct``
as the gold. The file's layout (and the other run files) is in
:mod:`replicate_parsers.helm_layout`.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any, Iterator

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, SourceRule
from replicate.reading.stream import describe
from replicate_parsers.helm_layout import kind_of_head, load_json, run_about, stats_figure
from replicate_parsers.helm_run import chosen_trial

SCENARIO_STATE = "scenario_state.json"
CORRECT = "correct"
#: Adapter methods whose requests hold no answer to parse: each reference is scored by its log
#: probability (separate multiple choice), or the text is scored token by token (language modelling).
NO_ANSWER_METHODS = ("multiple_choice_separate_original", "multiple_choice_separate_calibrated", "language_modeling")


@dataclass(frozen=True, slots=True)
class _State:
    index: int  # 0-based position in request_states
    instance_id: str
    perturbation: str | None
    trial: int  # train_trial_index
    obj: dict
    line: int

    @property
    def where(self) -> str:
        pert = f", perturbation {self.perturbation}" if self.perturbation is not None else ""
        return f"request_states[{self.index}] (instance {self.instance_id}{pert}, train trial {self.trial})"


def _sniff(head: bytes, options: ReadOptions) -> Match:
    return "yes" if kind_of_head(head) == SCENARIO_STATE else "no"


_STATE_OPENS = re.compile(rb"\n    \{")


def _lines(data: bytes, n: int) -> list[int] | None:
    """The line each of the ``n`` request states opens on, in HELM's layout (indented by two spaces a level)."""
    start = data.find(b'"request_states"')
    if start < 0:
        return None
    lines, line, prev = [], data.count(b"\n", 0, start) + 1, start
    for m in _STATE_OPENS.finditer(data, start):
        line += data.count(b"\n", prev, m.start())
        prev = m.start()
        lines.append(line + 1)
    return lines if len(lines) == n else None


def _states(value: Any, src: Source) -> tuple[str | None, list[_State]]:
    if not isinstance(value, dict) or not isinstance(value.get("request_states"), list):
        raise src.bad(f"expected HELM's scenario_state.json (an object with 'adapter_spec' and a list "
                      f"'request_states'), got {describe(value)}")
    adapter = value.get("adapter_spec")
    method = adapter.get("method") if isinstance(adapter, dict) else None
    raw = value["request_states"]
    lines = _lines(src.data, len(raw))
    out: list[_State] = []
    for i, obj in enumerate(raw):
        line = lines[i] if lines is not None else i + 1
        where = f"request_states[{i}]"
        if not isinstance(obj, dict):
            raise src.bad(f"{where}: expected a request state (an object), got {describe(obj)}", line)
        inst = obj.get("instance")
        iid = inst.get("id") if isinstance(inst, dict) else None
        if not isinstance(inst, dict) or type(iid) is not str or not iid:
            raise src.bad(f"{where}: its 'instance' has no 'id' (a HELM instance id such as 'id12')", line)
        trial = obj.get("train_trial_index")
        if type(trial) is not int or trial < 0:
            raise src.bad(f"{where} (instance {iid}): 'train_trial_index' must be 0, 1, ..., got {describe(trial)}", line)
        pert = inst.get("perturbation")
        if pert is not None and (not isinstance(pert, dict) or type(pert.get("name")) is not str or not pert["name"]):
            raise src.bad(f"{where} (instance {iid}): 'perturbation' must be an object with a 'name', got "
                          f"{describe(pert)}", line)
        out.append(_State(i, iid, pert["name"] if pert else None, trial, obj, line))
    return (str(method) if method is not None else None), out


def _reference_text(ref: Any) -> str | None:
    output = ref.get("output") if isinstance(ref, dict) else None
    text = output.get("text") if isinstance(output, dict) else None
    return text if type(text) is str else None


def _gold(s: _State, src: Source) -> str | None:
    """The gold of one request state: its correct reference's letter (with an output mapping) or text; None:
    several distinct golds (left out, warned)."""
    refs = s.obj["instance"].get("references")
    if not isinstance(refs, list):
        raise src.bad(f"{s.where}: the instance has no 'references' list", s.line)
    correct = []
    for j, ref in enumerate(refs):
        tags = ref.get("tags") if isinstance(ref, dict) else None
        if _reference_text(ref) is None or not isinstance(tags, list):
            raise src.bad(f"{s.where}: references[{j}] is not a HELM Reference ({{output: {{text}}, tags: [...]}}): "
                          f"{describe(ref)}", s.line)
        if CORRECT in tags:
            correct.append(j)
    if not correct:
        raise src.bad(f"{s.where}: no reference is tagged 'correct', so the instance has no gold (a scenario "
                      "without gold answers is read by its metric: helm-run@1)", s.line)
    mapping = s.obj.get("output_mapping")
    if mapping:
        if not isinstance(mapping, dict) or len(mapping) != len(refs):
            raise src.bad(f"{s.where}: 'output_mapping' must map one label to each of the {len(refs)} references, "
                          f"got {describe(mapping)}", s.line)
        letters = list(mapping)
        for j in correct:
            if mapping[letters[j]] != _reference_text(refs[j]):
                raise src.bad(f"{s.where}: output_mapping[{letters[j]!r}] is not references[{j}]'s text: the "
                              "mapping does not follow the references' order", s.line)
        golds = sorted({letters[j] for j in correct})
    else:
        golds = sorted({(_reference_text(refs[j]) or "").strip() for j in correct})
    if len(golds) > 1:
        shown = ", ".join(map(repr, golds))
        src.skip("several-correct", f"{s.where}: {len(golds)} different correct references ({shown}); one gold "
                                    "per item cannot say 'any of these', so the instance is left out", s.line)
        return None
    return golds[0]


def _output(s: _State, src: Source) -> str | None:
    result = s.obj.get("result")
    if result is None:
        src.warn("no-result", f"{s.where}: the request has no result (not run): read as unparsed", s.line)
        return None
    completions = result.get("completions") if isinstance(result, dict) else None
    if not isinstance(completions, list):
        raise src.bad(f"{s.where}: 'result' has no 'completions' list: {describe(result)}", s.line)
    if not completions:
        src.warn("no-result", f"{s.where}: the result holds no completion (success "
                              f"{result.get('success')!r}): read as unparsed", s.line)
        return None
    first = completions[0]
    text = first.get("text") if isinstance(first, dict) else None
    if type(text) is not str:
        raise src.bad(f"{s.where}: result.completions[0] has no text: {describe(first)}", s.line)
    return text


def _records(src: Source) -> Iterator[Record]:
    """HELM's ``scenario_state.json`` (in ``runs/<suite>/<run_spec_name>/``):
    the run directory (with ``--reader helm-completions@1``) or the file.
    An object ``{adapter_spec, request_states}``; each request state has
    ``instance`` (``id``, ``input``, ``references``: ``[{output: {text},
    tags}]``, ``split``, ``perturbation``), ``train_trial_index``,
    ``output_mapping`` (multiple choice: label -> reference text),
    ``reference_index``, ``request_mode``, ``request`` and ``result``
    (``completions: [{text, logprob, tokens}]``). Other fields are ignored.

    Output: ``result.completions[0].text`` (what HELM's display_predictions.json
    calls ``predicted_text``), read by ``--parser`` (e.g. ``helm-choice@1``); a
    request without result or completions is unparsed (warned).
    Gold: the reference tagged ``correct``. With an ``output_mapping``
    (``multiple_choice_joint``), its label: the mapping's key at the correct
    reference's position (``A``, ``B``, ...); else (generation) the reference's
    text, stripped of surrounding whitespace, which must then be a label of the
    parser's set. Several correct references that give one gold (the same
    text twice) are that gold; several that give different golds (a
    multi-label question, a generation task with several acceptable answers)
    leave the instance out, warned and counted (``several-correct``): one
    gold per item cannot say "any of these", which HELM's metrics take.

    Key: the instance id, with the perturbation's name after it when it has
    one. Trial: ``train_trial_index`` + 1; a run of several train trials is
    refused unless ``--epoch N`` keeps one, as for helm-run@1.

    HELM scores a completion that names no choice wrong, so the default
    unparsed policy of these runs is ``wrong`` (the source's rule;
    ``--unparsed intersect`` is printed as a departure). The harness's own
    figure (``multiple_choice_joint``, one train trial, no perturbation):
    ``exact_match`` in the ``stats.json`` beside the file, shown by ``parse``
    and ``compare`` beside the recomputed accuracy.

    Refused, naming file, line and request state: a file that is not JSON or
    is truncated; not a scenario state; an adapter method without an answer
    to parse (``multiple_choice_separate_*``: each reference is scored by its
    log probability; ``language_modeling``): read its metric with
    helm-run@1; a request state without an instance id or train trial; an
    instance without a correct reference; references or an output mapping
    that are malformed or do not match; a completion without text; the same
    (instance, perturbation, train trial) twice; an ``--epoch`` no request
    state has."""
    value = load_json(src)
    run_about(src)
    kind = kind_of_head(src.data[:4096])
    if kind is not None and kind != SCENARIO_STATE:
        shown = kind if kind.endswith(".json") else f"{kind}.json"
        raise src.bad(f"this is HELM's {shown}: helm-completions@1 reads scenario_state.json (give the run "
                      "directory with --reader helm-completions@1, or that file); HELM's metrics are read by helm-run@1")
    method, states = _states(value, src)
    src.lines_total = len(states)
    if method in NO_ANSWER_METHODS:
        raise src.bad(f"adapter method {method!r} has no answer text to parse (each reference is scored by its log "
                      "probability, or the text token by token): read HELM's metric with helm-run@1")
    if not states:
        src.warn("empty-run", "the file holds no request state")
        return
    seen: dict[tuple[str, str | None, int], _State] = {}
    for s in states:
        where = (s.instance_id, s.perturbation, s.trial)
        if where in seen:
            raise src.bad(f"{s.where} is given again (first as request_states[{seen[where].index}]): the file holds "
                          "the same (instance, perturbation, train trial) twice", s.line)
        seen[where] = s
    keep = chosen_trial({s.trial for s in states}, src)
    src.used.update(file=SCENARIO_STATE, method=method or "?")
    if method == "multiple_choice_joint" and all(k[1] is None for k in seen) and len({k[2] for k in seen}) == 1:
        figure = stats_figure(src, "exact_match", None)  # one trial, no perturbation: HELM's own exact_match
        if figure is not None:
            src.harness.append(figure)
    if keep is not None:
        src.used["epoch"] = str(keep + 1)
    for s in states:
        if keep is not None and s.trial != keep:
            continue
        gold = _gold(s, src)
        if gold is None:
            continue
        key = (s.instance_id,) if s.perturbation is None else (s.instance_id, s.perturbation)
        yield Record(key, s.line, output=_output(s, src), gold=gold, trial=s.trial + 1)


HELM_COMPLETIONS = Reader(
    "helm-completions@1",
    "HELM run's scenario_state.json: each completion's text for --parser (e.g. helm-choice@1), gold from the "
    "reference tagged correct.",
    _sniff,
    _records,
    yields="outputs",
    key_names=("instance_id", "perturbation"),
    has_gold=True,
    format="helm-scenario-state",
    details=inspect.cleandoc(_records.__doc__ or ""),
    trial_option="epoch",
    options=("epoch",),
    run_files=(SCENARIO_STATE,),
    directory_default=False,
    parsers=("helm-choice@1",),
    source_rule=SourceRule("wrong", "HELM scores a completion that names no choice wrong (exact_match 0)"),
)
