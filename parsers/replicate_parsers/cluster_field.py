"""``--cluster metadata.FIELD`` / ``--cluster doc.FIELD``: a grouping carried in a sample's own metadata.

Logs keyed by one id (inspect_ai's sample ``id``, lm-eval's ``doc_id``) keep what groups their items (a
passage, a document, a conversation) in each sample's ``metadata`` (inspect_ai) or ``doc`` (lm-eval).
Asked for, the reader appends that field's value to each item's key as a second key field named as
given (``metadata.passage``), so the cluster bootstrap groups by it; not asked, nothing is read.
"""

from __future__ import annotations

from typing import Any

from replicate.reading.contract import Source
from replicate.reading.stream import describe, key_text


def asked_field(src: Source, prefix: str) -> str | None:
    """The field ``--cluster PREFIX.FIELD`` names (None when not asked); another prefix is refused."""
    spec = src.options.get("cluster_by")
    if spec is None:
        return None
    head, dot, name = str(spec).partition(".")
    if not dot or not name or f"{head}." != prefix:
        raise src.bad(f"--cluster {spec}: this reader's samples carry their grouping in '{prefix[:-1]}': "
                      f"name one of its fields as {prefix}FIELD")
    return name


def grouping(src: Source, container: Any, name: str, prefix: str, where: str, line: int | None) -> str:
    """The value of field ``name`` of a sample's ``container`` (its metadata or doc) as a key field's text."""
    if not isinstance(container, dict) or name not in container:
        has = "no fields" if not isinstance(container, dict) or not container else \
            "fields: " + ", ".join(sorted(map(str, container)))
        raise src.bad(f"{where}lacks the field {prefix}{name} that --cluster groups by (its {prefix[:-1]} has {has})", line)
    text = key_text(container[name])
    if text is None:
        raise src.bad(f"{where}{prefix}{name} must be a string or an integer to group by, got {describe(container[name])}", line)
    return text
