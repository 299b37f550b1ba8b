"""SOURCE on the command line -> a typed :class:`Source`.

Accepted forms:

- ``hf://datasets/ORG/NAME`` or ``https://huggingface.co/datasets/ORG/NAME`` — a dataset
  repository on the Hugging Face Hub;
- ``owner/repo`` — a GitHub repository (unless a local directory of that name exists);
- ``https://github.com/owner/repo[.git]`` — the same repository, spelled as a URL;
- any other ``https://`` git URL;
- ``file:///abs/path/to/repo`` — a git repository on this machine, through git's transport;
- a local path to a git repository (``.``, ``../study``, ``/data/study.git``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from replicate.errors import UsageError

_NAME = r"[A-Za-z0-9_.-]+"
_OWNER_REPO = re.compile(rf"^({_NAME})/({_NAME})$")
_GITHUB_URL = re.compile(rf"^https://(?:www\.)?github\.com/({_NAME})/({_NAME}?)(?:\.git)?/?$")
_HUB = re.compile(rf"^(?:hf://|https://huggingface\.co/)datasets/((?:{_NAME}/)?{_NAME})/?$")


@dataclass(frozen=True, slots=True)
class Source:
    """Where a release comes from.

    ``kind`` is ``github`` (owner/repo), ``hub`` (a Hugging Face Hub dataset),
    ``https`` (a git URL), ``file`` (a ``file://`` URL) or ``path`` (a local
    directory). ``git_url`` is what the git transport clones; ``github`` holds
    (owner, repo) when the GitHub API can serve it, ``hub`` the dataset's repo
    id (``ORG/NAME``). ``canonical`` is recorded in the manifest and keys the cache.
    """

    kind: str
    canonical: str
    git_url: str
    github: tuple[str, str] | None = None
    hub: str | None = None

    @property
    def name(self) -> str:
        """The repository's short name (default destination directory)."""
        tail = self.canonical.rstrip("/").rsplit("/", 1)[-1]
        return tail[:-4] if tail.endswith(".git") else tail or "release"

    @property
    def cache_key(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.canonical.split("://", 1)[-1]).strip("_")
        digest = hashlib.sha256(self.canonical.encode()).hexdigest()[:12]
        return f"{slug[-60:]}-{digest}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "canonical": self.canonical, "git_url": self.git_url}


def parse_source(text: str, *, cwd: Path | None = None) -> Source:
    """Read SOURCE; raises :class:`UsageError` listing the accepted forms when it fits none."""
    text = text.strip()
    base = cwd or Path.cwd()
    if not text:
        raise UsageError("SOURCE is empty; " + _FORMS)
    m = _HUB.match(text)
    if m:
        repo_id = m.group(1)
        return Source("hub", f"hf://datasets/{repo_id}", f"https://huggingface.co/datasets/{repo_id}", hub=repo_id)
    if text.startswith(("hf://", "https://huggingface.co/")):
        raise UsageError(f"SOURCE {text!r}: a Hugging Face Hub source is a dataset, hf://datasets/ORG/NAME "
                         "or https://huggingface.co/datasets/ORG/NAME (models and spaces are not fetched)")
    m = _GITHUB_URL.match(text)
    if m:
        owner, repo = m.group(1), m.group(2)
        return _github(owner, repo)
    if text.startswith("https://"):
        parts = urlsplit(text)
        if not parts.netloc or parts.path in ("", "/"):
            raise UsageError(f"SOURCE {text!r} has no repository path; " + _FORMS)
        if parts.username or parts.password:
            raise UsageError(
                "SOURCE must not carry credentials in the URL; set GITHUB_TOKEN or use a git "
                "credential helper instead"
            )
        return Source("https", text.rstrip("/"), text)
    if text.startswith("file://"):
        # Not checked here: git reports a missing repository, and --offline needs none.
        url = Path(unquote(urlsplit(text).path)).as_uri()
        return Source("file", url, url)
    if "://" in text or text.startswith("git@"):
        raise UsageError(f"SOURCE {text!r}: unsupported scheme; " + _FORMS)
    local = (base / text) if not Path(text).is_absolute() else Path(text)
    if local.exists():
        return _local(local, text)
    m = _OWNER_REPO.match(text)
    if m:
        return _github(m.group(1), m.group(2))
    raise UsageError(f"SOURCE {text!r} is neither an existing local path nor owner/repo; " + _FORMS)


_FORMS = (
    "use owner/repo (GitHub), hf://datasets/ORG/NAME (Hugging Face Hub), an https:// git URL, a file:// URL "
    "or a path to a local git repository"
)


def _github(owner: str, repo: str) -> Source:
    repo = repo[:-4] if repo.endswith(".git") else repo
    return Source("github", f"{owner}/{repo}", f"https://github.com/{owner}/{repo}.git", (owner, repo))


def _local(path: Path, text: str) -> Source:
    path = path.resolve()
    if not path.is_dir():
        raise UsageError(f"SOURCE {text!r}: {path} is not a directory holding a git repository")
    if not ((path / ".git").exists() or (path / "HEAD").is_file()):
        raise UsageError(f"SOURCE {text!r}: {path} is not a git repository (no .git, no HEAD)")
    # Local paths go through git's file:// transport so that partial clone and
    # the no-hooks rules apply exactly as for remote repositories.
    url = path.as_uri()
    return Source("path", url, url)
