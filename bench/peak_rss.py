"""Run a Python command line and write its own peak resident memory (VmHWM, KiB) to ``$PEAK_RSS_FILE`` at exit.

``python bench/peak_rss.py -m replicate ARGS`` runs as ``python -m replicate
ARGS`` and ``python bench/peak_rss.py SCRIPT ARGS`` as ``python SCRIPT ARGS``.

Why not ``ru_maxrss``: a child's ``ru_maxrss`` starts from its parent's figure
(the forked copy's peak is kept across ``exec``), so a benchmark whose own
process has grown cannot measure a smaller child with it. ``VmHWM`` is the
high-water mark of the process's address space since ``exec``. Linux only.

With ``$PEAK_RSS_CHILDREN_FILE`` set, the largest peak of the children it waited for (``ru_maxrss`` of
``RUSAGE_CHILDREN``, KiB: a child it forked starts from this process's own figure, which is right here)
is written there too: the command's forked workers and difficulty refits.
"""

from __future__ import annotations

import atexit
import os
import runpy
import sys


def _write() -> None:
    path = os.environ.get("PEAK_RSS_FILE")
    if not path:
        return
    with open("/proc/self/status", encoding="ascii") as fh:
        kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    with open(path, "w", encoding="ascii") as out:
        out.write(str(kib))
    children = os.environ.get("PEAK_RSS_CHILDREN_FILE")
    if children:
        import resource

        with open(children, "w", encoding="ascii") as out:
            out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))


atexit.register(_write)
args = sys.argv[1:]
if args[:1] == ["-m"]:
    sys.argv = [args[1], *args[2:]]
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
