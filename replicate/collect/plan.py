"""Pure, seeded request ordering and the dry-run plan.

Within a model's phase every (item, trial) pair is visited in a random order
drawn from ``(seed, model)``; the full order is drawn first and then the pairs
already in the archive are removed, so a resumed run keeps the original order.
A phase of more than :data:`MAX_PHASE_REQUESTS` requests is refused (its order
alone would fill memory); the dry-run plan only counts, so any K can be planned.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import AbstractSet, Iterable, Sequence

from replicate.collect.config import CollectConfig, Item
from replicate.errors import UsageError
from replicate.output import Format, table

Triple = tuple[str, str, int]  # (model, item id, trial)
#: The most requests one model's phase may hold (items x K): the seeded order of a phase is held in memory
#: (about 100 bytes a request), and no collection pays for more.
MAX_PHASE_REQUESTS = 10_000_000


def phase_seed(seed: int, model: str) -> int:
    """The integer seed of one model's phase, derived from the collection seed."""
    digest = hashlib.sha256(f"{seed}\0{model}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def phase_order(items: Sequence[Item], model: str, *, k: int, seed: int) -> list[tuple[str, int]]:
    """Every (item id, trial) of one phase in its seeded random order."""
    if len(items) * k > MAX_PHASE_REQUESTS:
        raise UsageError(f"a phase of {len(items):,} items x k={k:,} = {len(items) * k:,} requests is more than "
                         f"{MAX_PHASE_REQUESTS:,}, the most one collection run holds; lower k (--dry-run plans any k)")
    pairs = [(it.id, t) for it in items for t in range(k)]
    random.Random(phase_seed(seed, model)).shuffle(pairs)
    return pairs


def pending(
    items: Sequence[Item], model: str, *, k: int, seed: int, done: Iterable[Triple] | set[Triple] = ()
) -> list[tuple[str, int]]:
    """The phase's pairs still missing from the archive, in seeded order."""
    done_set = done if isinstance(done, (set, frozenset)) else set(done)
    return [(i, t) for i, t in phase_order(items, model, k=k, seed=seed) if (model, i, t) not in done_set]


def estimate_prompt_tokens(item: Item) -> int:
    """A rough prompt size: characters / 4 over the message contents, plus 4 per message."""
    chars = 0
    for m in item.messages:
        c = m.get("content")
        chars += len(c) if isinstance(c, str) else len(str(c))
    return chars // 4 + 4 * len(item.messages)


@dataclass(frozen=True, slots=True)
class PhasePlan:
    model: str
    requests: int  # still to send
    already_done: int
    est_prompt_tokens: int
    max_completion_tokens: int | None  # requests x output cap, when the params set one


@dataclass(frozen=True, slots=True)
class Plan:
    """What ``collect`` would send: per phase, in order."""

    phases: tuple[PhasePlan, ...]
    items: int
    k: int
    seed: int
    concurrency: int
    params_hash: str

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.phases)

    def to_json(self) -> dict:
        return {
            "items": self.items,
            "k": self.k,
            "seed": self.seed,
            "concurrency": self.concurrency,
            "params_hash": self.params_hash,
            "requests": self.requests,
            "phases": [
                {
                    "model": p.model,
                    "requests": p.requests,
                    "already_done": p.already_done,
                    "est_prompt_tokens": p.est_prompt_tokens,
                    "max_completion_tokens": p.max_completion_tokens,
                }
                for p in self.phases
            ],
        }


_CAP_PARAMS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def make_plan(config: CollectConfig, items: Sequence[Item], *, done: AbstractSet[Triple] = frozenset()) -> Plan:
    """The dry-run plan: requests per phase and estimated tokens. Pure; counted, not listed, so its time and
    memory grow with the items and the archive, not with K."""
    per_item = {it.id: estimate_prompt_tokens(it) for it in items}
    total_tokens = sum(per_item.values())
    cap = next((config.params[p] for p in _CAP_PARAMS if isinstance(config.params.get(p), int)), None)
    phases = []
    for model in config.models:
        done_here = [i for m, i, t in done if m == model and i in per_item and 0 <= t < config.k]
        todo = len(items) * config.k - len(done_here)
        phases.append(
            PhasePlan(
                model=model,
                requests=todo,
                already_done=len(done_here),
                est_prompt_tokens=config.k * total_tokens - sum(per_item[i] for i in done_here),
                max_completion_tokens=None if cap is None else cap * todo,
            )
        )
    return Plan(tuple(phases), len(items), config.k, config.seed, config.concurrency, config.params_hash)


def render_plan(plan: Plan, fmt: Format) -> str:
    rows = [
        [
            n,
            p.model,
            p.requests,
            p.already_done,
            f"~{p.est_prompt_tokens}",
            "no cap set" if p.max_completion_tokens is None else f"<= {p.max_completion_tokens}",
        ]
        for n, p in enumerate(plan.phases, 1)
    ]
    head = (
        f"Plan (dry run, nothing sent): {plan.items} items x K={plan.k} per model, "
        f"seed {plan.seed}, concurrency {plan.concurrency}, params {plan.params_hash[:19]}\n"
    )
    body = table(rows, ["phase", "model", "requests", "already done", "prompt tokens", "completion tokens"], fmt)
    return head + body + f"total requests: {plan.requests}\n"
