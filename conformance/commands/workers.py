"""Worker processes for the scoring commands' ``-j N`` (mutation-score, hazard-score).

:func:`run_workers` starts one ``tcgen05-cts`` process per shard (``argv_for(shard, out)`` gives
its arguments; it writes its result as JSON to ``out``), waits for all, and returns their JSON
results in shard order, or the exit code of the first one that failed (its log tail on stderr).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable


def run_workers(command: str, jobs: int, argv_for: Callable[[str, Path], list[str]]) -> list[dict] | int:
    with tempfile.TemporaryDirectory(prefix=f"tcgen05-cts-{command}-") as tmp:
        outs = [Path(tmp) / f"shard{i}.json" for i in range(1, jobs + 1)]
        logs = [open(Path(tmp) / f"shard{i}.log", "w+") for i in range(1, jobs + 1)]
        try:
            procs = [subprocess.Popen(argv_for(f"{i}/{jobs}", out), stdout=log, stderr=subprocess.STDOUT)
                     for i, (out, log) in enumerate(zip(outs, logs, strict=True), start=1)]
            codes = [p.wait() for p in procs]
            results = []
            for i, (code, out, log) in enumerate(zip(codes, outs, logs, strict=True), start=1):
                if code != 0 or not out.exists():
                    log.seek(0)
                    print(f"{command} worker {i}/{jobs} exited with {code}:\n{log.read()[-2000:]}", file=sys.stderr)
                    return code or 1
                results.append(json.loads(out.read_text()))
            return results
        finally:
            for log in logs:
                log.close()
