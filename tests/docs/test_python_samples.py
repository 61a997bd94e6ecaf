"""The Python samples of the documentation (```python blocks) run, in a workspace with the
examples, `jobs/` of specs and paddlegen importable."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.docs.pages import blocks

SAMPLES = list(blocks({"python"}))


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.where for s in SAMPLES])
def test_a_python_sample_runs(sample, tmp_path):
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    (tmp_path / "jobs").mkdir()
    for spec in (EXAMPLES / "gitops" / "jobs").glob("*.yaml"):
        shutil.copy(spec, tmp_path / "jobs")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", sample.body],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{sample.where}\n{result.stderr}"
