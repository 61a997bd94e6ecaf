"""Safe by default: restricted containers, no stray tokens, requests always set, no secrets."""

from __future__ import annotations

import pytest

from paddlegen.cli import cli
from paddlegen.errors import SpecError
from tests import builders
from tests.builders import DEMO, render_file, rendered_objects
from tests.helpers import pod_templates

# A job with a memory limit: no finding but the one a test is about.
LIMITED = "spec:\n  workload: job\n  image: img:1\n  resources: {limits: {memory: 1Gi}}\n"


def pods(body: str) -> list[dict]:
    """The pod specs DEMO + ``body`` renders."""
    return [t["spec"] for t in pod_templates(list(rendered_objects(DEMO + body).values()))]


def findings(body: str) -> list[str]:
    """Every finding on DEMO + ``body``, none left out."""
    return builders.findings(body, quiet=())


RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


@pytest.mark.parametrize(
    "body",
    [
        "spec: {workload: job, image: img:1}\n",
        "spec: {workload: paddlejob, image: img:1, ps: {replicas: 1}}\n",
        "spec: {workload: kubeflow-paddlejob, image: img:1, ps: {replicas: 1}}\n",
        "spec: {workload: collective-job, image: img:1, args: [t.py]}\n",
    ],
    ids=["job", "paddlejob", "kubeflow-paddlejob", "collective-job"],
)
def test_every_container_is_restricted_and_gets_no_token(body):
    found = pods(body)
    assert found
    for pod in found:
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            assert container["securityContext"] == RESTRICTED
            assert container["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}


def test_only_the_distributed_job_mounts_a_token():
    body = (
        "spec:\n  workload: distributed-job\n  image: img:1\n"
        "  volumes: [{name: d, mountPath: /d, hostPath: {path: /x}}]\n"
        "  distributed: {volume: d, trainConfigDir: c}\n"
        "  dataPrep: {image: data, volume: d}\n"
    )
    trainer, data = sorted(pods(body), key=lambda p: "serviceAccountName" in p)[::-1]
    assert trainer["automountServiceAccountToken"] is True
    assert trainer["serviceAccountName"] == "demo"
    assert data["automountServiceAccountToken"] is False


def test_security_settings_and_opt_out():
    (pod,) = pods(
        "spec:\n  workload: job\n  image: img:1\n"
        "  security: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001,"
        " fsGroup: 10001,"
        " readOnlyRootFilesystem: true}\n",
    )
    assert pod["securityContext"] == {"fsGroup": 10001}
    assert pod["containers"][0]["securityContext"] == {
        **RESTRICTED,
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "readOnlyRootFilesystem": True,
    }
    (pod,) = pods("spec: {workload: job, image: img:1, security: {restricted: false}}\n")
    assert "securityContext" not in pod["containers"][0]


def test_default_requests_never_exceed_a_given_limit():
    (pod,) = pods(LIMITED.replace("1Gi", "512Mi"))
    # Kubernetes copies a lone limit into the request; a default 1Gi request would be invalid.
    assert pod["containers"][0]["resources"] == {
        "requests": {"cpu": "500m"},
        "limits": {"memory": "512Mi"},
    }


def test_a_missing_memory_limit_is_a_warning():
    assert findings("spec: {workload: job, image: img:1}\n") == [
        "spec.yaml:4:1: warning: $.spec: no memory limit: a runaway trainer can take "
        "the node's memory (set resources.limits.memory) [limits-missing]"
    ]
    # roles are named where the workload has several
    several = "spec: {workload: paddlejob, image: img:1, ps: {replicas: 1}}\n"
    assert findings(several) == [
        "spec.yaml:4:1: warning: $.spec: no memory limit for ps, worker: a runaway trainer "
        "can take the node's memory (set resources.limits.memory) [limits-missing]"
    ]
    assert findings(LIMITED) == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DB_PASSWORD", "hunter2hunter2"),
        ("DB_PASSWORD", "hunter2"),
        ("DB_PASSWORD", "letmein"),  # people choose passwords: a plain word is one
        ("MYSQL_ROOT_PASSWORD", "123456"),  # and so is a number
        ("GITHUB_TOKEN", "abc123def456"),
        ("API_TOKEN", "ghp_" + "a" * 36),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("API_KEY", "sk-live-4eC39HqLyjWDarjtT1zdp7dc"),
        ("CLIENT_SECRET", "qwertyuiopasdfghjklzxcvbnm"),  # plain letters, but too long a word
        ("HF_TOKEN", "/aB3dE9fGhI2jK4lMnO5pQ7rS"),  # a key behind a slash is no path
        ("NOTE", "AKIAABCDEFGHIJKLMNOP"),
        ("CERT", "-----BEGIN RSA PRIVATE KEY-----\\nMIIE"),
        ("X", "ghp_" + "a" * 36),
        ("TOKEN_PATH", "ghp_" + "a" * 36),  # a key's shape counts whatever the name
    ],
)
def test_literal_credentials_are_rejected_and_never_printed(tmp_path, name, value):
    body = LIMITED + f'  env: [{{name: {name}, value: "{value}"}}]\n'
    lines = findings(body)
    assert value.replace("\\n", "\n") not in "\n".join(lines)
    assert lines == [
        f"spec.yaml:8:{25 + len(name)}: error: $.spec.env[0].value: env '{name}' holds a literal "
        "credential; it would be committed to Git in the rendered manifests (use "
        "valueFrom.secretKeyRef with a Secret) [secret-literal]"
    ]
    with pytest.raises(SpecError):
        render_file(tmp_path, DEMO + body)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MLFLOW_TRACKING_URI", "https://user:s3cr3tPass@mlflow.example.com"),
        ("DATABASE_URL", "postgres://admin:hunter2@db:5432/x"),
    ],
)
def test_a_password_in_a_url_is_rejected_never_printed_and_the_way_out_named(
    runner, tmp_path, name, value
):
    spec = tmp_path / "spec.yaml"
    spec.write_text(DEMO + LIMITED + f"  env: [{{name: {name}, value: '{value}'}}]\n")
    result = runner.invoke(cli, ["render", str(spec), "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 1
    assert value not in result.output + result.stderr
    assert value.split("@")[0].split(":")[-1] not in result.stderr  # the password alone
    assert f"$.spec.env[0].value: env '{name}' holds a literal credential" in result.stderr
    assert "as $(NAME) in the URL) [secret-literal]" in result.stderr
    assert not (tmp_path / "deploy").exists()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        # the issue's five: NLP jobs could not be rendered
        ("MAX_TOKENS", "4096"),
        ("TOKENIZER_PATH", "/mnt/tok"),
        ("LABEL_KEY", "click"),
        ("SECRET_SAUCE_ENABLED", "true"),
        ("PASSWORD_FILE", "/etc/secret/pw"),
        # and their kin
        ("NUM_TOKENS", "12"),
        ("HF_TOKEN", ""),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/var/run/gcp/key.json"),
        ("CACHE_KEY", "data/tok"),
        ("PASSWORD_POLICY", "strict"),
        ("PASSWORD_MIN_LENGTH", "12"),
        ("DB_PASSWORD", "$(PG_PASSWORD)"),
    ],
)
def test_settings_with_credential_words_in_their_names_pass(name, value):
    body = LIMITED + f'  env: [{{name: {name}, value: "{value}"}}]\n'
    assert findings(body) == []
    (pod,) = pods(body)
    assert {"name": name, "value": value} in pod["containers"][0]["env"]


