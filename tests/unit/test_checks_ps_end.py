"""Rule ps-end: parameter servers run until a trainer stops them, and Paddle 3's never do."""

from __future__ import annotations

import pytest

from tests.builders import only


def spec(workload: str, image: str = "img:1", extra: str = "") -> str:
    return (
        f"spec:\n  workload: {workload}\n  image: {image}\n"
        "  resources: {limits: {memory: 1Gi}}\n  ps: {replicas: 1}\n  worker: {replicas: 2}\n"
        + extra
    )


def test_unbounded_parameter_servers_are_a_warning_where_a_deadline_can_bound_them():
    (found,) = only(spec("kubeflow-paddlejob"), "ps-end")
    assert found == (
        "spec.yaml:8:3: warning: $.spec.ps: parameter servers run until a trainer stops them "
        "(fleet.stop_worker() at the end of the training program): a program that does not "
        "leaves the job running for ever (set run.activeDeadlineSeconds to bound the job) "
        "[ps-end]"
    )
    bounded = spec("kubeflow-paddlejob", extra="  run: {activeDeadlineSeconds: 60}\n")
    assert only(bounded, "ps-end") == []
    # a PaddleFlow PaddleJob has no deadline: nothing it could do
    assert only(spec("paddlejob"), "ps-end") == []


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
    found = only(spec(workload, image, bounded), "ps-end")
    assert bool(found) == warned
    if warned:
        assert "Paddle 3's trainers do not stop the servers when they end" in found[0]
