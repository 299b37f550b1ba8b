"""Versioned plugin registries discovered through entry points.

A plugin's canonical name ``family-variant@N`` is its identity: the same text
works on the command line, in Python and in output files, and a released
version never changes behaviour (a behaviour change is a new ``@N``).

Parsers (``replicate.parsers``) and scorers (``replicate.scorers``) share this
mechanism. Built-ins ship through the same entry-point groups as third-party
plugins. An entry point loads either one plugin object or a list of them; the
entry-point name itself carries no ``@``. Loading is lazy, and a plugin that
fails to import is recorded in :attr:`Registry.broken` instead of breaking
unrelated commands.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import total_ordering
from importlib.metadata import entry_points
from typing import Generic, Iterable, Iterator, Protocol, TypeVar, runtime_checkable

from replicate.errors import UsageError

NAME_PATTERN = re.compile(
    r"^(?P<family>[a-z0-9][a-z0-9_.]*)(?:-(?P<variant>[a-z0-9][a-z0-9_.-]*?))?@(?P<version>[1-9][0-9]*)$"
)


@total_ordering
@dataclass(frozen=True, slots=True)
class VersionedName:
    """A parsed ``family-variant@N`` name. ``str()`` gives back the canonical text.

    Names sort by family, then variant (a name without one first), then version.
    """

    family: str
    variant: str | None
    version: int

    @classmethod
    def parse(cls, text: str) -> "VersionedName":
        m = NAME_PATTERN.match(text)
        if m is None:
            raise ValueError(
                f"invalid plugin name {text!r}: expected 'family-variant@N' "
                "(lower case letters, digits, '_', '.', '-', then '@' and a version >= 1)"
            )
        return cls(m["family"], m["variant"], int(m["version"]))

    @property
    def base(self) -> str:
        """The name without its version, e.g. ``umbrela-strict``."""
        return self.family if self.variant is None else f"{self.family}-{self.variant}"

    def __str__(self) -> str:
        return f"{self.base}@{self.version}"

    def _key(self) -> tuple[str, str, int]:
        # a variant is never empty, so "" puts ``family@N`` before ``family-variant@N``
        return (self.family, self.variant or "", self.version)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, VersionedName):
            return NotImplemented
        return self._key() < other._key()


@runtime_checkable
class Plugin(Protocol):
    """What every registered object offers: its versioned name and one line of text."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


P = TypeVar("P", bound=Plugin)


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """An entry point that could not be loaded, or that offered something unusable."""

    entry_point: str
    value: str
    distribution: str | None
    error: str

    def __str__(self) -> str:
        dist = f" (from {self.distribution})" if self.distribution else ""
        return f"entry point {self.entry_point!r} = {self.value!r}{dist}: {self.error}"


class Registry(Generic[P]):
    """Plugins of one kind, keyed by canonical versioned name."""

    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self._plugins: dict[str, P] | None = None
        self._origin: dict[str, str] = {}
        self._broken: list[BrokenPlugin] = []

    # -- discovery -----------------------------------------------------------------
    def _ensure_loaded(self) -> dict[str, P]:
        if self._plugins is None:
            self._plugins = {}
            for ep in sorted(entry_points(group=self.group), key=lambda e: (e.name, e.value)):
                dist = getattr(getattr(ep, "dist", None), "name", None)
                try:
                    loaded = ep.load()
                except Exception as exc:  # a broken plugin must not break the tool
                    self._broken.append(BrokenPlugin(ep.name, ep.value, dist, f"{type(exc).__name__}: {exc}"))
                    continue
                items = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
                for obj in items:
                    problem = self._problem(obj)
                    if problem is not None:
                        self._broken.append(BrokenPlugin(ep.name, ep.value, dist, problem))
                        continue
                    self._plugins[obj.name] = obj
                    self._origin[obj.name] = dist or ep.value
        return self._plugins

    def _problem(self, obj: object) -> str | None:
        name = getattr(obj, "name", None)
        if not isinstance(name, str) or not isinstance(getattr(obj, "description", None), str):
            return f"{obj!r} is not a {self.kind}: it needs a str 'name' and a str 'description'"
        try:
            canonical = str(VersionedName.parse(name))
        except ValueError as exc:
            return str(exc)
        if canonical != name:
            return f"{self.kind} name {name!r} is not canonical (expected {canonical!r})"
        assert self._plugins is not None
        if name in self._plugins:
            return f"{self.kind} {name!r} is registered twice (already from {self._origin[name]})"
        return None

    def register(self, plugin: P) -> P:
        """Add a plugin programmatically (tests, notebooks). Same checks as discovery."""
        plugins = self._ensure_loaded()
        problem = self._problem(plugin)
        if problem is not None:
            raise UsageError(problem)
        plugins[plugin.name] = plugin
        self._origin[plugin.name] = "registered at run time"
        return plugin

    def unregister(self, name: str) -> None:
        self._ensure_loaded().pop(name, None)
        self._origin.pop(name, None)

    # -- lookup --------------------------------------------------------------------
    @property
    def broken(self) -> list[BrokenPlugin]:
        self._ensure_loaded()
        return list(self._broken)

    def names(self, family: str | None = None) -> list[str]:
        """Registered names, sorted by family, variant and version."""
        names = sorted(self._ensure_loaded(), key=VersionedName.parse)
        if family is not None:
            names = [n for n in names if VersionedName.parse(n).family == family]
        return names

    def origin(self, name: str) -> str:
        self._ensure_loaded()
        return self._origin[name]

    def __iter__(self) -> Iterator[P]:
        plugins = self._ensure_loaded()
        return iter([plugins[n] for n in self.names()])

    def __contains__(self, name: object) -> bool:
        return name in self._ensure_loaded()

    def _why_unknown(self, name: str) -> str:
        plugins = self._ensure_loaded()
        msg = f"unknown {self.kind} {name!r}"
        if "@" not in name:
            versions = [n for n in self.names() if n.split("@")[0] == name]
            if versions:
                return f"{msg}: name its version, one of {', '.join(versions)}"
        close = difflib.get_close_matches(name, list(plugins), n=3)
        if close:
            msg += f" (did you mean {', '.join(close)}?)"
        available = ", ".join(self.names()) or "none"
        msg += f"; registered {self.kind}s: {available}"
        if self._broken:
            msg += f"; {len(self._broken)} plugin(s) failed to load (see 'replicate {self.kind}s list')"
        return msg

    def get(self, name: str) -> P:
        plugins = self._ensure_loaded()
        if name not in plugins:
            raise UsageError(self._why_unknown(name))
        return plugins[name]

    def get_many(self, names: Iterable[str]) -> list[P]:
        """Resolve several names, reporting every unknown one at once."""
        names = list(names)
        problems = [self._why_unknown(n) for n in names if n not in self._ensure_loaded()]
        if problems:
            raise UsageError("\n".join(problems))
        return [self.get(n) for n in names]
