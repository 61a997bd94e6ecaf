"""Small helpers shared by the render tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from paddlegen import api

HEADER = "apiVersion: paddlegen/v1\nkind: TrainingJob\n"


def render_plan(tmp_path: Path, body: str) -> dict[str, str]:
    """The planned files of a spec made of HEADER + ``body``."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(HEADER + body)
    (rendered,) = api.render_specs([spec])
    return rendered.plan


def objects_by_kind(plan: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Rendered objects by kind (for specs where every kind occurs once)."""
    found = [
        yaml.safe_load(text)
        for path, text in plan.items()
        if not path.endswith("kustomization.yaml")
    ]
    return {obj["kind"]: obj for obj in found}


def job_spec(name: str, image: str = "img:1", extra: str = "") -> str:
    """A minimal valid `job` spec (memory limit set, so no warning), plus ``extra`` spec lines."""
    return (
        f"{HEADER}metadata:\n  name: {name}\nspec:\n  workload: job\n  image: {image}\n"
        f"  resources: {{limits: {{memory: 1Gi}}}}\n{extra}"
    )
