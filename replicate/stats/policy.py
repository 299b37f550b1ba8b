"""The unparsed policy: how an output no parser could read counts in a figure.

``intersect`` (the default) drops an item from a pair when either side is
unparsed; ``wrong`` keeps it and counts the unparsed side as incorrect (see
docs/design/design.md). One type, one list, one check for every module.
"""

from __future__ import annotations

from typing import Literal, get_args

Policy = Literal["intersect", "wrong"]
POLICIES: tuple[Policy, ...] = get_args(Policy)


def check_policy(policy: str) -> Policy:
    """``policy`` as a :data:`Policy`; ValueError naming the choices otherwise."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    return policy
