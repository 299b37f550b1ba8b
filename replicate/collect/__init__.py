"""Fresh K-trial collections from an OpenAI-compatible chat-completions endpoint.

Layout (input/output kept apart from pure logic):

- :mod:`.config`    collection config (TOML) and items file (JSONL): loading and validation;
- :mod:`.plan`      pure, seeded request ordering and the dry-run plan;
- :mod:`.archive`   the append-only, crash-safe JSONL archive (lock, torn-line recovery, resume set);
- :mod:`.client`    the HTTP client with its retry/backoff policy;
- :mod:`.runner`    the thread-pool collector, progress and end summary;
- :mod:`.simserver` a simulated endpoint for demos, dry runs and tests.
"""

from replicate.collect.config import CollectConfig, Item, RetryPolicy, load_config, load_items

__all__ = ["CollectConfig", "Item", "RetryPolicy", "load_config", "load_items"]
