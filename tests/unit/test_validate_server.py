"""validate --server's handling of kubectl failures that need no cluster (a fake kubectl on
PATH; the real behaviour is tested against the local control plane in tests/cluster/)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from paddlegen import api
from paddlegen.errors import ToolError
from paddlegen.validate.server import Server, dry_run
from tests.helpers import job_spec


def fake_kubectl(folder: Path, body: str) -> None:
    script = folder / "kubectl"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def rendered(tmp_path):
    spec = tmp_path / "a.yaml"
    spec.write_text(job_spec("a"))
    return api.render_specs([spec])


def test_a_kubectl_that_hangs_is_a_tool_error_after_the_timeout(tmp_path, monkeypatch, rendered):
    fake_kubectl(tmp_path, "exec /bin/sleep 30")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match=r"kubectl did not answer in 0\.2 s"):
        dry_run(rendered, Server(timeout=0.2))


def test_a_kubectl_that_fails_silently_is_a_tool_error(tmp_path, monkeypatch, rendered):
    fake_kubectl(tmp_path, "/bin/cat >/dev/null; exit 3")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolError, match="kubectl exited 3 and said nothing"):
        dry_run(rendered, Server())


def test_kubectl_gets_the_context_kubeconfig_and_no_shell(tmp_path, monkeypatch, rendered):
    fake_kubectl(tmp_path, f'printf "%s\\n" "$@" > {tmp_path}/argv; /bin/cat > {tmp_path}/stdin')
    monkeypatch.setenv("PATH", str(tmp_path))
    assert dry_run(rendered, Server("stage; rm -rf /", "/k/config", 5)) == []
    assert (tmp_path / "argv").read_text().splitlines() == [
        "--kubeconfig=/k/config",
        "--context=stage; rm -rf /",
        "--request-timeout=5s",
        "apply",
        "--server-side",
        "--dry-run=server",
        "--field-manager=paddlegen",
        "-f",
        "-",
    ]
    assert "kind: Job" in (tmp_path / "stdin").read_text()


def test_each_error_of_a_several_error_refusal_is_a_finding(tmp_path, monkeypatch, rendered):
    # kubectl's form for an object with several errors: a head line, then one `* ` line each.
    fake_kubectl(
        tmp_path,
        "/bin/cat >/dev/null\n"
        "echo 'The Job \"a\" is invalid: ' >&2\n"
        "echo '* spec.completions: Invalid value: 4: field is immutable' >&2\n"
        f'echo \'* spec.template: Invalid value: {{"x": "{"x" * 300}"}}: '
        "field is immutable' >&2\n"
        "exit 1",
    )
    monkeypatch.setenv("PATH", str(tmp_path))
    found = dry_run(rendered, Server())
    assert [(d.path, d.message) for d in found] == [
        ("Job/a spec.completions", "Invalid value: 4: field is immutable"),
        ("Job/a spec.template", "Invalid value: {…}: field is immutable"),  # not 300 x
    ]
    assert {d.rule for d in found} == {"server"}
