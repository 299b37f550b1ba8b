"""Two fetches of one source on one cache run one after the other, never at the same time."""

from __future__ import annotations

import contextlib
import os
import re
import threading

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.fetch import fetch, parse_source
from replicate.fetch.cache import Cache
from replicate.fetch.lock import CacheLocked, source_lock


def _lock_of(release, cache_dir):
    return Cache(cache_dir).lock_path(parse_source(release.url).cache_key)


def test_a_held_lock_times_out_with_a_clear_error(release, tmp_path):
    c = tmp_path / "c"
    path = _lock_of(release, c)
    with source_lock(path, what="test"):
        with pytest.raises(CacheLocked, match=(
                rf"^another fetch of {re.escape(release.path.resolve().as_uri())} \(process {os.getpid()}\) "
                rf"has held the cache lock {re.escape(str(path))} for more than 0.2 s; wait for it to "
                r"finish, or use another cache with REPLICATE_CACHE_DIR$")):
            fetch(release.url, include=["README.md"], dest=tmp_path / "o", cache_dir=c, lock_timeout=0.2)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_a_waiting_fetch_says_so_and_goes_on_when_the_lock_is_released(release, tmp_path):
    c = tmp_path / "c"
    held = contextlib.ExitStack()
    held.enter_context(source_lock(_lock_of(release, c), what="test"))
    events = []

    def note(event, text):
        events.append((event, text))
        if event == "wait":
            held.close()  # the other fetch finishes: this one may go on

    r = fetch(release.url, include=["README.md"], dest=tmp_path / "o", cache_dir=c, progress=note)
    assert r.written == ("README.md",)
    waits = [t for e, t in events if e == "wait"]
    assert len(waits) == 1 and waits[0].startswith(f"another fetch of {release.path.resolve().as_uri()} "
                                                   f"is using the cache (process {os.getpid()}, lock ")


def test_other_sources_do_not_wait(release, tmp_path):
    c = tmp_path / "c"
    with source_lock(Cache(c).lock_path(parse_source("org/other").cache_key), what="test"):
        r = fetch(release.url, include=["README.md"], dest=tmp_path / "o", cache_dir=c, lock_timeout=0)
    assert r.written == ("README.md",)


def test_concurrent_first_fetches_on_one_cache_all_succeed(release, tmp_path):
    # Without the lock the later first clones fail renaming onto the cached store.
    c = tmp_path / "c"
    results, errors = {}, []

    def run(i):
        try:
            results[i] = fetch(release.url, include=["results/dl19/**"], dest=tmp_path / f"o{i}", cache_dir=c)
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert {r.manifest.files for r in results.values()} == {results[0].manifest.files}


def test_cli_shows_the_wait_without_a_terminal(release, tmp_path, monkeypatch):
    import replicate.cli.fetch_cmds as cmds

    c = tmp_path / "c"
    monkeypatch.setenv("REPLICATE_CACHE_DIR", str(c))
    held = contextlib.ExitStack()
    held.enter_context(source_lock(_lock_of(release, c), what="test"))
    shown = cmds.warn

    def warn_then_release(text):
        shown(text)
        held.close()

    monkeypatch.setattr(cmds, "warn", warn_then_release)
    try:
        r = CliRunner().invoke(app, ["fetch", release.url, "-i", "README.md", "-d", str(tmp_path / "o")])
    finally:
        held.close()
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith(f"wait: another fetch of {release.path.resolve().as_uri()} is using the cache")