def test_harmless_names_and_secret_refs_pass():
    body = LIMITED + (
        "  env:\n    - {name: KEY_COLUMN, value: id}\n    - {name: MONKEY, value: x}\n"
        "    - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}\n"
    )
    assert findings(body) == []


def test_a_schema_error_does_not_echo_a_secret():
    lines = findings(
        "spec:\n  workload: job\n  image: img:1\n  env: [{name: DB_PASSWORD, value: 987654321}]\n"
    )
    assert lines[0] == (
        "spec.yaml:7:36: error: $.spec.env[0].value: <redacted> is a number in YAML, not a "
        'string (quote it: "<redacted>") [schema]'
    )
    assert "987654321" not in "".join(lines)


def test_the_issues_nlp_job_renders(runner, tmp_path):
    spec = tmp_path / "nlp.yaml"
    spec.write_text(
        DEMO + LIMITED + "  env:\n"
        "    - {name: MAX_TOKENS, value: '4096'}\n"
        "    - {name: TOKENIZER_PATH, value: /mnt/tok}\n"
        "    - {name: LABEL_KEY, value: click}\n"
        "    - {name: SECRET_SAUCE_ENABLED, value: 'true'}\n"
        "    - {name: PASSWORD_FILE, value: /etc/secret/pw}\n"
    )
    result = runner.invoke(cli, ["render", str(spec), "-o", str(tmp_path / "deploy")])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"1 job in {tmp_path / 'deploy'}: 3 written, 0 unchanged, 0 removed\n"
    assert "LABEL_KEY" in (tmp_path / "deploy" / "demo" / "batch_v1_job_demo.yaml").read_text()
