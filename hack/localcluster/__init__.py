"""A local Kubernetes control plane on loopback, built from pinned sources (hack/local-cluster).

etcd, kube-apiserver, kube-controller-manager and kube-scheduler (and kubectl) are built once
from the Go modules in hack/tools into a cache keyed by version; `up` starts them with free
ports under a state folder, installs the upstream CRDs of hack/crds and waits until the API
server is ready; `down` stops exactly the processes `up` started. `--with` adds components,
one module each, listed in `components.COMPONENTS`. The pytest fixture of the `cluster` tests
(tests/cluster/conftest.py) runs the same code. Standard library only: it runs before any
package is installed, and in CI before the virtualenv exists.

Modules: `base` (errors, the tools cache, Go builds, processes, the recorded `Cluster`),
`controlplane`, one per component (`node`, `kwok`, `volcano`, `paddle_operator`,
`training_operator`, `jobset`, `trainer`, `argocd`), `webhooks` (a controller's admission
webhooks called by the API server on loopback), `images` (the node's), `components` (the
registry), `cluster` (build, up, down), `cli`.
"""

from .base import ClusterError
from .cluster import build, down, install, load, missing, unusable, up
from .controlplane import kubernetes_version

__all__ = [
    "ClusterError",
    "build",
    "down",
    "install",
    "kubernetes_version",
    "load",
    "missing",
    "unusable",
    "up",
]
