"""Admission webhooks of a controller that runs beside the API server, not in a pod: a serving
certificate of our own for 127.0.0.1, the upstream webhook configurations pointed at it by URL,
the waits until the controller serves them and the API server calls them, and the settings
their configuration files share (jobset.py, trainer.py, kueue.py)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .base import Cluster, ClusterError, tail

# A day: a throwaway cluster's certificate needs no renewal.
CERT_DAYS = 1


def manager_configuration(
    api_version: str, port: int, probe_port: int, cert_dir: Path | None, **own: Any
) -> dict[str, Any]:
    """A controller-runtime manager's configuration file, as JobSet, Trainer and Kueue read
    it: the webhook server on loopback (with the certificate in ``cert_dir``, if it reads one
    from there), the health probes on loopback, no metrics, no leader election; ``own``, the
    controller's own settings (its certificate management off, at least)."""
    webhook = {
        "port": port,
        "host": "127.0.0.1",
        **({"certDir": str(cert_dir)} if cert_dir else {}),
    }
    return {
        "apiVersion": api_version,
        "kind": "Configuration",
        "webhook": webhook,
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{probe_port}"},
        "leaderElection": {"leaderElect": False},
        **own,
    }


def serving_cert(folder: Path) -> str:
    """Write a self-signed certificate for IP 127.0.0.1 and its key to ``folder`` (tls.crt,
    tls.key: what controller-runtime's webhook server reads from its CertDir) and return it
    base64-encoded, as a webhook configuration's caBundle: the API server trusts it as its own
    CA (`openssl req -x509` marks it CA:TRUE) and checks the IP SAN against the URL's host."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ClusterError("`openssl` is not on PATH: it makes the webhooks' certificate")
    folder.mkdir(parents=True, exist_ok=True)
    crt, key = folder / "tls.crt", folder / "tls.key"
    done = subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", str(CERT_DAYS), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(crt),
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ClusterError(f"openssl req: exit {done.returncode}\n{done.stderr[-2000:]}")
    return base64.b64encode(crt.read_bytes()).decode()


def by_url(
    kind: str, name: str, webhooks: list[dict[str, Any]], port: int, ca_bundle: str
) -> dict[str, Any]:
    """A webhook configuration of ``kind`` named ``name`` whose ``webhooks`` (an upstream
    release's, each with ``path`` in place of its clientConfig) the API server calls at
    https://127.0.0.1:``port``<path>, trusting ``ca_bundle``."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [
            {
                **{key: value for key, value in hook.items() if key != "path"},
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "clientConfig": {
                    "url": f"https://127.0.0.1:{port}{hook['path']}",
                    "caBundle": ca_bundle,
                },
            }
            for hook in webhooks
        ],
    }


def wait_ready(
    cluster: Cluster, name: str, probe_port: int, processes: Mapping[str, Path], timeout: float
) -> None:
    """Wait until the controller ``name`` says it is ready on its health port: controller-runtime
    answers /readyz only once its webhook server listens (both upstreams' main.go, the readyz
    check)."""
    deadline = time.monotonic() + timeout
    url = f"http://127.0.0.1:{probe_port}/readyz"
    while time.monotonic() < deadline:
        cluster.check_alive(processes)
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:  # noqa: S310 - our loopback
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise ClusterError(
        f"{name} was not ready in {timeout:.0f} s:\n" + tail(Path(cluster.state) / f"{name}.log")
    )


def wait_called(
    cluster: Cluster,
    name: str,
    probe: dict[str, Any],
    called: Callable[[subprocess.CompletedProcess[str]], bool],
    timeout: float,
) -> None:
    """Wait until the API server calls the webhooks of ``name``: a server-side dry run of
    ``probe`` until ``called`` says its answer came from them (a new configuration takes
    effect once the API server's informer has it, a moment after it is written)."""
    deadline = time.monotonic() + timeout
    argv = [cluster.kubectl, "create", "--dry-run=server", "-o", "json", "-f", "-"]
    done = None
    while time.monotonic() < deadline:
        done = subprocess.run(
            argv, input=json.dumps(probe), env=cluster.env(), capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        if called(done):
            return
        time.sleep(0.2)
    said = (done.stderr or done.stdout)[-2000:] if done else ""
    raise ClusterError(f"the API server did not call {name}'s webhooks in {timeout:.0f} s: {said}")


def configurations(
    names: Mapping[str, str],
    mutating: list[dict[str, Any]],
    validating: list[dict[str, Any]],
    port: int,
    ca_bundle: str,
) -> list[dict[str, Any]]:
    """A controller's mutating and validating configurations, named ``names`` (kind -> name),
    pointed at https://127.0.0.1:``port`` (see by_url)."""
    return [
        by_url(kind, names[kind], hooks, port, ca_bundle)
        for kind, hooks in (
            ("MutatingWebhookConfiguration", mutating),
            ("ValidatingWebhookConfiguration", validating),
        )
    ]


def delete(state: Path, configurations: list[tuple[str, str]]) -> None:
    """Remove ``configurations`` (kind, name) from the cluster recorded in ``state``, if its API
    server still answers: with their controller stopped, their failurePolicy Fail would refuse
    every object they match (`up` stops a component whose start failed, and the cluster goes
    on)."""
    try:
        cluster = Cluster(**json.loads((state / "cluster.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return
    subprocess.run(
        [cluster.kubectl, "delete", "--ignore-not-found", "--request-timeout=5s",
         *(f"{kind.lower()}/{name}" for kind, name in configurations)],
        env=cluster.env(), capture_output=True, check=False,
    )  # fmt: skip
