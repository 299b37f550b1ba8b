"""Reading one chat-completions response body into a trial's outcome. Pure.

Servers differ in where they put what a trial needs:

- the answer: ``message.content``, a string, or a list of typed parts
  (``{"type": "text", "text": ...}``; Mistral and Anthropic-compatible
  gateways), of which the text parts are the answer;
- the reasoning: ``message.reasoning`` (vLLM >= 0.10, Ollama, OpenRouter),
  ``message.reasoning_content`` (llama.cpp, LiteLLM, DeepSeek, older vLLM), or
  ``thinking``/``reasoning`` parts of a content list; kept in the archive,
  never scored;
- provenance: the response's ``model`` (the snapshot that answered, e.g.
  ``gpt-4o-2024-08-06`` for a request naming ``gpt-4o``), ``system_fingerprint``,
  ``id`` and ``created``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

_TEXT_PARTS = {"text", "output_text"}
_REASONING_PARTS = {"thinking", "reasoning", "reasoning_text", "reasoning_content"}
_REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One finished trial: a response or a request-specific API error."""

    text: str | None
    finish_reason: str | None
    refusal: str | None
    usage: Mapping[str, int | None]
    latency_s: float
    attempts: int
    retries: Mapping[str, int]
    error_kind: str | None = None
    error_message: str | None = None
    request_fault: bool = False  # the error is a 4xx the server gave this request (not a retry cap)
    reasoning: str | None = None
    #: the response's model (snapshot), system_fingerprint, id and created, as the server sent them
    provenance: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _part_text(value: Any) -> str | None:
    """The text of a part's payload: a string, or a list of ``{"text": ...}`` parts (Mistral's thinking)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [str(p["text"]) for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def read_message(message: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(answer text, reasoning text) of a chat message; ``None`` where there is none."""
    content = message.get("content")
    reasoning_parts: list[str] = []
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
                continue
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind in _REASONING_PARTS:
                t = _part_text(part.get(kind) if kind in part else part.get("text"))
                if t:
                    reasoning_parts.append(t)
        text: str | None = "".join(texts) if texts else None
    else:
        text = content if isinstance(content, str) else None
    for name in _REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            reasoning_parts.insert(0, value)
            break
    return text, ("\n".join(reasoning_parts) if reasoning_parts else None)


def usage_of(body: Mapping[str, Any]) -> dict[str, int | None]:
    u = body.get("usage") or {}
    if not isinstance(u, dict):
        u = {}
    details = u.get("completion_tokens_details") or {}
    return {
        "prompt_tokens": u.get("prompt_tokens"),
        "completion_tokens": u.get("completion_tokens"),
        "reasoning_tokens": details.get("reasoning_tokens") if isinstance(details, dict) else None,
    }


def provenance_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The response's ``model``, ``system_fingerprint``, ``id`` and ``created`` (``None`` where absent)."""
    return {
        "response_model": body.get("model") if isinstance(body.get("model"), str) else None,
        "system_fingerprint": body.get("system_fingerprint") if isinstance(body.get("system_fingerprint"), str)
        else None,
        "response_id": body.get("id") if isinstance(body.get("id"), str) else None,
        "created": body.get("created") if isinstance(body.get("created"), int) else None,
    }


def outcome_of(body: Mapping[str, Any], *, latency_s: float, attempts: int,
               retries: Mapping[str, int]) -> Outcome:
    """The outcome of a 200 response body whose ``choices[0].message`` exists."""
    choice = body["choices"][0]
    msg = choice.get("message") or {}
    text, reasoning = read_message(msg)
    refusal = msg.get("refusal")
    return Outcome(
        text=text,
        finish_reason=choice.get("finish_reason"),
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        usage=usage_of(body),
        latency_s=latency_s,
        attempts=attempts,
        retries=dict(retries),
        reasoning=reasoning,
        provenance=MappingProxyType(provenance_of(body)),
    )
