"""The inputs of ``replicate rankings`` as values: a run file's results and a qrels' judgments (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from replicate.provenance import FileProvenance


@dataclass(frozen=True)
class RunFile:
    """One system's results: ``results[qid][docid] = score``."""

    name: str
    provenance: FileProvenance
    results: Mapping[str, Mapping[str, float]]
    lines: int  # result lines read (blank lines not counted)
    tags: tuple[str, ...]  # the sixth column's values, in order of first appearance

    def to_json(self) -> dict:
        return {"name": self.name, "file": self.provenance.to_json(), "results": self.lines,
                "topics": len(self.results), "tags": list(self.tags)}


@dataclass(frozen=True)
class Qrels:
    """One qrels file: ``judgments[qid][docid] = grade``."""

    provenance: FileProvenance
    judgments: Mapping[str, Mapping[str, int]]
    reader: str

    @property
    def topics(self) -> frozenset[str]:
        return frozenset(self.judgments)

    def to_json(self) -> dict:
        return {"file": self.provenance.to_json(), "reader": self.reader, "topics": len(self.judgments),
                "judgments": sum(len(d) for d in self.judgments.values())}
