"""Pytest fixtures shared by the fetch tests (registered in tests/conftest.py)."""

from __future__ import annotations

import pytest

from support.repos import Release, build_release
from support.server import FakeGitHub


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Release:
    """One release repository per test module (read-only for tests)."""
    return build_release(tmp_path_factory.mktemp("src"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("REPLICATE_CACHE_DIR", str(path))
    return path


@pytest.fixture
def github(release):
    gh = FakeGitHub(release.repo).start()
    yield gh
    gh.stop()


@pytest.fixture(scope="session")
def fresh_trials_study(tmp_path_factory):
    """A work directory holding ``fixtures`` (-> the repository's) and ``fresh/`` (archive and trials table):
    the worked trials study collected again from the simulated endpoint."""
    from support.trials_study import collect_fresh

    return collect_fresh(tmp_path_factory.mktemp("trials-study"))


@pytest.fixture
def example_copy(tmp_path):
    """A writable copy of the bundled example release (fixtures/example)."""
    import shutil

    from support.paths import ROOT

    shutil.copytree(ROOT / "fixtures" / "example", tmp_path / "example")
    return tmp_path / "example"
