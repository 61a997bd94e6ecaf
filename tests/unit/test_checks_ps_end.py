"""Rule ps-end: parameter servers run until a trainer stops them, and Paddle 3's never do."""

from __future__ import annotations

import pytest

from tests.builders import findings


def spec(workload: str, image: str = "img:1", extra: str = "") -> str:
    return (
        f"spec:\n  workload: {workload}\n  image: {image}\n"
        "  resources: {limits: {memory: 1Gi}}\n  ps: {replicas: 1}\n  worker: {replicas: 2}\n"
        + extra
    )


def ps_end(body: str) -> list[str]:
    return [f for f in findings(body) if f.endswith("[ps-end]")]


def test_unbounded_parameter_servers_are_a_warning_where_a_deadline_can_bound_them():
    (found,) = ps_end(spec("kubeflow-paddlejob"))
    assert found == (
        "spec.yaml:8:3: warning: $.spec.ps: parameter servers run until a trainer stops them "
        "(fleet.stop_worker() at the end of the training program): a program that does not "
        "leaves the job running for ever (set run.activeDeadlineSeconds to bound the job) "
        "[ps-end]"
    )
    assert ps_end(spec("kubeflow-paddlejob", extra="  run: {activeDeadlineSeconds: 60}\n")) == []
    # a PaddleFlow PaddleJob has no deadline: nothing it could do
    assert ps_end(spec("paddlejob")) == []


@pytest.mark.parametrize("workload", ["paddlejob", "kubeflow-paddlejob"])
@pytest.mark.parametrize(
    ("image", "warned"),
    [
        ("paddlepaddle/paddle:3.3.1", True),
        ("registry.example.com/mirror/paddlepaddle/paddle:3.0.0-gpu-cuda12.6", True),
        ("paddlepaddle/paddle:2.6.1", False),
        ("example.com/paddlepaddle/paddle-ps:3.3.1", False),
    ],
)
def test_servers_on_a_paddle_3_image_are_a_warning(workload, image, warned):
    bounded = "  run: {activeDeadlineSeconds: 60}\n" if workload != "paddlejob" else ""
    found = ps_end(spec(workload, image, bounded))
    assert bool(found) == warned
    if warned:
        assert "Paddle 3's trainers do not stop the servers when they end" in found[0]
