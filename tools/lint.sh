#!/usr/bin/env bash
# Static checks: ruff (lint, rules in pyproject.toml) and mypy (types over
# replicate/ and parsers/replicate_parsers/, strictness in pyproject.toml).
# Exits non-zero on any finding. PYTHON picks the interpreter (default python3).
set -uo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
status=0
"$py" -m ruff check . || status=1
"$py" -m mypy || status=1
exit $status
