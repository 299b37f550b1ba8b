"""Collection config (TOML) and items file (JSONL): loading and validation.

The API key never appears here: the config names the environment variable
that holds it (``api_key_env``) and the client reads that variable at request
time. A config that carries a key itself is refused.

Where the endpoint comes from, first match wins: the command line
(``--base-url``), the config's ``[endpoint]``, then the environment the
OpenAI SDKs read: ``OPENAI_BASE_URL`` for ``base_url`` and the variable
``OPENAI_API_KEY`` for ``api_key_env``.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Sequence
from urllib.parse import parse_qsl, urlsplit

import orjson

from replicate.command_input import json_lines, read_input
from replicate.errors import BadInput, UsageError
from replicate.registry import VersionedName
from replicate.retry import backoff
from replicate.tomlfile import read_toml

_ENDPOINT_KEYS = {"base_url", "api_key_env"}
_COLLECTION_KEYS = {
    "models",
    "k",
    "concurrency",
    "seed",
    "timeout",
    "connect_timeout",
    "max_retries",
    "backoff_base",
    "backoff_max",
    "retry_after_max",
    "give_up_after",
    "seed_per_trial",
    "mode",
    "batch_max_lines",
    "batch_max_bytes",
    "batch_poll",
    "batch_window",
    "batch_deadline",
}
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
_SECRET_HINTS = ("api_key", "key", "token", "secret", "password", "authorization")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of transient faults: exponential backoff with jitter, honouring Retry-After.

    ``max_retries`` caps the retries of one request (0 = retry until success);
    the n-th retry waits ``min(backoff_max, backoff_base * 2**(n-1))`` scaled by a
    jitter factor in [0.5, 1], or the server's Retry-After if that is longer.
    A Retry-After is honoured up to ``retry_after_max`` seconds, so a provider
    sending a huge value cannot stall the collection indefinitely.
    ``give_up_after`` stops the run when no request has had an answer (a
    success or a request's own error) for that many seconds while requests keep
    failing transiently (an endpoint down): retrying until success must not
    mean retrying for ever. 0 = never.
    """

    max_retries: int = 0
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    retry_after_max: float = 900.0
    give_up_after: float = 1800.0

    def delay(self, retry: int, *, retry_after: float | None, jitter: float) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); ``jitter`` in [0, 1)."""
        base = backoff(retry, base=self.backoff_base, cap=self.backoff_max)
        wait = base * (0.5 + 0.5 * jitter)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.retry_after_max))
        return wait


@dataclass(frozen=True, slots=True)
class BatchSettings:
    """Batch mode (``[collection] mode = "batch"`` or ``collect --batch``): limits per batch and polling."""

    enabled: bool = False
    max_lines: int = 50_000  # OpenAI: 50,000 requests per batch
    max_bytes: int = 200 * 1024 * 1024  # OpenAI: 200 MB per input file
    poll: float = 30.0  # seconds between status checks
    window: str = "24h"  # completion_window
    deadline: float | None = None  # seconds after which a run stops polling (None: poll until every batch ends)

    def public(self) -> dict[str, Any]:
        return {"mode": "batch" if self.enabled else "online", "batch_max_lines": self.max_lines,
                "batch_max_bytes": self.max_bytes, "batch_poll": self.poll, "batch_window": self.window,
                "batch_deadline": self.deadline}

    def submission(self) -> dict[str, Any]:
        """The settings that shape what is submitted (recorded with each upload, checked on resume)."""
        return {"batch_window": self.window, "batch_max_lines": self.max_lines, "batch_max_bytes": self.max_bytes}


@dataclass(frozen=True, slots=True)
class CollectConfig:
    """Everything a collection needs except the items and the secret."""

    base_url: str
    api_key_env: str
    models: tuple[str, ...]
    k: int
    concurrency: int = 8
    seed: int = 0
    timeout: float = 600.0
    connect_timeout: float = 10.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    seed_per_trial: bool = False  # send seed + trial index instead of one seed for every trial
    batch: "BatchSettings" = field(default_factory=lambda: BatchSettings())

    def __post_init__(self) -> None:
        _validate(self)

    def params_for(self, trial: int) -> dict[str, Any]:
        """The request parameters of trial ``trial``: ``[params]``, with ``seed + trial`` under seed_per_trial.

        The base is ``[params] seed`` when set, else the collection seed.
        """
        params = dict(self.params)
        if self.seed_per_trial:
            base = params.get("seed", self.seed)
            params["seed"] = int(base) + trial
        return params

    def with_overrides(self, **changes: Any) -> "CollectConfig":
        """A copy with command-line overrides applied (``None`` values are ignored)."""
        changes = {k: v for k, v in changes.items() if v is not None}
        if "models" in changes:
            changes["models"] = tuple(changes["models"])
        return replace(self, **changes)

    def with_batch(self, **changes: Any) -> "CollectConfig":
        """A copy with batch settings changed (``None`` values are ignored), e.g. ``enabled=True``."""
        changes = {k: v for k, v in changes.items() if v is not None}
        return replace(self, batch=replace(self.batch, **changes)) if changes else self

    @property
    def params_hash(self) -> str:
        """sha256 of the request parameters as canonical JSON (sorted keys)."""
        return "sha256:" + hashlib.sha256(_canonical(dict(self.params))).hexdigest()

    def public(self) -> dict[str, Any]:
        """The config as written to the archive header: no secrets (only the variable's name)."""
        return {
            "endpoint": {"base_url": self.base_url, "api_key_env": self.api_key_env},
            "collection": {
                "models": list(self.models),
                "k": self.k,
                "concurrency": self.concurrency,
                "seed": self.seed,
                "timeout": self.timeout,
                "connect_timeout": self.connect_timeout,
                "max_retries": self.retry.max_retries,
                "backoff_base": self.retry.backoff_base,
                "backoff_max": self.retry.backoff_max,
                "retry_after_max": self.retry.retry_after_max,
                "give_up_after": self.retry.give_up_after,
                "seed_per_trial": self.seed_per_trial,
                **self.batch.public(),
            },
            "params": dict(self.params),
        }


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_base_url(url: object) -> None:
    """An http(s) URL without credentials: no ``user:password@`` and no secret-looking query parameter.

    The URL is stored in the archive's header, so a key in it would be written down; the messages never
    show the parts that may be secret.
    """
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        shown = url.split("://", 1)[0] + "://..." if isinstance(url, str) and "://" in url else "(not shown)"
        raise UsageError(f"base_url must start with http:// or https://, got {shown}")
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UsageError("base_url must not carry credentials (user:password@host; the URL is not shown): the "
                         "API key goes in the environment variable named by api_key_env")
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        if any(h in name.lower().replace("-", "_") for h in _SECRET_HINTS + ("auth", "sig")):
            raise UsageError(f"base_url must not carry credentials: its query parameter {name!r} looks like one "
                             "(its value is not shown); the API key goes in the environment variable named by "
                             "api_key_env")


def _validate(c: CollectConfig) -> None:
    _check_base_url(c.base_url)
    if not isinstance(c.api_key_env, str) or not _ENV_NAME.fullmatch(c.api_key_env):
        raise UsageError("api_key_env must be the name of the environment variable that holds the API key "
                         "(letters, digits and _, e.g. OPENAI_API_KEY), not the key itself; the value given is "
                         "not shown")
    if not c.models or not all(isinstance(m, str) and m for m in c.models):
        raise UsageError("models must be a non-empty list of model ids")
    dupes = sorted({m for m in c.models if c.models.count(m) > 1})
    if dupes:
        raise UsageError(f"models lists {', '.join(dupes)} more than once")
    if not isinstance(c.k, int) or isinstance(c.k, bool) or c.k < 1:
        raise UsageError(f"k must be an integer >= 1, got {c.k!r}")
    if not isinstance(c.concurrency, int) or isinstance(c.concurrency, bool) or c.concurrency < 1:
        raise UsageError(f"concurrency must be an integer >= 1, got {c.concurrency!r}")
    if not isinstance(c.seed, int) or isinstance(c.seed, bool):
        raise UsageError(f"seed must be an integer, got {c.seed!r}")
    for name in ("timeout", "connect_timeout"):
        v = getattr(c, name)
        if not _is_number(v) or v <= 0:
            raise UsageError(f"{name} must be a number of seconds > 0, got {v!r}")
    r = c.retry
    if not isinstance(r.max_retries, int) or isinstance(r.max_retries, bool) or r.max_retries < 0:
        raise UsageError(f"max_retries must be an integer >= 0 (0 = until success), got {r.max_retries!r}")
    for name in ("backoff_base", "backoff_max", "retry_after_max", "give_up_after"):
        v = getattr(r, name)
        if not _is_number(v) or v < 0:
            raise UsageError(f"{name} must be a number of seconds >= 0, got {v!r}")
    if not isinstance(c.seed_per_trial, bool):
        raise UsageError(f"seed_per_trial must be true or false, got {c.seed_per_trial!r}")
    if c.seed_per_trial and "seed" in c.params and (not isinstance(c.params["seed"], int)
                                                    or isinstance(c.params["seed"], bool)):
        raise UsageError(f"seed_per_trial adds the trial index to [params] seed, which must be an integer, "
                         f"got {c.params['seed']!r}")
    b = c.batch
    for name in ("max_lines", "max_bytes"):
        v = getattr(b, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise UsageError(f"batch_{name} must be an integer >= 1, got {v!r}")
    if not _is_number(b.poll) or b.poll < 0:
        raise UsageError(f"batch_poll must be a number of seconds >= 0, got {b.poll!r}")
    if not isinstance(b.window, str) or not b.window:
        raise UsageError(f"batch_window must be a completion window like '24h', got {b.window!r}")
    if b.deadline is not None and (not _is_number(b.deadline) or b.deadline <= 0):
        raise UsageError(f"batch_deadline must be a number of seconds > 0, got {b.deadline!r}")
    reserved = {"model", "messages", "stream", "n"} & set(c.params)
    if reserved:
        raise UsageError(
            f"[params] may not set {', '.join(sorted(reserved))}: the collector sets model and "
            "messages itself and needs one non-streamed choice per request"
        )


def _is_number(v: Any) -> bool:
    """A finite int or float; ``true``/``false`` are not numbers here (Python counts bool as int)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _canonical(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def load_config(path: str | Path, *, base_url: str | None = None) -> CollectConfig:
    """Read a collection config TOML. Unknown keys and inline secrets are bad input.

    ``base_url`` (the command line's ``--base-url``) wins over the config's,
    which wins over ``OPENAI_BASE_URL``.
    """
    path = Path(path)
    data = read_toml(path, what="config file")
    unknown_tables = set(data) - {"endpoint", "collection", "params"}
    if unknown_tables:
        raise BadInput(
            f"unknown table(s) {', '.join(sorted(unknown_tables))}; allowed: [endpoint], [collection], [params]",
            path=path,
        )
    endpoint = dict(data.get("endpoint", {}))
    coll = dict(data.get("collection", {}))
    params = dict(data.get("params", {}))
    secretish = [k for k in endpoint if k not in _ENDPOINT_KEYS and any(h in k.lower() for h in _SECRET_HINTS)]
    if secretish:
        # never echo the value: only the key's name
        raise BadInput(
            f"[endpoint] {secretish[0]}: the API key must not be written in the config; "
            "put it in an environment variable and name that variable with api_key_env",
            path=path,
        )
    for table, keys, allowed in (("endpoint", endpoint, _ENDPOINT_KEYS), ("collection", coll, _COLLECTION_KEYS)):
        unknown = set(keys) - allowed
        if unknown:
            raise BadInput(
                f"[{table}] unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(allowed))}",
                path=path,
            )
    for key in ("models", "k"):
        if key not in coll:
            raise BadInput(f"[collection] {key} is required", path=path)
    base_url = base_url or endpoint.get("base_url") or os.environ.get(BASE_URL_ENV)
    if not base_url:
        raise BadInput(f"[endpoint] base_url is required (or set the environment variable {BASE_URL_ENV}, "
                       "or pass --base-url)", path=path)
    mode = coll.get("mode", "online")
    if mode not in ("online", "batch"):
        raise BadInput(f"[collection] mode must be 'online' or 'batch', got {mode!r}", path=path)
    defaults = BatchSettings()
    try:
        return CollectConfig(
            base_url=base_url,
            api_key_env=endpoint.get("api_key_env", DEFAULT_KEY_ENV),
            models=tuple(coll["models"]) if isinstance(coll["models"], list) else coll["models"],
            k=coll["k"],
            concurrency=coll.get("concurrency", 8),
            seed=coll.get("seed", 0),
            timeout=coll.get("timeout", 600.0),
            connect_timeout=coll.get("connect_timeout", 10.0),
            retry=RetryPolicy(
                max_retries=coll.get("max_retries", 0),
                backoff_base=coll.get("backoff_base", 1.0),
                backoff_max=coll.get("backoff_max", 60.0),
                retry_after_max=coll.get("retry_after_max", 900.0),
                give_up_after=coll.get("give_up_after", 1800.0),
            ),
            params=MappingProxyType(params),
            seed_per_trial=coll.get("seed_per_trial", False),
            batch=BatchSettings(
                enabled=mode == "batch",
                max_lines=coll.get("batch_max_lines", defaults.max_lines),
                max_bytes=coll.get("batch_max_bytes", defaults.max_bytes),
                poll=coll.get("batch_poll", defaults.poll),
                window=coll.get("batch_window", defaults.window),
                deadline=coll.get("batch_deadline", defaults.deadline),
            ),
        )
    except UsageError as exc:
        raise BadInput(str(exc), path=path) from None


# -- items ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Item:
    """One benchmark question: what is sent (messages) and how it is scored."""

    id: str
    benchmark: str
    messages: tuple[Mapping[str, Any], ...]
    reference: Any
    scorer: str
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    prompt: str | None = None  # the item's prompt text when given as `prompt`

    @property
    def request_hash(self) -> str:
        """Short hash of what is sent for this item (its messages)."""
        return hashlib.sha256(_canonical([dict(m) for m in self.messages])).hexdigest()[:16]

    @property
    def prompt_text(self) -> str:
        """The text of the last user message (used to join verifier results by prompt)."""
        if self.prompt is not None:
            return self.prompt
        for m in reversed(self.messages):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                return m["content"]
        return ""


_ITEM_KEYS = {"id", "benchmark", "messages", "prompt", "reference", "scorer", "metadata"}


def _item_from(obj: Any, path: Path, line: int) -> Item:
    if not isinstance(obj, dict):
        raise BadInput("an item must be a JSON object", path=path, line=line)
    unknown = set(obj) - _ITEM_KEYS
    if unknown:
        raise BadInput(
            f"unknown item field(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(_ITEM_KEYS))}",
            path=path,
            line=line,
        )
    for key in ("id", "benchmark", "scorer"):
        if key not in obj:
            raise BadInput(f"item has no {key!r}", path=path, line=line)
    iid = obj["id"]
    if isinstance(iid, bool) or not isinstance(iid, (str, int)) or str(iid) == "":
        raise BadInput(f"item id must be a non-empty string or integer, got {iid!r}", path=path, line=line)
    if not isinstance(obj["benchmark"], str) or not obj["benchmark"]:
        raise BadInput("benchmark must be a non-empty string", path=path, line=line)
    try:
        VersionedName.parse(obj["scorer"]) if isinstance(obj["scorer"], str) else VersionedName.parse("")
    except ValueError:
        raise BadInput(f"scorer must be a versioned name like 'final-answer-line@1', got {obj['scorer']!r}",
                       path=path, line=line) from None
    has_m, has_p = "messages" in obj, "prompt" in obj
    if has_m == has_p:
        raise BadInput("an item needs exactly one of 'messages' or 'prompt'", path=path, line=line)
    prompt = None
    if has_p:
        if not isinstance(obj["prompt"], str) or not obj["prompt"]:
            raise BadInput("prompt must be a non-empty string", path=path, line=line)
        prompt = obj["prompt"]
        messages: tuple = (MappingProxyType({"role": "user", "content": prompt}),)
    else:
        msgs = obj["messages"]
        if not isinstance(msgs, list) or not msgs:
            raise BadInput("messages must be a non-empty list of chat messages", path=path, line=line)
        for j, m in enumerate(msgs):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str) or "content" not in m:
                raise BadInput(f"messages[{j}] must be an object with 'role' and 'content'", path=path, line=line)
        messages = tuple(MappingProxyType(dict(m)) for m in msgs)
    if "reference" not in obj and not obj["scorer"].startswith("ifbench"):
        raise BadInput("item has no 'reference'", path=path, line=line)
    meta = obj.get("metadata", {})
    if not isinstance(meta, dict):
        raise BadInput("metadata must be an object", path=path, line=line)
    return Item(
        id=str(iid),
        benchmark=obj["benchmark"],
        messages=messages,
        reference=obj.get("reference"),
        scorer=obj["scorer"],
        metadata=MappingProxyType(meta),
        prompt=prompt,
    )


def load_items(path: str | Path, *, check_scorers: bool = False) -> tuple[Item, ...]:
    """Read an items JSONL file; blank lines are allowed, duplicate ids are bad input.

    ``check_scorers``: an item whose scorer is not installed is bad input too (``collect`` checks it before
    sending anything; ``score`` may be given another scorer with ``--scorer``)."""
    path = Path(path)
    raw = read_input(path, what="items file")
    items: list[Item] = []
    seen: dict[str, int] = {}
    for lineno, obj in json_lines(raw, path=path):
        item = _item_from(obj, path, lineno)
        if item.id in seen:
            raise BadInput(f"duplicate item id {item.id!r} (first on line {seen[item.id]})", path=path, line=lineno)
        seen[item.id] = lineno
        items.append(item)
    if not items:
        raise BadInput("no items", path=path)
    if check_scorers:
        _check_scorers(items, seen, path)
    return tuple(items)


def _check_scorers(items: Sequence[Item], lines: Mapping[str, int], path: Path) -> None:
    """Every item's scorer must be installed: before a collection pays for a request, not when it is scored."""
    from replicate.scoring.base import SCORERS

    for it in items:
        if it.scorer not in SCORERS:
            try:
                SCORERS.get(it.scorer)
            except UsageError as exc:
                raise BadInput(f"item {it.id!r}: {exc}; nothing was sent (install the scorer's plugin, or "
                               "fix the item)", path=path, line=lines[it.id]) from None
