"""Forked workers for a full build's per-entry work (reading and validating the files; each entry's snippets,
page and API file).

Input: a function of one item, the items, a number of processes. Output: the function's results in the order
of the items, exactly as one process would make them: the workers are forks of the build, so they read the
same graph and settings, and each result depends on its item alone. Under ``mkdocs serve`` nothing is forked:
the preview keeps its results in its own cache instead.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Callable, TypeVar

WORKERS_ENV = "KB_BUILD_WORKERS"  # processes for a full build's per-entry work; 0 or 1: none
PARALLEL_FROM = 400  # items: below this, starting processes costs more than it saves

T = TypeVar("T")
R = TypeVar("R")
_TASK: list[Callable] = []  # the function the forks run: set before the pool starts, inherited by fork


def workers_for(items: int, least: int = PARALLEL_FROM) -> int:
    """Processes for ``items`` pieces of work: KB_BUILD_WORKERS when set, else every CPU (at most 4) from ``least``
    items on (PARALLEL_FROM for per-entry work), where the system can fork; 0 for none."""
    wanted = os.environ.get(WORKERS_ENV, "")
    if wanted.isdigit():
        count = int(wanted)
    else:
        count = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 4)
        if items < least:
            count = 0
    return count if count > 1 and "fork" in multiprocessing.get_all_start_methods() else 0


def _run(chunk: list) -> list:
    return [_TASK[0](item) for item in chunk]


def fork_map(function: Callable[[T], R], items: list[T], workers: int) -> list[R]:
    """``[function(item) for item in items]``, computed by ``workers`` forked processes (a closure will do: it is
    inherited, never pickled); the items go out in chunks, eight per worker, so a slow chunk does not hold the rest."""
    size = max(1, len(items) // (workers * 8))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    _TASK.append(function)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return [result for chunk in pool.imap(_run, chunks) for result in chunk]
    finally:
        _TASK.clear()
