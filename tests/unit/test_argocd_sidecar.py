"""paddlegen argocd's plugin sidecar: the Dockerfile users build and the patch that adds the
sidecar to argocd-repo-server, fact by fact (tests/e2e/test_argocd_sidecar_patch.py applies
the patch with the real kustomize)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from paddlegen import __version__
from paddlegen.authoring.dockerfile import parse_dockerfile
from paddlegen.cli import cli
from paddlegen.gitops import argocd_files as argo_files
from paddlegen.gitops import argocd_sidecar as argo
from paddlegen.output.layout import HEADER
from tests.conftest import ROOT

UPSTREAM = ROOT / "tests" / "data" / "argocd" / "argocd-repo-server-deployment.yaml"
REPO = "https://git.example.com/ml/jobs.git"


def dockerfile() -> str:
    return argo.sidecar_dockerfile()[argo_files.DOCKERFILE]


def instructions() -> dict[str, list[object]]:
    found: dict[str, list[object]] = {}
    for instruction in parse_dockerfile(dockerfile()):
        found.setdefault(instruction.keyword, []).append(instruction.args)
    return found


def test_the_dockerfile_is_a_slim_python_with_paddlegen_from_its_wheel():
    found = instructions()
    assert found["FROM"] == ["python:3.11-slim-bookworm"]
    assert [str(args).split() for args in found["COPY"]] == [
        ["paddlegen-*.whl", "/tmp/"],
        ["plugin.yaml", "/home/argocd/cmp-server/config/plugin.yaml"],
    ]
    (run,) = found["RUN"]
    commands = [shlex.split(part) for part in str(run).split("&&")]
    assert commands[0] == ["pip", "install", "--no-cache-dir", "/tmp/paddlegen-*.whl"]
    assert ["groupadd", "--gid", "999", "argocd"] in commands
    useradd = next(c for c in commands if c[0] == "useradd")
    assert useradd[useradd.index("--uid") + 1] == "999"
    assert useradd[useradd.index("--home-dir") + 1] == "/home/argocd"


def test_the_dockerfile_runs_argocd_cmp_server_as_user_999():
    found = instructions()
    assert found["USER"] == ["999:999"]
    assert found["ENV"] == ["HOME=/home/argocd"]
    # the warm renderer, which becomes argocd-cmp-server (Argo CD's entry point for a sidecar)
    assert found["ENTRYPOINT"] == [
        ["paddlegen", "serve", "--", "/var/run/argocd/argocd-cmp-server"]
    ]
    # the one the patch's command names, and Argo CD's docs (config-management-plugins.md:184)
    assert found["ENTRYPOINT"][0] == sidecar()["command"]


def test_the_dockerfile_is_generated_and_passes_hadolint_where_it_is_installed(tmp_path):
    text = dockerfile()
    assert text.startswith(HEADER)  # `paddlegen argocd` may replace it
    hadolint = shutil.which("hadolint")
    if hadolint:  # else the parse above is the check: hadolint is no dependency
        (tmp_path / "Dockerfile").write_text(text)
        done = subprocess.run(
            [hadolint, str(tmp_path / "Dockerfile")], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr


def patch(image: str | None = None, kept: dict[str, str] | None = None) -> dict:
    text = argo.sidecar_patch(image or argo.placeholder_image(), kept)
    text = text[argo_files.SIDECAR_PATCH_FILE]
    return yaml.safe_load(text)


def sidecar(image: str | None = None) -> dict:
    (container,) = patch(image)["spec"]["template"]["spec"]["containers"]
    return container


def test_the_patch_adds_a_sidecar_as_argo_cd_documents_it():
    found = patch("ghcr.io/acme/paddlegen-cmp:1")
    assert (found["apiVersion"], found["kind"]) == ("apps/v1", "Deployment")
    assert found["metadata"] == {"name": "argocd-repo-server"}
    container = sidecar("ghcr.io/acme/paddlegen-cmp:1")
    assert container["image"] == "ghcr.io/acme/paddlegen-cmp:1"
    # paddlegen's warm renderer, then Argo CD's cmp server in its place (config-management-
    # plugins.md:184 names the server as a sidecar's command)
    assert container["command"] == ["paddlegen", "serve", "--", "/var/run/argocd/argocd-cmp-server"]
    # its socket in the sidecar's own /tmp, where the plugin's generate finds it
    assert {"name": "PADDLEGEN_RENDERER_SOCKET", "value": "/tmp/paddlegen-renderer.sock"} in (
        container["env"]
    )
    security = container["securityContext"]
    assert (security["runAsNonRoot"], security["runAsUser"]) == (True, 999)
    # a container per version, its name and the version it runs
    assert container["name"] == f"paddlegen-cmp-v{__version__.replace('.', '-')}"
    assert {"name": "PADDLEGEN_SIDECAR_VERSION", "value": __version__} in container["env"]
    tmp = f"{container['name']}-tmp"
    assert {m["mountPath"]: m["name"] for m in container["volumeMounts"]} == {
        "/var/run/argocd": "var-files",
        "/home/argocd/cmp-server/plugins": "plugins",
        "/tmp": tmp,
    }
    assert found["spec"]["template"]["spec"]["volumes"] == [{"name": tmp, "emptyDir": {}}]


def test_the_shared_volumes_are_the_upstream_deployments_and_the_tmp_is_not():
    upstream = yaml.safe_load(UPSTREAM.read_text())["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in upstream["volumes"]}
    assert {name: volumes[name] for name in argo.SHARED_VOLUMES} == {
        "var-files": {"name": "var-files", "emptyDir": {}},
        "plugins": {"name": "plugins", "emptyDir": {}},
    }
    (copyutil,) = upstream["initContainers"]  # copies argocd-cmp-server where it is run from
    assert copyutil["volumeMounts"] == [{"mountPath": "/var/run/argocd", "name": "var-files"}]
    assert "/var/run/argocd/argocd-cmp-server" in copyutil["args"][0]
    repo_server = {m["name"]: m["mountPath"] for m in upstream["containers"][0]["volumeMounts"]}
    assert repo_server["plugins"] == argo.SHARED_VOLUMES["plugins"]
    assert not any(name.startswith(argo.SIDECAR_NAME) for name in volumes)  # its /tmp is its own


def test_the_cache_of_compiled_templates_is_on_the_writable_tmp():
    container = sidecar()
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    (cache,) = [e["value"] for e in container["env"] if e["name"] == "PADDLEGEN_CACHE_DIR"]
    assert Path(cache).parent == Path("/tmp")


def test_the_placeholder_image_never_resolves_and_the_header_says_what_to_give():
    text = argo.sidecar_patch(argo.placeholder_image())[argo_files.SIDECAR_PATCH_FILE]
    assert sidecar()["image"].startswith("registry.example.invalid/paddlegen-cmp:")
    assert "is a placeholder" in text and "--sidecar-image" in text
    given = argo.sidecar_patch("ghcr.io/acme/paddlegen-cmp:1")[argo_files.SIDECAR_PATCH_FILE]
    assert "placeholder" not in given


def test_cli_writes_the_sidecar_files_with_the_image_given(runner, tmp_path):
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(tmp_path / "none"), "-o", str(out), "--repo-url", REPO]
    result = runner.invoke(cli, [*args, "--sidecar-image", "ghcr.io/acme/paddlegen-cmp:1"])
    assert result.exit_code == 0, result.output
    assert sorted(str(p.relative_to(out)) for p in (out / "sidecar").iterdir()) == [
        "sidecar/Dockerfile",
        "sidecar/plugin.yaml",
    ]
    written = yaml.safe_load((out / argo_files.SIDECAR_PATCH_FILE).read_text())
    (container,) = written["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "ghcr.io/acme/paddlegen-cmp:1"
    # the Dockerfile's COPY finds plugin.yaml beside it: sidecar/ is the build context
    assert (out / argo_files.DOCKERFILE).parent == (out / argo_files.CMP_FILE).parent


def test_the_sidecar_is_written_only_when_asked_and_its_removal_is_said(runner, tmp_path):
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(tmp_path / "none"), "-o", str(out), "--repo-url", REPO]
    asked = runner.invoke(cli, [*args, "--sidecar"])
    assert asked.exit_code == 0, asked.output
    for name in argo_files.SIDECAR_FILES:
        assert (out / name).is_file(), name
    (container,) = yaml.safe_load((out / argo_files.SIDECAR_PATCH_FILE).read_text())["spec"][
        "template"
    ]["spec"]["containers"]
    assert container["image"] == argo.placeholder_image()

    dropped = runner.invoke(cli, args)

    assert dropped.exit_code == 0, dropped.output
    assert not any((out / name).exists() for name in argo_files.SIDECAR_FILES)
    assert "removed the plugin sidecar's files" in dropped.stderr
    assert "written with --sidecar (or --sidecar-image IMAGE)" in dropped.stderr


def test_the_plugin_has_this_paddlegens_version_and_no_discovery():
    plugin = yaml.safe_load(argo.cmp_plugin()[argo_files.CMP_FILE])
    assert (plugin["metadata"]["name"], plugin["spec"]["version"]) == (
        "paddlegen",
        f"v{__version__}",
    )
    # Argo CD names it <name>-<version>, the name its Applications give (config-management-
    # plugins.md:291 at v3.5.1); without discovery, no Application renders with it unnamed.
    assert argo.plugin_name() == f"paddlegen-v{__version__}"
    assert argo.plugin_name("0.0.9") == "paddlegen-v0.0.9"
    assert sorted(plugin["spec"]) == ["generate", "version"]
    assert f"source.plugin.name: {argo.plugin_name()}" in argo.cmp_plugin()[argo_files.CMP_FILE]


def test_older_sidecars_kept_run_beside_this_one_on_their_own_entry_points():
    kept = {"0.0.9": "ghcr.io/acme/paddlegen-cmp:0.0.9", "0.0.10": "ghcr.io/acme/cmp:0.0.10"}
    found = patch("ghcr.io/acme/paddlegen-cmp:new", kept)["spec"]["template"]["spec"]
    names = [c["name"] for c in found["containers"]]
    assert names == [
        argo.sidecar_container_name(__version__),
        "paddlegen-cmp-v0-0-10",
        "paddlegen-cmp-v0-0-9",
    ]
    assert [v["name"] for v in found["volumes"]] == [f"{name}-tmp" for name in names]
    current, *older = found["containers"]
    assert current["command"] == argo.SIDECAR_COMMAND
    assert [("command" in c, c["image"]) for c in older] == [
        (False, kept["0.0.10"]),
        (False, kept["0.0.9"]),
    ]
    text = argo.sidecar_patch("ghcr.io/acme/paddlegen-cmp:new", kept)[argo_files.SIDECAR_PATCH_FILE]
    assert "paddlegen 0.0.9's sidecar (ghcr.io/acme/paddlegen-cmp:0.0.9, --keep-sidecar)" in text
    assert argo.sidecars_of(text) == {__version__: "ghcr.io/acme/paddlegen-cmp:new", **kept}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0.0.9", "is not VERSION=IMAGE"),
        ("=img", "is not VERSION=IMAGE"),
        ("v0.0.9=img", "is not VERSION=IMAGE"),
        ("0.0.9= ", "is not VERSION=IMAGE"),
        (f"{__version__}=img", "this paddlegen's version: its sidecar's image is --sidecar-image"),
    ],
)
def test_a_kept_sidecar_needs_an_older_version_and_an_image(runner, tmp_path, value, message):
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(tmp_path / "none"), "-o", str(out), "--repo-url", REPO]
    result = runner.invoke(cli, [*args, "--keep-sidecar", value])
    assert result.exit_code == 2
    assert "Invalid value for '--keep-sidecar'" in result.stderr and message in result.stderr
    twice = runner.invoke(cli, [*args, "--keep-sidecar", "0.0.9=a", "--keep-sidecar", "0.0.9=b"])
    assert "version 0.0.9 is given twice" in twice.stderr
    assert not out.exists()


def test_a_sidecar_the_patch_ran_and_runs_no_more_is_a_warning_with_the_flag_to_keep_it(
    runner, tmp_path
):
    out = tmp_path / "argocd"
    args = ["argocd", "--deploy", str(tmp_path / "none"), "-o", str(out), "--repo-url", REPO]
    kept = runner.invoke(
        cli, [*args, "--sidecar-image", "cmp:new", "--keep-sidecar", "0.0.9=cmp:old"]
    )
    assert kept.exit_code == 0, kept.output
    assert "warning" not in kept.stderr

    dropped = runner.invoke(cli, [*args, "--sidecar-image", "cmp:new"])

    assert dropped.exit_code == 0, dropped.output
    assert (
        f"paddlegen: warning: {argo_files.SIDECAR_PATCH_FILE} no longer runs paddlegen 0.0.9's "
        "sidecar (cmp:old): an Application that names its plugin (paddlegen-v0.0.9) fails to "
        "render, and Argo CD syncs and prunes nothing of it, until it names "
        f"{argo.plugin_name()}, which runs its job again if this paddlegen renders it otherwise; "
        "to keep that sidecar: --keep-sidecar 0.0.9=cmp:old\n"
    ) in dropped.stderr
    again = runner.invoke(cli, [*args, "--sidecar-image", "cmp:new"])
    assert "warning" not in again.stderr


def test_0_1_0s_sidecar_is_known_by_its_container_name_and_its_plugin_had_no_version(monkeypatch):
    legacy = {"spec": {"template": {"spec": {"containers": [
        {"name": "paddlegen-cmp", "image": "cmp:0.1.0"},
        {"name": "someone-elses", "image": "x"},
    ]}}}}  # fmt: skip
    assert argo.sidecars_of(yaml.safe_dump(legacy)) == {"0.1.0": "cmp:0.1.0"}
    assert argo.sidecars_of("not: [a, patch") == {}
    assert argo.sidecars_of("- a list") == {}
    monkeypatch.setattr("paddlegen.__version__", "0.2.0")  # as the next release runs
    assert (argo.plugin_name("0.1.0"), argo.plugin_name()) == ("paddlegen", "paddlegen-v0.2.0")
