"""The collector: per-model phases, a fixed number of requests in flight, crash-safe records.

The main thread owns the archive: workers only send requests and return
outcomes; the main thread writes every finished batch in one write + fsync and
only then counts it. A permanent fault stops new submissions, aborts requests
waiting to retry, writes what finished, and raises :class:`CollectionStopped`.

A 400 that names no parameter or model is taken for a request-specific error
(the trial's ``api_error``), unless the first :data:`SAME_ERROR_STOP` distinct
items of a phase all get the very same error: then it is the collection's
fault, not the items', and the run stops with nothing recorded for them (the
outcomes of a phase's first errors are held back until a success or a
different error settles the question).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TextIO

from replicate.collect.archive import ArchiveLock, ArchiveWriter, OpenedArchive, open_for_collection
from replicate.collect.client import Aborted, ChatClient, Outcome, PermanentFault
from replicate.collect.config import CollectConfig, Item
from replicate.collect.plan import pending
from replicate.errors import ReplicateError
from replicate.output import Format, table


@dataclass(frozen=True, slots=True)
class CollectSummary:
    """What one ``collect`` run did."""

    archive: str
    trials_recorded: int
    already_done: int
    requests_sent: int
    api_errors: int
    retries: dict[str, int]
    tokens: dict[str, dict[str, int]]  # model -> prompt/completion/reasoning totals
    wall_time_s: float
    torn_bytes_discarded: int
    resumed: bool
    stopped: str | None = None
    retried_errors: int = 0  # api_error trials asked again (--retry-errors)
    #: per model, over the whole archive after this run: trials, api_errors, api_error kinds
    models: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def mostly_errors(self) -> list[str]:
        """Models more than half of whose recorded trials are API errors."""
        return mostly_errors(self.models)

    def to_json(self) -> dict[str, Any]:
        return {
            "archive": self.archive,
            "trials_recorded": self.trials_recorded,
            "already_done": self.already_done,
            "requests_sent": self.requests_sent,
            "api_errors": self.api_errors,
            "retries": dict(sorted(self.retries.items())),
            "retries_total": sum(self.retries.values()),
            "tokens": self.tokens,
            "wall_time_s": round(self.wall_time_s, 3),
            "torn_bytes_discarded": self.torn_bytes_discarded,
            "resumed": self.resumed,
            "stopped": self.stopped,
            "retried_errors": self.retried_errors,
            "models": self.models,
            "mostly_api_errors": self.mostly_errors,
        }


class CollectionInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped the collection; ``summary`` says what was recorded (requests in flight were abandoned)."""

    def __init__(self, summary: CollectSummary) -> None:
        self.summary = summary
        super().__init__("collection interrupted")


class CollectionStopped(ReplicateError):
    """A permanent fault stopped the collection; ``summary`` says what was recorded."""

    exit_code = 2

    def __init__(self, message: str, summary: CollectSummary) -> None:
        self.summary = summary
        super().__init__(message)


def render_summary(s: CollectSummary, fmt: Format) -> str:
    retries = ", ".join(f"{k} {v}" for k, v in sorted(s.retries.items())) or "none"
    lines = [
        f"archive: {s.archive}" + (" (resumed)" if s.resumed else ""),
        f"trials recorded: {s.trials_recorded} (already in archive: {s.already_done}); "
        f"api errors: {s.api_errors}",
        f"requests sent: {s.requests_sent}; retries: {sum(s.retries.values())} ({retries})",
        f"wall time: {s.wall_time_s:.1f} s",
    ]
    if s.torn_bytes_discarded:
        lines.append(f"discarded a torn last line ({s.torn_bytes_discarded} bytes) left by an interrupted run")
    if s.retried_errors:
        lines.append(f"api errors asked again (--retry-errors): {s.retried_errors}")
    for m in s.mostly_errors:
        lines.append(mostly_errors_line(m, s.models[m]))
    rows = [[m, t["prompt_tokens"], t["completion_tokens"], t["reasoning_tokens"]] for m, t in s.tokens.items()]
    out = "\n".join(lines) + "\n"
    if rows:
        out += table(rows, ["model", "prompt tokens", "completion tokens", "reasoning tokens"], fmt)
    return out


