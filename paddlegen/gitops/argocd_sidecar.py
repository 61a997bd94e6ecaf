"""The Argo CD plugin sidecar: its plugin, its image and the patch that runs it, one
container per paddlegen version."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from paddlegen.errors import InvalidValueError
from paddlegen.gitops.argocd_files import (
    API_VERSION,
    ARGOCD_NAMESPACE,
    CMP_FILE,
    DOCKERFILE,
    SIDECAR_PATCH_FILE,
    Plan,
    header,
)
from paddlegen.gitops.plugin_client import CLIENT_VARIABLE, PYTHON_VARIABLE, SOCKET_VARIABLE
from paddlegen.output.layout import is_generated
from paddlegen.reading import read_bytes
from paddlegen.yamlio import dump_yaml

PLUGIN_NAME = "paddlegen"
# Each version's plugin is its own: Argo CD names a plugin with a spec.version
# `<metadata.name>-<spec.version>` and listens for it on a socket of that name
# (cmpserver/plugin/config.go:99-107 at v3.5.1), so sidecars of several versions run side by
# side and an Application renders with the version it names. Such a plugin has no discovery: an
# Application that names no plugin goes to the first socket by file name that matches
# (util/app/discovery/discovery.go:112-124), which would be any version's.
PLUGIN_VERSION_PREFIX = "v"
# The release 0.1.0's plugin had no version: its sidecar's container and plugin are
# "paddlegen-cmp" and "paddlegen", found by discovery too. (Until the next release, this tree
# is numbered 0.1.0 as well, and its plugin has a version.)
UNVERSIONED = "0.1.0"
_VERSION = re.compile(r"[0-9]+(\.[0-9A-Za-z]+)*([-+][0-9A-Za-z.-]+)?")
# The sidecar of argo-cd/docs/operator-manual/config-management-plugins.md:182-215 (v3.5.1):
# user 999, argocd-cmp-server as its command, the configuration baked into the image at
# CMP_CONFIG, the repo-server's volumes var-files (where its init container copies the argocd
# binary as argocd-cmp-server) and plugins (the sockets) shared, its own /tmp.
SIDECAR_NAME = "paddlegen-cmp"  # and -v<version> (dots as dashes): one container per version
VERSION_VARIABLE = "PADDLEGEN_SIDECAR_VERSION"  # each container's, so a rewrite can name it
SIDECAR_USER = 999
CMP_HOME = "/home/argocd"
CMP_CONFIG = f"{CMP_HOME}/cmp-server/config/plugin.yaml"
CMP_SERVER = "/var/run/argocd/argocd-cmp-server"
# The sidecar's command: paddlegen's warm renderer, which then becomes argocd-cmp-server.
SIDECAR_COMMAND = ["paddlegen", "serve", "--", CMP_SERVER]
RENDERER_SOCKET = "/tmp/paddlegen-renderer.sock"  # in the sidecar's own /tmp
REPO_SERVER = "argocd-repo-server"
# The upstream Deployment's volumes the sidecar mounts, by their names there and where
# (manifests/base/repo-server/argocd-repo-server-deployment.yaml:327-328, :349 and :385-388 at
# v3.5.1), and its own /tmp.
SHARED_VOLUMES = {"var-files": "/var/run/argocd", "plugins": f"{CMP_HOME}/cmp-server/plugins"}
# What --sidecar-image defaults to: a valid reference at a host that never resolves (.invalid,
# RFC 2606), so that a patch applied unchanged fails at once with the name in the pod's events
# (ErrImagePull), and the patch's header says what to give instead.
PLACEHOLDER_IMAGE = "registry.example.invalid/paddlegen-cmp:{version}"
ENV_VARIABLE = "PADDLEGEN_ENV"  # the Application's plugin.env; the CMP sees ARGOCD_ENV_<name>
# Only manifests on stdout: warnings and errors go to stderr, which Argo CD shows on failure.
# The sidecar's warm renderer (`paddlegen serve`, its command) renders when it runs: its
# client, started with neither site-packages nor paddlegen, costs little more than the
# interpreter; without the renderer (another command, or an older sidecar) a cold render.
_GENERATE = (
    "set -- render . --stdout "
    f'${{ARGOCD_ENV_{ENV_VARIABLE}:+--env "$ARGOCD_ENV_{ENV_VARIABLE}"}}; '
    f'[ -z "${{{CLIENT_VARIABLE}:-}}" ] || exec "${{{PYTHON_VARIABLE}}}" -I -S '
    f'"${{{CLIENT_VARIABLE}}}" "$@"; '
    'exec paddlegen "$@"'
)


def plugin_name(version: str | None = None) -> str:
    """The name an Application gives to render with the plugin of paddlegen ``version``
    (this one's by default)."""
    from paddlegen import __version__

    version = version or __version__
    if version == UNVERSIONED != __version__:
        return PLUGIN_NAME
    return f"{PLUGIN_NAME}-{PLUGIN_VERSION_PREFIX}{version}"


def cmp_plugin() -> Plan:
    """``sidecar/plugin.yaml``: the sidecar Config Management Plugin that renders specs in
    Argo CD, versioned as this paddlegen."""
    from paddlegen import __version__

    plugin = {
        "apiVersion": API_VERSION,
        "kind": "ConfigManagementPlugin",
        "metadata": {"name": PLUGIN_NAME},
        "spec": {
            "version": f"{PLUGIN_VERSION_PREFIX}{__version__}",
            "generate": {"command": ["sh", "-c", _GENERATE]},
        },
    }
    return {
        CMP_FILE: header(f"""\
Argo CD Config Management Plugin (sidecar, Argo CD >= 2.6): renders paddlegen specs in the
repo-server instead of committing rendered output. Not an object to kubectl apply: the sidecar
image bakes it in at {CMP_CONFIG} (the Dockerfile beside it), and
{SIDECAR_PATCH_FILE} adds that sidecar to {REPO_SERVER}. An Application renders
with it when it names it: source.plugin.name: {plugin_name()} (the version
keeps its rendering when a newer sidecar runs beside it). To deploy an overlay, set
source.plugin.env: [{{name: {ENV_VARIABLE}, value: <env>}}].""")
        + dump_yaml(plugin)
    }


def placeholder_image() -> str:
    """--sidecar-image's default: this version's image at a registry that is an example."""
    from paddlegen import __version__

    return PLACEHOLDER_IMAGE.format(version=__version__)


def sidecar_dockerfile() -> Plan:
    """``sidecar/Dockerfile``: the plugin sidecar's image, built from sidecar/ with paddlegen's
    wheel copied beside it (users build it in their CI; hack/localcluster/images.py builds the
    same image without Docker)."""
    from paddlegen import __version__

    user = SIDECAR_USER
    return {
        DOCKERFILE: header(f"""\
The image of paddlegen's Argo CD plugin sidecar, which
{SIDECAR_PATCH_FILE} adds to {REPO_SERVER}.
Build it from this folder with paddlegen's wheel beside it, e.g.
  cp dist/paddlegen-{__version__}-py3-none-any.whl sidecar/   (python -m build --wheel)
  docker build -t <registry>/paddlegen-cmp:{__version__} sidecar/
push it, and give that reference to `paddlegen argocd --sidecar-image`. The base is pinned by
its tag: pin it by digest too (FROM python:3.11-slim-bookworm@sha256:<digest>), the digest
your registry reports for that tag. No argocd-cmp-server in it: Argo CD's init container copies
it into the var-files volume, which the sidecar's command runs.""")
        + f"""FROM python:3.11-slim-bookworm
COPY paddlegen-*.whl /tmp/
RUN pip install --no-cache-dir /tmp/paddlegen-*.whl \\
    && rm /tmp/paddlegen-*.whl \\
    && groupadd --gid {user} argocd \\
    && useradd --uid {user} --gid {user} --home-dir {CMP_HOME} --create-home \\
       --shell /usr/sbin/nologin argocd
COPY plugin.yaml {CMP_CONFIG}
USER {user}:{user}
ENV HOME={CMP_HOME}
WORKDIR {CMP_HOME}
ENTRYPOINT {json.dumps(SIDECAR_COMMAND)}
"""
    }


def parse_kept_sidecars(texts: Iterable[str]) -> dict[str, str]:
    """``--keep-sidecar VERSION=IMAGE`` values: version -> image, each an older paddlegen's."""
    from paddlegen import __version__

    kept: dict[str, str] = {}
    for text in texts:
        version, _, image = text.partition("=")
        if not _VERSION.fullmatch(version) or not image.strip():
            raise InvalidValueError(
                f"{text!r} is not VERSION=IMAGE (a paddlegen version, and the image of its "
                "sidecar, e.g. 0.1.0=registry.example.com/platform/paddlegen-cmp:0.1.0)"
            )
        if version == __version__:
            raise InvalidValueError(
                f"{version} is this paddlegen's version: its sidecar's image is --sidecar-image"
            )
        if version in kept:
            raise InvalidValueError(f"version {version} is given twice")
        kept[version] = image.strip()
    return kept


def sidecar_container_name(version: str) -> str:
    """The container of ``version``'s sidecar in argocd-repo-server."""
    return f"{SIDECAR_NAME}-{PLUGIN_VERSION_PREFIX}{re.sub('[^a-z0-9]+', '-', version.lower())}"


def _sidecar(version: str, image: str, current: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """``version``'s sidecar container and its /tmp volume. An older version's runs its
    image's own entry point, which that version's Dockerfile chose."""
    name = sidecar_container_name(version)
    tmp = f"{name}-tmp"
    container: dict[str, Any] = {"name": name, "image": image}
    if current:
        container["command"] = SIDECAR_COMMAND
    container["env"] = [
        {"name": VERSION_VARIABLE, "value": version},
        {"name": SOCKET_VARIABLE, "value": RENDERER_SOCKET},
        # the compiled templates' cache (render/engine.py) on the writable volume
        {"name": "PADDLEGEN_CACHE_DIR", "value": f"/tmp/{SIDECAR_NAME}-cache"},
    ]
    # as the repo-server's own (the upstream Deployment's :301-309), and user 999
    container["securityContext"] = {
        "runAsNonRoot": True,
        "runAsUser": SIDECAR_USER,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    container["volumeMounts"] = [
        *({"name": name, "mountPath": path} for name, path in SHARED_VOLUMES.items()),
        # Not the repo-server's tmp: Argo CD's docs keep the two apart since v2.4 (a path
        # traversal in one cannot reach the other's checkouts)
        {"name": tmp, "mountPath": "/tmp"},
    ]
    return container, {"name": tmp, "emptyDir": {}}


def _image_note(image: str, kept: Mapping[str, str]) -> str:
    if image == placeholder_image():
        note = (
            f"Its image, {image}, is a placeholder:\n"
            f"build ../{DOCKERFILE}, push it and give its reference to\n"
            "`paddlegen argocd --sidecar-image`."
        )
    else:
        note = f"Its image, {image}, is one ../{DOCKERFILE} built (--sidecar-image)."
    for version, older in sorted(kept.items()):
        note += f"\nBeside it, paddlegen {version}'s sidecar ({older}, --keep-sidecar)."
    return note


def sidecar_patch(image: str, kept: Mapping[str, str] | None = None) -> Plan:
    """``patches/argocd-repo-server-sidecar.yaml``: a strategic merge patch of Argo CD's
    argocd-repo-server Deployment that adds this paddlegen's plugin sidecar, running
    ``image``, and those of the older versions ``kept`` (version -> image)."""
    from paddlegen import __version__

    sidecars = [_sidecar(__version__, image, current=True)]
    sidecars += [_sidecar(v, older, current=False) for v, older in sorted((kept or {}).items())]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": REPO_SERVER},
        "spec": {
            "template": {
                "spec": {
                    "containers": [container for container, _ in sidecars],
                    "volumes": [volume for _, volume in sidecars],
                }
            }
        },
    }
    return {
        SIDECAR_PATCH_FILE: header(f"""\
Adds paddlegen's plugin sidecar to Argo CD's {REPO_SERVER} Deployment: a strategic merge
patch (containers and volumes merge by name) for the kustomization that installs Argo CD
(namespace: {ARGOCD_NAMESPACE}, its install.yaml among the resources):
  patches:
  - path: <the path of this file>
{_image_note(image, kept or {})}""")
        + dump_yaml(deployment)
    }


def sidecars_of(text: str) -> dict[str, str]:
    """The sidecars a patch paddlegen wrote runs: version -> image (0.1.0's container named
    none)."""
    try:
        deployment = yaml.safe_load(text)
        containers = deployment["spec"]["template"]["spec"]["containers"]
        found = {}
        for container in containers:
            env = {e["name"]: e.get("value") for e in container.get("env") or []}
            version = env.get(VERSION_VARIABLE) or (
                UNVERSIONED if container["name"] == SIDECAR_NAME else None
            )
            if version:
                found[str(version)] = str(container["image"])
        return found
    except (yaml.YAMLError, KeyError, TypeError, AttributeError):
        return {}  # not the patch paddlegen writes: nothing to say about it


_PATCH_LIMIT = 1 << 20  # bytes of a patch read back; paddlegen's are a few kilobytes


def patch_text(patch: Path) -> str | None:
    """The sidecar patch paddlegen wrote there before, if any (a symlink, a FIFO or a file
    another tool wrote is not read)."""
    if not is_generated(patch):
        return None
    try:
        data = read_bytes(patch, _PATCH_LIMIT)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if len(data) <= _PATCH_LIMIT else None


def dropped_sidecars(before: str | None, files: Plan) -> list[str]:
    """A warning for each sidecar the patch as it was (``before``) ran and ``files`` run no
    more: Applications that name its plugin stop rendering."""
    if before is None:
        return []
    now = sidecars_of(files[SIDECAR_PATCH_FILE]) if SIDECAR_PATCH_FILE in files else {}
    return [
        f"warning: {SIDECAR_PATCH_FILE} no longer runs paddlegen {version}'s sidecar "
        f"({image}): an Application that names its plugin ({plugin_name(version)}) fails to "
        "render, and Argo CD syncs and prunes nothing of it, until it names "
        f"{plugin_name()}, which runs its job again if this paddlegen renders it otherwise; "
        f"to keep that sidecar: --keep-sidecar {version}={image}"
        for version, image in sorted(sidecars_of(before).items())
        if version not in now
    ]
