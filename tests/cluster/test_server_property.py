"""Whatever paddlegen accepts, the API server accepts: specs from the property strategies
(`plausible_specs`, `schema_specs`) that paddlegen accepts are sent to the real API server by
server-side and by client-side apply (both dry-run), many per kubectl call; none may be
refused, and every warning the server gives is one paddlegen gave for that spec (its rule).

Counts: the plausible strategy draws PADDLEGEN_SERVER_SPECS examples (default 100, all
accepted; the `ci` profile draws the same ones each run), the schema strategy a third as
many: its specs take five times as long to draw and two in three are refused by paddlegen, so
never sent (about 110 are sent by default); the long run sets it to 4500 (over 5,000 sent).
The test prints what it sent;
PADDLEGEN_SERVER_REPORT=FILE writes every problem to FILE.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from paddlegen.errors import Diagnostic
from paddlegen.pipeline import build
from paddlegen.spec.loader import parse_spec
from paddlegen.yamlio import dump_yaml
from tests.cluster.conftest import Kube
from tests.property.strategies import plausible_specs, schema_specs
from tests.property.test_specs import SPEC, dump, is_accepted, verdict

WANTED = int(os.environ.get("PADDLEGEN_SERVER_SPECS", "100"))
BATCH = 60  # specs per kubectl call: one stream, one process
FIELD_MANAGER = "--field-manager=paddlegen"

# A server warning -> the paddlegen rule that must already have warned about that spec.
SERVER_WARNINGS = {
    r"spec\.cephfs: deprecated": "cephfs-in-tree",
    r"The Recycle reclaim policy is deprecated": "nfs-recycle",
    r'fractional byte value "[^"]*" is invalid': "quantity-fractional-bytes",
}


@dataclass
class Accepted:
    """One paddlegen-accepted spec: its text, its findings, and its objects as one stream."""

    text: str
    found: list[Diagnostic]
    stream: str


ACCEPTED: list[Accepted] = []
DRAWN = {"plausible": 0, "schema": 0}


def _keep(data: dict, strategy: str) -> None:
    DRAWN[strategy] += 1
    # A name of its own, so that objects of different specs never meet in one batch.
    data = {**data, "metadata": {**data["metadata"], "name": f"prop-{len(ACCEPTED)}"}}
    text = dump(data)
    doc, found = verdict(text)
    if not is_accepted(doc, found):
        return
    rendered = build.render_document(parse_spec(text.encode("utf-8"), SPEC))
    streams = [build.manifest_stream([rendered])]
    streams += [build.manifest_stream([rendered], env) for env in rendered.environments]
    ACCEPTED.append(Accepted(text, found, "".join(streams)))


def _draw(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@_draw(WANTED)
@given(plausible_specs())
def test_collect_plausible_specs(data: dict) -> None:
    _keep(data, "plausible")


@_draw(max(1, WANTED // 3))
@given(schema_specs())
def test_collect_schema_specs(data: dict) -> None:
    _keep(data, "schema")


def _apply(kube: Kube, specs: list[Accepted], server_side: bool) -> tuple[bool, str]:
    mode = ["--server-side", FIELD_MANAGER] if server_side else []
    stream = "".join(s.stream for s in specs)
    done = kube.run("apply", "--dry-run=server", *mode, "-f", "-", stdin=stream, check=False)
    return done.returncode == 0, done.stderr


def _warnings(stderr: str) -> list[str]:
    return [
        line[len("Warning: ") :] for line in stderr.splitlines() if line.startswith("Warning: ")
    ]


def _warned(spec: Accepted) -> frozenset[str]:
    """The rules server warnings map to that paddlegen warned about ``spec`` under."""
    return frozenset(
        d.rule for d in spec.found if not d.is_error and d.rule in SERVER_WARNINGS.values()
    )


def _rule_of(warning: str) -> str | None:
    """The paddlegen rule a server warning maps to (None: none does)."""
    return next((r for pattern, r in SERVER_WARNINGS.items() if re.search(pattern, warning)), None)


def _unexplained(spec: Accepted, warnings: list[str]) -> list[str]:
    """The server's warnings for ``spec`` that paddlegen did not give under its own rule."""
    rules = {d.rule for d in spec.found if not d.is_error}
    left = []
    for warning in warnings:
        rule = _rule_of(warning)
        if rule not in rules:
            left.append(f"{warning} (paddlegen rule {rule or '?'} not given)")
    return left


def _namespaces(kube: Kube) -> None:
    names = set()
    for spec in ACCEPTED:
        for obj in yaml.safe_load_all(spec.stream):
            if obj and obj["metadata"].get("namespace"):
                names.add(obj["metadata"]["namespace"])
    existing = set(kube.run("get", "namespaces", "-o", "name").stdout.split())
    wanted = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
        for n in sorted(names)
        if f"namespace/{n}" not in existing
    ]
    if wanted:
        kube.run("apply", "-f", "-", stdin="".join(f"---\n{dump_yaml(ns)}" for ns in wanted))


def _batches() -> list[list[Accepted]]:
    """ACCEPTED in batches of at most BATCH specs that paddlegen warned about under the same
    rules, so that a batch's warnings are explained by the rules of any one of its specs."""
    groups: dict[frozenset[str], list[Accepted]] = {}
    for spec in ACCEPTED:
        groups.setdefault(_warned(spec), []).append(spec)
    return [
        group[start : start + BATCH]
        for _, group in sorted(groups.items(), key=lambda item: sorted(item[0]))
        for start in range(0, len(group), BATCH)
    ]


def test_the_server_accepts_every_spec_paddlegen_accepts(kube: Kube, capsys) -> None:
    if not ACCEPTED:
        pytest.fail("the collecting tests above drew no accepted spec")
    _namespaces(kube)
    problems: list[str] = []
    batches = _batches()
    for server_side in (True, False):
        how = "server-side" if server_side else "client-side"
        for batch in batches:
            rules = _warned(batch[0])
            ok, stderr = _apply(kube, batch, server_side)
            if ok and all(_rule_of(w) in rules for w in _warnings(stderr)):
                continue
            for spec in batch:  # whose refusal or warning: one spec per call
                ok, stderr = _apply(kube, [spec], server_side)
                left = _unexplained(spec, _warnings(stderr))
                if not ok or left:
                    errors = [
                        line for line in stderr.splitlines() if not line.startswith("Warning: ")
                    ]
                    problems.append(f"{how}: {errors + left}\n{spec.text}")
    with capsys.disabled():
        print(
            f"\nserver property: {len(ACCEPTED)} paddlegen-accepted specs sent (drawn: "
            f"{DRAWN['plausible']} plausible, {DRAWN['schema']} schema), "
            f"{len(problems)} refused or unexplained"
        )
    report = os.environ.get("PADDLEGEN_SERVER_REPORT")  # every problem, for a person to read
    if report:
        Path(report).write_text("\n---\n".join(problems), encoding="utf-8")
    assert len(ACCEPTED) >= WANTED
    assert not problems, f"{len(problems)} refused or surprising:\n" + "\n---\n".join(problems[:10])
