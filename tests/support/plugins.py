"""Installing an example plugin package into a temporary --target directory (pip, else by hand)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path


def can_build_wheels() -> bool:
    if importlib.util.find_spec("wheel") is not None:
        return True
    import setuptools

    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)


def write_dist(target: Path, name: str, version: str, entry_points: dict[str, dict[str, str]]) -> None:
    """What an installer writes for a distribution: METADATA and entry_points.txt."""
    info = target / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, eps in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in eps.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def install_example(example: Path, target: Path, scratch: Path) -> str:
    """Install ``example`` into ``target``; returns "pip" or "by hand"."""
    src = scratch / "src"
    shutil.copytree(example, src)  # pip builds in place: keep the docs folder clean
    if can_build_wheels():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
             "--no-index", "--target", str(target), str(src)],
            check=True,
            capture_output=True,
        )
        return "pip"
    project = tomllib.loads((src / "pyproject.toml").read_text())
    for pkg in project["tool"]["setuptools"]["packages"]:
        shutil.copytree(src / pkg, target / pkg)
    meta = project["project"]
    write_dist(target, meta["name"], meta["version"], meta["entry-points"])
    return "by hand"
