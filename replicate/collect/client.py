"""An OpenAI-compatible chat-completions client with the collection's retry policy.

One :class:`requests.Session` is shared by every worker thread; its
``HTTPAdapter`` keeps a connection pool the size of the concurrency. Proxy and
CA settings come from the environment like any requests client (``HTTPS_PROXY``,
``NO_PROXY``, ``REQUESTS_CA_BUNDLE``, ...); ``~/.netrc`` is never read. The API
key is read from the named environment variable at each request, placed in the
``Authorization`` header only, and scrubbed from every message this module
produces (a provider may echo a key in an error body).

Fault classes:

- transient (retried with backoff + jitter, honouring Retry-After): HTTP 408,
  409, 429, 5xx, timeouts, connection errors, a 200 whose body is not valid
  JSON or lacks a choice;
- permanent for the whole collection (:class:`PermanentFault`): 401, 403, 404,
  a 400/422 naming an unknown model (OpenAI ``model_not_found``, LiteLLM
  "Invalid model name passed in model=..."), a 400/422 naming a request
  parameter (OpenAI ``unsupported_parameter``/``unsupported_value``, an error
  whose ``param`` is one of ``[params]``, vLLM/pydantic "Extra inputs are not
  permitted"), a missing API key variable, other statuses;
- request-specific (recorded as the trial's ``api_error``): any other 4xx,
  e.g. a 400 "input too long"; also a transient fault that hit the retry cap.
  The runner stops the collection when the first few distinct requests of a
  phase all get the same such error (see :mod:`replicate.collect.runner`).
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import orjson
import requests
from requests.adapters import HTTPAdapter

from replicate.collect.config import CollectConfig, RetryPolicy
from replicate.collect.response import Outcome, outcome_of
from replicate.errors import ReplicateError
from replicate.retry import parse_retry_after
from replicate.secrets import remember, scrub

__all__ = ["Aborted", "ChatClient", "ErrorInfo", "Outcome", "PermanentFault", "classify_bad_request"]

_TRANSIENT_STATUS = {408, 409, 429}
_PERMANENT_STATUS = {401, 403, 404}
_MODEL_MISSING = re.compile(
    r"model.{0,80}(does not exist|not found|unknown|not exist)|unknown model|invalid model name", re.I | re.S)
_PARAM_CODES = {"unsupported_parameter", "unsupported_value", "unknown_parameter", "invalid_parameter"}
_PARAM_TEXT = re.compile(
    r"(?:unsupported|unrecognized|unknown|invalid) (?:request )?(?:parameter|argument|value)s?:?\s*['\"`]?(?P<p>[A-Za-z_][\w.]*)"
    r"|['\"`](?P<q>[A-Za-z_][\w.]*)['\"`]\s*(?:is not supported|is not a valid|is not permitted)"
    r"|(?P<extra>extra (?:inputs|fields) are not permitted|extra_forbidden)",
    re.I,
)
#: The parameter a provider may want instead: the two names of the output-token cap.
PARAM_ALTERNATIVES = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}
_MAX_MESSAGE = 500
_HEADER_SAFE_KEY = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what an Authorization header can carry as is


class PermanentFault(ReplicateError):
    """A fault no retry can mend for this collection (bad key, unknown model, ...)."""

    exit_code = 2

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


class Aborted(Exception):
    """The collection is stopping; this request was given up and records nothing."""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """An error response: its scrubbed one-line message, and the ``code`` and ``param`` it names."""

    message: str
    code: str | None = None
    param: str | None = None


def classify_bad_request(err: ErrorInfo, params: Mapping[str, Any]) -> "_Fault | None":
    """A permanent fault for a 400/422 that names the model or a request parameter, else ``None``.

    Such an error is the same for every request of the collection (the
    parameters are), so recording it trial after trial would only fill the
    archive with errors that look like data.
    """
    msg = err.message
    if err.code == "model_not_found" or _MODEL_MISSING.search(msg):
        return _Fault("permanent", "unknown_model", msg)
    param = err.param if err.param not in (None, "messages") else None
    m = _PARAM_TEXT.search(msg)
    if param is None and m is not None:
        param = m["p"] or m["q"]
    named = param is not None and (param in params or param == "model")
    if err.code in _PARAM_CODES or named or (m is not None and (m["p"] or m["q"] or m["extra"])):
        if param is None:  # "Extra inputs are not permitted": name the [params] keys the message mentions
            param = next((k for k in params if k in msg), None)
        return _Fault("permanent", "unsupported_parameter", unsupported_parameter_message(param, msg, params))
    return None


def unsupported_parameter_message(param: str | None, message: str, params: Mapping[str, Any]) -> str:
    """What to tell the user about a rejected parameter, naming the alternative where there is one."""
    head = f"the endpoint rejects the request parameter {param!r}" if param else \
        "the endpoint rejects a request parameter"
    hint = ""
    alt = PARAM_ALTERNATIVES.get(param or "")
    if alt is not None:
        hint = f"; this model wants {alt!r} instead of {param!r}: rename it in [params]"
    elif param and param in params:
        hint = f"; remove or change [params] {param}"
    return f"{head}: {message}{hint}"


@dataclass
class _Fault:
    kind: str  # "transient", "request", "permanent"
    label: str  # e.g. "http_429", "timeout"
    message: str
    retry_after: float | None = None


def environment_proxies(url: str) -> dict[str, str]:
    """The proxies the environment sets for ``url`` (empty when NO_PROXY exempts it)."""
    return dict(requests.utils.get_environ_proxies(url))


def environment_ca_bundle() -> str | bool:
    """REQUESTS_CA_BUNDLE, else CURL_CA_BUNDLE, else ``True`` (the default trust store)."""
    return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True


@dataclass
class ChatClient:
    """Sends one chat-completions request per trial, retrying transient faults."""

    base_url: str
    api_key_env: str
    pool_size: int = 8
    timeout: float = 600.0
    connect_timeout: float = 10.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    stop: threading.Event = field(default_factory=threading.Event)
    session: requests.Session = field(init=False, repr=False)

    @classmethod
    def from_config(cls, config: CollectConfig, *, stop: threading.Event | None = None) -> "ChatClient":
        return cls(
            config.base_url,
            config.api_key_env,
            pool_size=config.concurrency,
            timeout=config.timeout,
            connect_timeout=config.connect_timeout,
            retry=config.retry,
            stop=stop or threading.Event(),
        )

    def __post_init__(self) -> None:
        self.url = self.base_url.rstrip("/") + "/chat/completions"
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=self.pool_size, max_retries=0, pool_block=True)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        # Proxies and CA bundle come from the environment, as for every requests user (HTTPS_PROXY,
        # HTTP_PROXY, ALL_PROXY, NO_PROXY, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE); netrc credentials never do,
        # since trust_env would let a ~/.netrc entry replace the Authorization header.
        self.session.trust_env = False
        self.session.proxies = environment_proxies(self.url)
        self.session.verify = environment_ca_bundle()
        self._rng = random.Random()
        self._rng_lock = threading.Lock()
        #: shared by the workers (under ``_rng_lock``): retries so far, the last transient fault's message,
        #: and when a request last had an answer (see RetryPolicy.give_up_after)
        self.retries_so_far = 0
        self.last_error: str | None = None
        self._last_answer = time.monotonic()

    def close(self) -> None:
        self.session.close()

    # -- secrets -------------------------------------------------------------------
    def _key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if not key:
            raise PermanentFault(
                "no_api_key", f"the environment variable {self.api_key_env} (api_key_env) is not set or empty"
            )
        if not _HEADER_SAFE_KEY.fullmatch(key):
            # requests/http.client would raise with the header value in the message, or retry forever
            raise PermanentFault(
                "bad_api_key",
                f"the environment variable {self.api_key_env} (api_key_env) holds whitespace, control or "
                "non-ASCII characters, which an HTTP header cannot carry (a trailing newline from a key file?); "
                "the value is not shown",
            )
        remember(key)  # scrubbed from every message from now on, wherever in the URL it sits
        return key

    def scrub(self, text: str) -> str:
        """``text`` with the API key (as is or percent-encoded, wherever it sits) replaced by ``[API key]``, cut
        to 500 characters (:func:`replicate.secrets.scrub`)."""
        return scrub(text, os.environ.get(self.api_key_env))[:_MAX_MESSAGE]

    # -- one attempt ---------------------------------------------------------------
    def _attempt(self, body: bytes, model: str, params: Mapping[str, Any] = MappingProxyType({})
                 ) -> tuple[dict | None, _Fault | None, float]:
        headers = {"Authorization": f"Bearer {self._key()}", "Content-Type": "application/json"}
        t0 = time.perf_counter()
        try:
            resp = self.session.post(self.url, data=body, headers=headers, timeout=(self.connect_timeout, self.timeout))
            content = resp.content
        except requests.Timeout:
            return None, _Fault("transient", "timeout", f"no answer within {self.timeout:g} s"), time.perf_counter() - t0
        except requests.ConnectionError as exc:
            return None, _Fault("transient", "connection", self.scrub(f"connection error: {type(exc).__name__}")), time.perf_counter() - t0
        except requests.RequestException as exc:  # e.g. ChunkedEncodingError
            return None, _Fault("transient", "connection", self.scrub(f"{type(exc).__name__}")), time.perf_counter() - t0
        latency = time.perf_counter() - t0
        status = resp.status_code
        if status == 200:
            try:
                data = orjson.loads(content)
                choice = data["choices"][0]
                choice["message"]
            except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
                return None, _Fault("transient", "invalid_json", "the 200 response body is not a valid completion"), latency
            return data, None, latency
        err = self._error_info(content, status)
        message = err.message
        if status in _TRANSIENT_STATUS or 500 <= status < 600:
            ra = parse_retry_after(resp.headers.get("Retry-After"))
            return None, _Fault("transient", f"http_{status}", message, ra), latency
        if status in _PERMANENT_STATUS:
            return None, _Fault("permanent", f"http_{status}", message), latency
        if status in (400, 422):
            fault = classify_bad_request(err, params)
            if fault is not None:
                return None, fault, latency
        if 400 <= status < 500:
            return None, _Fault("request", f"http_{status}", message), latency
        return None, _Fault("permanent", f"http_{status}", message), latency

    def _error_info(self, content: bytes, status: int) -> "ErrorInfo":
        text, code, param = "", None, None
        try:
            data = orjson.loads(content)
            err = data.get("error") if isinstance(data, dict) else None
            if isinstance(err, dict):
                code = err.get("code")
                param = err.get("param")
                text = str(err.get("message", "")) + (f" [{code}]" if code else "")
            elif isinstance(err, str):
                text = err
            elif isinstance(data, dict) and "detail" in data:  # FastAPI/pydantic validation (vLLM, 422)
                text = str(data["detail"])
            elif isinstance(data, dict) and isinstance(data.get("message"), str):
                text = data["message"]
        except orjson.JSONDecodeError:
            text = content[:200].decode("utf-8", "replace")
        return ErrorInfo(
            self.scrub(f"HTTP {status}: {text}".strip()),
            str(code) if code is not None else None,
            str(param) if isinstance(param, str) and param else None,
        )

    # -- one trial -----------------------------------------------------------------
    def complete(self, model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> Outcome:
        """Run one trial to its end. Raises :class:`PermanentFault` or :class:`Aborted`."""
        body = orjson.dumps({"model": model, "messages": [dict(m) for m in messages], **params})
        retries: Counter[str] = Counter()
        attempts = 0
        while True:
            if self.stop.is_set():
                raise Aborted()
            attempts += 1
            data, fault, latency = self._attempt(body, model, params)
            if fault is None or fault.kind == "request":
                with self._rng_lock:
                    self._last_answer = time.monotonic()
            if fault is None:
                assert data is not None
                return outcome_of(data, latency_s=round(latency, 4), attempts=attempts, retries=retries)
            if fault.kind == "permanent":
                raise PermanentFault(fault.label, scrub(f"{fault.message} (model {model}, {self.url})"))
            if fault.kind == "request":
                return Outcome(None, None, None, {}, round(latency, 4), attempts, dict(retries),
                               fault.label, fault.message, request_fault=True)
            if self.retry.max_retries and sum(retries.values()) >= self.retry.max_retries:
                return Outcome(None, None, None, {}, round(latency, 4), attempts, dict(retries), fault.label,
                               f"gave up after {attempts} attempts (max_retries={self.retry.max_retries}); "
                               f"last: {fault.message}")
            retries[fault.label] += 1
            n = sum(retries.values())
            with self._rng_lock:
                jitter = self._rng.random()
                self.retries_so_far += 1
                self.last_error = fault.message
                silent = time.monotonic() - self._last_answer
            limit = self.retry.give_up_after
            if limit and silent > limit:
                raise PermanentFault(
                    "no_answer",
                    scrub(f"no request has had an answer for {silent:.0f} s (give_up_after = {limit:g}), "
                          f"only transient faults, the last: {fault.message} (model {model}, {self.url}); the "
                          "endpoint seems down: rerun the same command once it is up to resume"))
            if self.stop.wait(self.retry.delay(n, retry_after=fault.retry_after, jitter=jitter)):
                raise Aborted()
