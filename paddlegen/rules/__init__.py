"""The semantic rules JSON Schema cannot express: their registry, and the runner over a spec."""

# Each rule is one `SpecRule` (paddlegen/spec/rule.py) in the module of its topic, or in the
# folder of the workload whose specs alone it checks (its rules.py, whose `RULES` its registry
# entry gives as `Workload.rules`, with what it adds to the rules every spec gets), or in
# paddlegen/workloads/shared/rules.py when several workloads' folders list it. A spec is checked
# by every rule here and by its workload's own; its findings come out sorted, whatever the order.

from __future__ import annotations

from paddlegen.errors import Diagnostic
from paddlegen.rules import (
    accounts,
    capabilities,
    devices,
    dns,
    env,
    images,
    names,
    network,
    pod_security,
    pods,
    resources,
    scheduling,
    volumes,
    workload,
)
from paddlegen.spec.loader import Document
from paddlegen.spec.rule import Context, SpecRule
from paddlegen.workloads import workload_of

# The rules every spec gets: every rule of the topic modules here, each once. A workload's own
# (its folder's rules.py, ``Workload.rules``) are imported with its entry, for a spec of it only.
_TOPICS = (
    accounts,
    capabilities,
    devices,
    dns,
    env,
    images,
    names,
    network,
    pod_security,
    pods,
    resources,
    scheduling,
    volumes,
    workload,
)
EVERY_SPEC: tuple[SpecRule, ...] = tuple(
    {id(v): v for t in _TOPICS for v in vars(t).values() if isinstance(v, SpecRule)}.values()
)

# Every rule in the reference's order (REGISTRY), their ids (RULES) and those no `ignore` may
# silence (REQUIRED) are in ``registry``, imported when first asked for here (``__getattr__``):
# it imports every workload's rules, and with them every workload's entry.
REGISTRY: tuple[SpecRule, ...]
RULES: tuple[str, ...]
REQUIRED: tuple[str, ...]


def __getattr__(name: str) -> tuple[object, ...]:
    if name not in ("REGISTRY", "RULES", "REQUIRED"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from paddlegen.rules import registry

    found: tuple[object, ...] = getattr(registry, name)
    return found


def semantic_diagnostics(doc: Document, workload: str | None = None) -> list[Diagnostic]:
    """Run every rule of the spec's workload on a spec that already passed the schema."""
    entry = workload_of(doc.data, workload)
    own = entry.rules()
    ctx = Context(doc, entry, own)
    found = []
    for rule in (*EVERY_SPEC, *own.rules):
        found += [ctx.diagnostic(rule, f) for f in rule.check(ctx)]
        if rule.id in own.extends:
            found += [ctx.diagnostic(rule, f) for f in own.extends[rule.id](ctx)]
    return sorted(found)
