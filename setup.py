"""Package discovery only; all metadata lives in pyproject.toml.

The folder ``parsers/`` (built-in parser and scorer plugins) is installed as
``replicate_parsers`` so that it cannot clash with another ``parsers`` package.
"""

from setuptools import find_packages, setup

_core = find_packages(include=["replicate", "replicate.*"])
_plugins = [
    "replicate_parsers" + name[len("parsers") :]
    for name in find_packages(include=["parsers", "parsers.*"])
]

setup(
    packages=_core + _plugins,
    package_dir={"replicate_parsers": "parsers"},
    package_data={"replicate": ["py.typed"]},
)
