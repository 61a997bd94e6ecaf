"""kubeconform as a subprocess and the in-process fallback: same verdicts, offline, one process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from paddlegen.errors import ToolError
from paddlegen.validate import k8s_schemas as k8sschemas
from paddlegen.validate import kubeconform as kc
from paddlegen.validate.inprocess import validate_in_process
from paddlegen.validate.manifests import validate_manifests
from tests.helpers import executable

DATA = Path(__file__).resolve().parents[1] / "data" / "manifests"
VALID = sorted((DATA / "valid").glob("*.yaml"))
INVALID = sorted((DATA / "invalid").glob("*.yaml"))
# Typos no schema can see (no enum, nothing required): both paths must pass them, so the spec
# schema and checks have to catch them instead.
SCHEMA_BLIND = sorted((DATA / "schema-blind").glob("*.yaml"))
CORPUS = VALID + INVALID + SCHEMA_BLIND


def _name(path: Path) -> str:
    return path.relative_to(DATA).as_posix()


def _files(paths: list[Path]) -> list[tuple[str, str]]:
    return [(_name(p), p.read_text(encoding="utf-8")) for p in paths]


def _expected(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path} must say what it expects on its first line"
    return first.removeprefix("# expect: ")


def _by_file(diagnostics, rule: str = "kubeconform") -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for d in diagnostics:
        assert d.rule == rule and d.severity == "error"
        found.setdefault(d.file, set()).add(d.path)
    return found


@pytest.fixture(scope="module")
def binary() -> str:
    found = shutil.which("kubeconform")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubeconform must be on PATH when CI=true")
        pytest.skip("kubeconform is not installed")
    return found


@pytest.fixture(scope="module")
def verdicts(binary) -> dict[str, dict[str, set[str]]]:
    files = _files(CORPUS)
    return {
        "kubeconform": _by_file(kc.run_kubeconform(files, binary)),
        "in-process": _by_file(validate_in_process(files), "in-process"),
    }


@pytest.mark.parametrize("path", CORPUS, ids=_name)
def test_both_paths_pass_a_valid_manifest_and_name_an_invalid_ones_object_and_field(verdicts, path):
    expected = {_expected(path)} if path in INVALID else None
    found = verdicts["kubeconform"].get(_name(path))
    assert found == verdicts["in-process"].get(_name(path)) == expected


# Affinity has a schema file, but as a nested type, not an API kind: no path may use it.
@pytest.mark.parametrize("api_kind", ["example.com/v1 Widget", "v1 Affinity"])
def test_unknown_kind_is_a_tool_error_on_both_paths(binary, api_kind):
    api_version, kind = api_kind.split()
    files = [("x.yaml", f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n")]
    for validate in (lambda: kc.run_kubeconform(files, binary), lambda: validate_in_process(files)):
        with pytest.raises(ToolError, match=f"no schema for: {api_kind}; .*--schema-location"):
            validate()


# kubeconform's JSON report with no resource and ``valid`` of them valid
SUMMARY = '{"resources": [], "summary": {"valid": %d, "invalid": 0, "errors": 0, "skipped": 0}}'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'panic: runtime error' >&2; exit 2", "exit code 2: panic: runtime error"),
        ("kill -SEGV $$", "exit code -11"),
        ("echo 'this is not json'", "unreadable report"),
        (f"echo '{SUMMARY % 0}'", "reported no resources"),
        (f"echo '{SUMMARY % 1}'; exit 1", "failure but no finding"),
        ("exec sleep 30", "did not finish within 0.5 s"),
    ],
    ids=["crash", "signal", "garbage", "nothing-validated", "inconsistent", "timeout"],
)
def test_misbehaving_kubeconform_on_path_is_a_tool_error(tmp_path, monkeypatch, body, message):
    executable(tmp_path / "bin" / "kubeconform", body)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv(kc.ENV_VAR, raising=False)
    with pytest.raises(ToolError, match=message) as caught:
        validate_manifests(_files(VALID[:1]), timeout=0.5)
    assert caught.value.exit_code == 2


def test_binary_is_found_from_argument_then_environment_then_path(tmp_path, monkeypatch):
    fake = executable(tmp_path / "env" / "kubeconform-env", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv(kc.ENV_VAR, raising=False)
    assert kc.find_kubeconform() is None
    assert validate_manifests(_files(VALID[:1]))[1] == "in-process"
    monkeypatch.setenv(kc.ENV_VAR, str(fake))
    assert kc.find_kubeconform() == str(fake)
    with pytest.raises(ToolError, match="not found or not executable: /nonexistent"):
        kc.find_kubeconform("/nonexistent/kubeconform")


def test_one_kubeconform_process_for_100_manifests(binary, tmp_path):
    counter = tmp_path / "invocations"
    wrapper = executable(tmp_path / "kubeconform", f'echo run >> "{counter}"\nexec "{binary}" "$@"')
    job = (DATA / "valid" / "batch_v1_job.yaml").read_text(encoding="utf-8")
    files = [
        (f"jobs/{i:03d}.yaml", job.replace("name: demo", f"name: job-{i}")) for i in range(100)
    ]
    files[42] = ("jobs/042.yaml", files[42][1].replace("restartPolicy:", "restartPolcy:"))
    diagnostics, used = validate_manifests(files, kubeconform=wrapper)
    assert used == "kubeconform"
    assert counter.read_text().splitlines() == ["run"]
    assert [(d.file, d.path) for d in diagnostics] == [
        ("jobs/042.yaml", "Job/job-42 spec.template.spec.restartPolcy")
    ]


@pytest.fixture
def no_network(monkeypatch):
    """Fails any outgoing connection from this process and records the attempt."""
    attempts = []

    def refuse(_sock, address, *_args):
        attempts.append(address)
        raise OSError("network is forbidden in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


def test_in_process_validation_opens_no_connection(no_network):
    k8sschemas.registry.cache_clear()  # load the definitions again under the guard
    found = _by_file(validate_in_process(_files(CORPUS)), "in-process")
    assert no_network == []
    assert set(found) == {_name(p) for p in INVALID}


def _network_namespace_prefix() -> list[str]:
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode == 0:
                return prefix
        except OSError:
            break
    pytest.skip("cannot create a network namespace here (unshare -n / -rn)")


def test_kubeconform_uses_only_local_schemas_and_works_without_a_network(
    binary, verdicts, tmp_path, no_network
):
    """Proves kubeconform *needed* no network: in a namespace with no interfaces any download
    would fail and show up as a missing schema, yet the verdicts are unchanged. The argv check
    shows that every schema location it was given is a local path."""
    argv = kc.kubeconform_argv(binary, tmp_path / "k8s", "1.37.0", tmp_path)
    locations = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-schema-location"]
    assert len(locations) == 2
    assert all(Path(loc).is_absolute() and "://" not in loc for loc in locations)
    prefix = " ".join(_network_namespace_prefix())
    isolated = executable(tmp_path / "kubeconform", f'exec {prefix} "{binary}" "$@"')
    found = _by_file(kc.run_kubeconform(_files(CORPUS), str(isolated)))
    assert found == verdicts["kubeconform"]
    assert no_network == []


def test_kubernetes_schemas_export_with_sibling_refs(tmp_path):
    out = k8sschemas.export(tmp_path, "1.37")
    job = (out / "job-batch-v1.json").read_text(encoding="utf-8")
    assert '"$ref": "_definitions.json#/$defs/io.k8s.api.batch.v1.JobSpec"' in job
    for path in (out / "job-batch-v1.json", out / "_definitions.json"):
        text = path.read_text(encoding="utf-8")
        assert "/api/_definitions.json" not in text and '"$id"' not in text
    assert '"$ref": "#/$defs/' in (out / "_definitions.json").read_text(encoding="utf-8")


def test_kubernetes_version_is_normalised_or_refused():
    assert k8sschemas.resolve_version("v1.30.4") == "1.30.0"
    assert k8sschemas.resolve_version(k8sschemas.DEFAULT_KUBERNETES_VERSION) == "1.37.0"
    assert k8sschemas.DEFAULT_KUBERNETES_VERSION in k8sschemas.available_versions()
    with pytest.raises(ToolError, match="no Kubernetes schemas for version '1.99'"):
        k8sschemas.resolve_version("1.99")
