"""What PaddleFlow's paddle-operator does to a PaddleJob's pods that a spec read back from one
must know: its init container, Gloo's port, the DNS policy of the host network."""

from __future__ import annotations

# The operator started with --initImage appends this init container to every pod, after the
# template's, to wait until the job's pods resolve (paddle-operator v0.3.5
# controllers/paddlejob_controller.go:207-212, paddlejob_helper.go:35 and 377-392).
COORDINATE_CONTAINER = "coord-paddle"
# Where the first parameter server serves Gloo's rendezvous: below the range the operator
# draws the job's port from (36000 + rand(20000), paddlejob_helper.go:227), so never on it.
GLOO_PORT = 35999


def host_network_dns(intranet: str | None) -> str | None:
    """The dnsPolicy paddlegen gives a PaddleJob's pods for ``intranet`` (``_host_network``)."""
    return "ClusterFirstWithHostNet" if intranet == "Host" else None