# -- progress ------------------------------------------------------------------------


class Progress:
    """A bar on a terminal, a plain line every ``interval`` seconds otherwise."""

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None, interval: float = 10.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval = interval
        self._last = float("-inf")

    def start_phase(self, model: str, total: int, done: int) -> None:
        # -inf: the first update is shown at once, whatever the monotonic clock's origin
        self.model, self.total, self.t0, self._last = model, total, time.monotonic(), float("-inf")
        self.stream.write(f"phase {model}: {total} requests to send ({done} already in the archive)\n")
        self.stream.flush()

    def update(self, done: int, retries: int, errors: int, *, final: bool = False,
               last_error: str | None = None) -> None:
        now = time.monotonic()
        if not final and now - self._last < (0.2 if self.tty else self.interval):
            return
        self._last = now
        elapsed = max(now - self.t0, 1e-9)
        rate = done / elapsed
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        eta_s = "-" if eta == float("inf") else _clock(eta)
        stats = f"{done}/{self.total} {rate:.1f} req/s ETA {eta_s} retries {retries} errors {errors}"
        if last_error and retries:
            stats += f" (last retried: {last_error[:120]})"
        if self.tty:
            width = 24
            filled = int(width * done / self.total) if self.total else width
            self.stream.write(f"\r{self.model} [{'#' * filled}{'.' * (width - filled)}] {stats}\x1b[K")
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(f"{self.model}: {stats}\n")
        self.stream.flush()


def mostly_errors_line(model: str, d: Mapping[str, Any]) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(d["error_kinds"].items(), key=lambda kv: (-kv[1], kv[0])))
    return (f"model {model}: {d['api_errors']} of {d['trials']} recorded trials are api_error ({kinds}); "
            "fix the cause and rerun with --retry-errors to ask them again")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


# -- the collector -------------------------------------------------------------------


def _record(model: str, item: str, trial: int, params_hash: str, o: Outcome,
            seed: int | None = None) -> dict[str, Any]:
    rec = {
        "type": "trial",
        "model": model,
        "item": item,
        "trial": trial,
        "params_hash": params_hash,
        "text": o.text,
        "finish_reason": o.finish_reason,
        "refusal": o.refusal,
        "usage": dict(o.usage),
        "latency_s": o.latency_s,
        "attempts": o.attempts,
        "retries": dict(o.retries),
        "error_kind": o.error_kind,
        "error_message": o.error_message,
        "reasoning": o.reasoning,
        **o.provenance,
        "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
    }
    if seed is not None:
        rec["request_seed"] = seed  # seed_per_trial: the seed this trial was sent with
    return rec


@dataclass
class _Tally:
    recorded: int = 0
    sent: int = 0
    errors: int = 0
    retries: Counter = field(default_factory=Counter)
    tokens: dict = field(default_factory=dict)

    def add(self, model: str, o: Outcome) -> None:
        self.recorded += 1
        self.sent += o.attempts
        self.retries.update(o.retries)
        if o.error_kind is not None:
            self.errors += 1
        t = self.tokens.setdefault(model, {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0})
        for key in t:
            t[key] += o.usage.get(key) or 0


