"""Every figure of one edge counted item by item: the reference the bootstrap tests compare against."""

from __future__ import annotations


def plain_figures(old: list[int], new: list[int], gold: list[int], policy: str) -> dict[str, float | None]:
    """Every figure of one edge by counting items one at a time (the reference)."""
    both = only_old = only_new = neither = changed = 0
    for x, y, g in zip(old, new, gold):
        if policy == "intersect" and (x < 0 or y < 0):
            continue
        right_old, right_new = x == g, y == g
        both += right_old and right_new
        only_old += right_old and not right_new
        only_new += right_new and not right_old
        neither += not right_old and not right_new
        changed += x != y
    n = both + only_old + only_new + neither
    oc, nc = both + only_old, both + only_new

    def ratio(a: float, b: float) -> float | None:
        return None if b == 0 else a / b

    return {
        "em_old": ratio(oc, n),
        "em_new": ratio(nc, n),
        "accuracy_difference": ratio(only_old - only_new, n),
        "regression_rate": ratio(only_old, n),
        "regression_share_of_old_correct": ratio(only_old, oc),
        "backward_rate": ratio(only_new, n),
        "change_rate": ratio(changed, n),
        "independent_regression_rate": ratio(oc * (n - nc), n * n),
        "independence_ratio": ratio(only_old * n, oc * (n - nc)),
    }
