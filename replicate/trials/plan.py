"""``replicate plan``: the power of the item-level test before collecting (pure).

For each move ``p -> q`` and each K (per side), :func:`replicate.stats.power.flag_power`
under one stated assumption about the other items; with ``target`` given, the K
needed per move (:func:`replicate.stats.power.k_for_power`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from replicate.errors import Message, Param, UsageError
from replicate.output import Format, FormatArg, pct, prose, table
from replicate.stats.classify import parse_eps
from replicate.stats.power import (
    DEFAULT_RESAMPLES,
    FlagPower,
    KNeeded,
    flag_power,
    k_for_power,
)
from replicate.trials.settings import DEFAULT_SEED, DEFAULTS


def _rate(text: str, what: str) -> float:
    try:
        v = Decimal(text.strip())
    except InvalidOperation:
        raise UsageError(Message(Param(what), f": {text!r} is not a number")) from None
    if not 0 <= v <= 1:
        raise UsageError(Message(Param(what), f": {text} must lie in [0, 1]"))
    return float(v)


def parse_move(text: str, *, param: str = "move") -> tuple[float, float]:
    """``"0.4:0.6"`` -> ``(0.4, 0.6)``: the item's true accuracy on the source, then on the target."""
    parts = text.split(":")
    if len(parts) != 2:
        raise UsageError(Message(Param(param), f" must look like P:Q (source and target accuracy), got {text!r}"))
    return _rate(parts[0], param), _rate(parts[1], param)


def parse_k(text: str) -> tuple[int, int]:
    """``"50"`` -> ``(50, 50)``; ``"50:40"`` -> trials on the source, then on the target."""
    parts = text.split(":")
    try:
        ks = [int(p) for p in parts]
    except ValueError:
        ks = []
    if len(ks) not in (1, 2) or min(ks) < 1:
        raise UsageError(Message(Param("k"), f" must be a positive integer K or KSRC:KTGT, got {text!r}"))
    return (ks[0], ks[-1])


@dataclass(frozen=True)
class PlanResult:
    rows: tuple[FlagPower, ...]
    k_needed: tuple[KNeeded, ...]
    n_items: int
    alpha: float
    eps: Fraction
    moving: float
    base_rate: float | None
    n_resamples: int
    seed: int
    target: float | None
    k_max: int

    def assumption(self) -> str:
        base = "its own source accuracy p" if self.base_rate is None else f"{self.base_rate:g}"
        return (f"of the other {self.n_items - 1} item(s) in the cell, a share {self.moving:g} moves the same "
                f"way and the rest stay at {base} on both sides")

    def to_json(self) -> dict:
        return {
            "power": [r.to_json() for r in self.rows],
            "k_needed": [k.to_json() for k in self.k_needed],
            "settings": {
                "n_items": self.n_items,
                "alpha": self.alpha,
                "eps": float(self.eps),
                "eps_text": _eps_text(self.eps),
                "moving": self.moving,
                "base_rate": self.base_rate,
                "assumption": self.assumption(),
                "resamples": self.n_resamples,
                "seed": self.seed,
                "target_power": self.target,
                "k_max": self.k_max,
                "fisher": "two-sided, as scipy.stats.fisher_exact",
                "multiple_testing": "Benjamini-Hochberg per cell, as scipy.stats.false_discovery_control",
            },
        }


def _eps_text(e: Fraction) -> str:
    d = Decimal(e.numerator) / Decimal(e.denominator)
    return format(d.normalize(), "f") if Fraction(d) == e else f"{e.numerator}/{e.denominator}"


#: The parameters of :func:`plan` the statistics' messages may name.
_PARAMS = ("n_items", "n_resamples", "base_rate", "moving", "eps", "seed", "alpha", "power", "k_max")


def plan(
    moves: Sequence[tuple[float, float]],
    ks: Sequence[tuple[int, int]],
    *,
    n_items: int,
    alpha: float = DEFAULTS.alpha,
    eps: str | float | Fraction = DEFAULTS.eps,
    moving: float = 0.0,
    base_rate: float | None = None,
    target: float | None = None,
    k_max: int = 200,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PlanResult:
    """Power per move and K, and (with ``target``) the K needed per move; errors as UsageError."""
    try:
        eps_f = parse_eps(eps, name="eps")
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        rows = tuple(
            flag_power(p, q, k=k1, k_target=k2, n_items=n_items, alpha=alpha, eps=eps_f, moving=moving,
                       base_rate=base_rate, n_resamples=n_resamples, seed=seed)
            for p, q in moves for k1, k2 in ks
        )
        needed: tuple[KNeeded, ...] = ()
        if target is not None:
            needed = tuple(
                k_for_power(p, q, power=target, n_items=n_items, alpha=alpha, eps=eps_f, moving=moving,
                            base_rate=base_rate, k_max=k_max, n_resamples=n_resamples, seed=seed)
                for p, q in moves
            )
    except ValueError as exc:
        raise UsageError(Message.naming(str(exc), *_PARAMS)) from None
    return PlanResult(rows, needed, int(n_items), float(alpha), eps_f, float(moving), base_rate,
                      int(n_resamples), int(seed), target, int(k_max))


def _move(p: float, q: float) -> str:
    return f"{p:g} -> {q:g}"


def render_plan(result: PlanResult, fmt: FormatArg) -> str:
    fmt = Format(fmt)
    md = fmt is Format.markdown
    head = "## " if md else ""
    title = prose(f"{head}Power to flag an item (eps {_eps_text(result.eps)}, BH q <= {result.alpha:g} across "
                  f"{result.n_items} items; {result.n_resamples} simulated cells of the other items, "
                  f"seed {result.seed})\n", fmt)
    rows = [[_move(r.p, r.q), r.k_source, r.k_target, pct(r.power, 1),
             "-" if r.mc_se is None else pct(r.mc_se, 2),
             f"[{pct(r.bounds[0], 1)}, {pct(r.bounds[1], 1)}]", pct(r.wrong_direction, 1)]
            for r in result.rows]
    out = [title, table(rows, ["move", "K src", "K tgt", "power", "MC s.e.", "bounds", "wrong way"], fmt)]
    out.append(prose(f"Other items: {result.assumption()}. Power: the chance of being flagged in the direction "
                     "of the move (reliably improved or regressed); bounds hold whatever the other items do "
                     "(low: no other item significant; high: all of them).\n", fmt))
    if result.k_needed:
        rows = []
        for k in result.k_needed:
            if k.k is None:
                never = f"not reached by K = {k.k_max} (d reaches eps with chance {pct(k.cap, 1)} there)"
                rows.append([_move(k.p, k.q), "-", never])
            else:
                assert k.at_k is not None
                rows.append([_move(k.p, k.q), k.k, pct(k.at_k.power, 1)])
        out.append("")
        out.append(prose(f"{head}K per side needed for {pct(result.target, 0)} power (the smallest K from 1 to "
                         f"{result.k_max} that reaches it; power is not monotone in K, so every K is tried)\n", fmt))
        out.append(table(rows, ["move", "K", "power at K"], fmt))
    return "\n".join(out)