def collect(
    config: CollectConfig,
    items: Sequence[Item],
    archive: str | Path,
    *,
    progress: Progress | None = None,
    client_factory: Callable[[CollectConfig, threading.Event], ChatClient] | None = None,
    retry_errors: bool = False,
) -> CollectSummary:
    """Collect every missing (model, item, trial) of ``config`` into ``archive``.

    Holds the archive's lock for the whole run. Returns a summary; raises
    :class:`CollectionStopped` (carrying the summary) after a permanent fault.
    ``retry_errors``: also ask again the trials recorded as API errors (the new
    record supersedes the old one). The summary's :attr:`CollectSummary.mostly_errors`
    names models whose trials are mostly API errors (the command line exits 1).
    """
    if config.batch.enabled:
        from replicate.errors import UsageError

        raise UsageError("[collection] mode = \"batch\": run it with replicate.collect.batch.collect_batch "
                         "(the command line does)")
    archive = Path(archive)
    t_start = time.monotonic()
    by_id = {it.id: it for it in items}
    params = dict(config.params)
    stop = threading.Event()
    tally = _Tally()
    with ArchiveLock(archive):
        opened = open_for_collection(archive, config, items)
        if opened.torn_bytes and progress is not None:
            progress.stream.write(
                f"discarded a torn last line ({opened.torn_bytes} bytes) left by an interrupted run\n"
            )
        client = (client_factory or (lambda c, s: ChatClient.from_config(c, stop=s)))(config, stop)
        failure: PermanentFault | None = None
        done = settled(opened, retry_errors=retry_errors)
        state: dict[tuple[str, str, int], str | None] = {t: opened.errors.get(t) for t in opened.done}

        def summary() -> CollectSummary:
            return CollectSummary(
                archive=str(archive),
                trials_recorded=tally.recorded,
                already_done=len(done),
                requests_sent=tally.sent,
                api_errors=tally.errors,
                retries=dict(tally.retries),
                tokens=tally.tokens,
                wall_time_s=time.monotonic() - t_start,
                torn_bytes_discarded=opened.torn_bytes,
                resumed=opened.resumed,
                stopped=None if failure is None else str(failure),
                retried_errors=len(opened.done) - len(done),
                models=model_state(config.models, state),
            )

        pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="collect")
        run = _Run(config, by_id, params, client, pool, opened.writer, tally, stop, progress, state)
        try:
            for model in config.models:
                todo = pending(items, model, k=config.k, seed=config.seed, done=done)
                if progress is not None:
                    progress.start_phase(model, len(todo), len(items) * config.k - len(todo))
                failure = run.phase(model, todo)
                if failure is not None:
                    break
            pool.shutdown(wait=True)
        except KeyboardInterrupt:
            # Ctrl-C: do not wait for requests in flight (up to the timeout); every record written so far is
            # fsynced, so abandoning them is as safe as a kill -9. The worker threads may still be blocked in
            # a read: the command line exits the process without joining them.
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise CollectionInterrupted(summary()) from None
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            client.close()
            opened.writer.close()
    if failure is not None:
        s = summary()
        raise CollectionStopped(
            f"collection stopped: {failure} — nothing was recorded for that request; "
            f"{s.trials_recorded} trials recorded in this run; fix the cause and rerun the same command to resume",
            s,
        )
    return summary()


def settled(opened: OpenedArchive, *, retry_errors: bool) -> frozenset[tuple[str, str, int]]:
    """The triples a run does not ask again: every recorded one, or (``retry_errors``) those not recorded as an
    API error. What is asked again is recorded anew and supersedes the error (see the archive). Online and
    batch mode both use it."""
    return opened.done - frozenset(opened.errors) if retry_errors else opened.done


