"""What each rule id checks: the help text of the reports that describe their rules (SARIF).

The semantic rules' texts are their summaries (Markdown), the rules reference's table word for
word (a test holds the two together); ``OTHERS`` name what the
findings of every other rule id paddlegen reports are about. A rule id missing from both is
still reported, without a description.
"""

from __future__ import annotations

from paddlegen.rules import REGISTRY

OTHERS: dict[str, str] = {
    "yaml": (
        "a spec file is one YAML document, a mapping of plain values: valid syntax, no duplicate "
        "keys, no tags, within the size, alias and nesting limits"
    ),
    "encoding": "a spec file is UTF-8 text, without NUL bytes",
    "schema": (
        "a spec matches its JSON Schema (`paddlegen schema`): known fields, types, enums, "
        "quantities and names"
    ),
    "job-name": (
        "no two spec files name one job (`metadata.name`), in one run or across runs (a job "
        "folder's stamp names the spec file it belongs to): both would render into one folder"
    ),
    "ignore-unused": "every `ignore` entry silences a finding (a stale one is noticed)",
    "ignore-required": "no `ignore` entry names a required rule",
    "kubeconform": (
        "a rendered manifest is valid by the Kubernetes and CRD schemas, checked by kubeconform "
        "(strict, offline)"
    ),
    "in-process": (
        "a rendered manifest is valid by the Kubernetes and CRD schemas, checked in process "
        "(kubeconform was not installed)"
    ),
    "overlay": "an environment's patch applies to its base object",
    "server": "the API server accepts the objects (a server-side apply dry-run, `--server`)",
    "kueue-local-queue": (
        "the Kueue LocalQueue a job's queue-name label names exists in its namespace (`--server`)"
    ),
    "stale": "a rendered file is what the specs render to (`paddlegen render` rewrites it)",
    "missing": "every file a render writes is there",
    "extra": "no file that paddlegen generated is left where a render no longer writes one",
    "unknown": (
        "every file in a job folder is one paddlegen generated, or in its `custom/` Component "
        "(a file nothing deploys is reported)"
    ),
    "custom": "a job's `custom/` folder is a kustomize Component kustomize can use",
    "leftover": "no staging folder of an interrupted render is left in the output",
    "summary": "what the run left undone because of the errors it found",
    "import-note": (
        "what `import` changed without changing what runs (a server-set field, a default made "
        "explicit, a name paddlegen derives)"
    ),
    "import-lossy": "what `import` could not carry over: the spec would run differently",
    "input": "every file named can be read",
    "output": "the output can be written without overwriting files paddlegen did not make",
    "tool": "an external tool (kubeconform, kubectl) is there and answers",
    "template": "every template renders",
    "usage": "the command line is one paddlegen takes",
    "value": "every value given is one paddlegen can take",
    "argument": "the arguments given agree with each other",
    "error": "an error paddlegen expected",
    "internal": "nothing fails inside paddlegen (otherwise a bug: please report it)",
    # `paddlegen kueue`'s input (paddlegen/gitops/kueue_setup.py)
    "kueue-setup-flavor": "a team's quota is on a flavor of `flavors`",
    "kueue-setup-unique": "no two flavors, priority classes, teams or topologies share a name",
    "kueue-setup-default-queue": (
        "no team is named `default`: its LocalQueues would be Kueue's default queue, which "
        "takes every Job of the namespace without a queue label, paddlegen's data Jobs too"
    ),
    "kueue-setup-quantity": "an extended resource's quota (`nvidia.com/gpu`) is a whole number",
    "kueue-setup-unused": "every flavor has a team's quota on it, every topology a flavor",
    "kueue-setup-topology": (
        "a flavor's topology is one of `topologies`, on the nodes its `nodeLabels` pick; "
        "`kubernetes.io/hostname` is a topology's last level"
    ),
}

HELP: dict[str, str] = {**{rule.id: rule.summary for rule in REGISTRY}, **OTHERS}
