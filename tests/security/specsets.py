"""Two versions of a folder of specs whose job trees differ in content, files and layout."""

from __future__ import annotations

from pathlib import Path

WORKLOADS = ("job", "paddlejob", "kubeflow-paddlejob")


def spec_text(i: int, version: str) -> str:
    """Spec number ``i`` in version "a" or "b"; b changes every job, some change shape."""
    workload = WORKLOADS[i % len(WORKLOADS)]
    tag = "1.0" if version == "a" else "2.0"
    lines = [
        "apiVersion: paddlegen/v1",
        "kind: TrainingJob",
        f"metadata: {{name: job-{i:02d}}}",
        "spec:",
        f"  workload: {workload}",
        f"  image: registry.example.com/train:{tag}",
        "  resources: {requests: {cpu: '1', memory: 1Gi}, limits: {cpu: '1', memory: 1Gi}}",
    ]
    if workload != "job":
        lines.append(f"  worker: {{replicas: {2 if version == 'a' else 3}}}")
    if (i % 2 == 1) == (version == "b"):  # the PV and PVC files come and go
        lines += [
            "  volumes:",
            "    - {name: data, mountPath: /data, nfs: {server: 10.0.0.1, path: /data},"
            " capacity: 10Gi}",
        ]
    if i % 5 == 0 and version == "a":  # base/ + overlays/ in a, a flat tree in b
        lines += ["overlays:", "  prod: {spec: {image: registry.example.com/train:prod}}"]
    return "\n".join(lines) + "\n"


def write_spec_set(folder: Path, count: int, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"job-{i:02d}.yaml").write_text(spec_text(i, version), encoding="utf-8")
    return folder