def mostly_errors(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Of per-model states (:func:`model_state`), the models more than half of whose recorded trials are API errors."""
    return [m for m, d in models.items() if d["trials"] and 2 * d["api_errors"] > d["trials"]]


def model_state(models: Sequence[str], state: Mapping[tuple[str, str, int], str | None]) -> dict[str, dict]:
    """Per model: trials recorded, how many are API errors, and of which kinds."""
    trials: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = {m: Counter() for m in models}
    for (m, _, _), kind in state.items():
        trials[m] += 1
        if kind is not None:
            kinds.setdefault(m, Counter())[kind] += 1
    return {m: {"trials": trials[m], "api_errors": sum(kinds.get(m, Counter()).values()),
                "error_kinds": dict(sorted(kinds.get(m, Counter()).items()))}
            for m in dict.fromkeys([*models, *trials])}


#: A phase whose first this many distinct items all get the same request-specific error stops the run.
SAME_ERROR_STOP = 3


@dataclass
class _Probation:
    """The first request-specific errors of a phase, held back until it is clear whose fault they are."""

    model: str
    limit: int = SAME_ERROR_STOP
    settled: bool = False
    held: list = field(default_factory=list)  # (outcome, record) in arrival order
    fatal: str | None = None  # the error that stopped the run: later copies of it are not recorded either

    def offer(self, outcome: Outcome, record: dict[str, Any]) -> tuple[list, PermanentFault | None]:
        """What may be written now, and the fault when the same error has hit ``limit`` distinct items."""
        if self.fatal is not None and outcome.error_message == self.fatal:
            return [], None
        if self.settled:
            return [(outcome, record)], None
        if not outcome.request_fault:
            return self.settle() + [(outcome, record)], None
        if self.held and outcome.error_message != self.held[0][0].error_message:
            return self.settle() + [(outcome, record)], None
        self.held.append((outcome, record))
        if len({r["item"] for _, r in self.held}) >= self.limit:
            self.settled, self.held, self.fatal = True, [], outcome.error_message
            return [], PermanentFault(
                "same_error",
                f"the first {self.limit} distinct items asked of {self.model} all got the same error, so it is "
                f"not about the items: {outcome.error_message}",
            )
        return [], None

    def settle(self) -> list:
        self.settled = True
        out, self.held = self.held, []
        return out


@dataclass(frozen=True, slots=True)
class _Run:
    """What every phase of one ``collect`` run shares."""

    config: CollectConfig
    by_id: Mapping[str, Item]
    params: Mapping[str, Any]
    client: ChatClient
    pool: ThreadPoolExecutor
    writer: ArchiveWriter
    tally: _Tally
    stop: threading.Event
    progress: Progress | None
    state: dict

    def phase(self, model: str, todo: Sequence[tuple[str, int]]) -> PermanentFault | None:
        """Send ``todo`` (item id, trial) for ``model``, at most ``2 * concurrency`` in flight, writing each
        finished batch before counting it; the first permanent fault (or unexpected error) is returned."""
        tally, stop, progress = self.tally, self.stop, self.progress
        queue = iter(todo)
        inflight: dict[Future, tuple[str, int]] = {}
        failure: PermanentFault | None = None
        done_in_phase = 0
        limit = self.config.concurrency * 2
        client = self.client
        retries0, errors0 = getattr(client, "retries_so_far", 0), tally.errors
        probation = _Probation(model)

        def show(final: bool = False) -> None:
            if progress is not None:  # retries as they happen, not only those of finished requests
                progress.update(done_in_phase, getattr(client, "retries_so_far", 0) - retries0,
                                tally.errors - errors0, final=final, last_error=getattr(client, "last_error", None))

        tick = None if progress is None else max(0.2, min(progress.interval, 5.0))

        def submit_more() -> None:
            while not stop.is_set() and len(inflight) < limit:
                nxt = next(queue, None)
                if nxt is None:
                    return
                item_id, trial = nxt
                fut = self.pool.submit(self.client.complete, model, self.by_id[item_id].messages,
                                       self.config.params_for(trial) if self.config.seed_per_trial else self.params)
                inflight[fut] = nxt

        submit_more()
        while inflight:
            finished, _ = wait(list(inflight), timeout=tick, return_when=FIRST_COMPLETED)
            if not finished:  # nothing finished yet (requests retrying): the progress line still moves
                show()
                continue
            records = []
            for fut in [f for f in inflight if f in finished]:  # in sending order, not set order
                item_id, trial = inflight.pop(fut)
                try:
                    outcome = fut.result()
                except Aborted:
                    continue
                except Exception as exc:  # PermanentFault, or a bug: stop cleanly, with a scrubbed one-line message
                    if failure is None:
                        failure = exc if isinstance(exc, PermanentFault) else PermanentFault(
                            "unexpected", self.client.scrub(f"unexpected {type(exc).__name__}: {exc}"))
                    stop.set()
                    continue
                seed = self.config.params_for(trial)["seed"] if self.config.seed_per_trial else None
                ready, fault = probation.offer(outcome, _record(model, item_id, trial, self.config.params_hash,
                                                                outcome, seed))
                records.extend(ready)
                if fault is not None and failure is None:
                    failure = fault
                    stop.set()
            self._write(model, records)
            done_in_phase += len(records)
            show()
            submit_more()
        if failure is None:  # a phase too small to tell: the errors are the items'
            held = probation.settle()
            self._write(model, held)
            done_in_phase += len(held)
        show(final=True)
        return failure

    def _write(self, model: str, records: list) -> None:
        if not records:
            return
        self.writer.append_many([r for _, r in records])  # flushed and fsynced
        for outcome, r in records:
            self.tally.add(model, outcome)
            self.state[(model, r["item"], r["trial"])] = outcome.error_kind
