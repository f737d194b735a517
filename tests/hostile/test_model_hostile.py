"""The model seam under abuse: many threads loading litellm at once."""

from __future__ import annotations

import subprocess
import sys

import pytest

RACE = """\
import threading
import time
from squad.model.litellm_load import load_litellm

barrier = threading.Barrier(8)
failures = []

def first_call(i):
    barrier.wait()
    time.sleep(i * 0.2)  # staggered: later threads arrive while the import is under way
    try:
        module = load_litellm()
        module.completion, module.get_model_info, module.completion_cost
    except Exception as exc:
        failures.append(repr(exc))

threads = [threading.Thread(target=first_call, args=(i,)) for i in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(failures or "ok")
"""


@pytest.mark.slow
def test_threads_that_load_litellm_together_all_get_the_finished_module() -> None:
    # After a restart the daemon's first runs call their models at once: a thread that got
    # a half-initialised litellm failed with "partially initialized module 'litellm' has
    # no attribute 'completion'".
    result = subprocess.run(
        [sys.executable, "-c", RACE], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
