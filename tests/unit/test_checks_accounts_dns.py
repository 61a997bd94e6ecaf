"""The rules service-account-token, default-account-token, dns-config and dns-policy, and the
TrainJob's runtime of its own for the settings no runtime patch carries."""

from __future__ import annotations

import pytest

from paddlegen.workloads import WORKLOADS
from tests.builders import diagnostics, only, spec
from tests.unit.test_checks_network import BASE

# Each workload's roles, as spec lines (the tests of a finding's line and column add theirs).
ROLES = {
    "job": "",
    "collective-job": "  worker: {replicas: 2}\n",
    "paddlejob": "  ps: {replicas: 1}\n  worker: {replicas: 2}\n",
    "kubeflow-paddlejob": "  ps: {replicas: 1}\n  worker: {replicas: 2}\n",
    "distributed-job": "  worker: {replicas: 2}\n"
    "  volumes: [{name: d, mountPath: /d, emptyDir: {}}]\n"
    "  distributed: {volume: d, trainConfigDir: q}\n",
    "trainjob": "  worker: {replicas: 2}\n",
}

DISTRIBUTED = BASE.format(workload="distributed-job") + ROLES["distributed-job"]
JOB = BASE.format(workload="job")
PADDLEJOB = BASE.format(workload="paddlejob") + ROLES["paddlejob"]
TOKEN = "  automountServiceAccountToken: true\n"


def test_a_distributed_job_cannot_turn_off_the_token_its_peer_discovery_needs():
    off = "automountServiceAccountToken: false"
    (line,) = only(DISTRIBUTED + f"  {off}\n", "service-account-token")
    assert line.startswith("spec.yaml:11:33: error: $.spec.automountServiceAccountToken: ")
    assert "listing the job's pods through the API server" in line
    # the worker's own value wins over the spec's: no finding at the spec-wide false
    body = DISTRIBUTED.replace("replicas: 2}", "replicas: 2, automountServiceAccountToken: true}")
    assert only(body + f"  {off}\n", "service-account-token") == []
    (line,) = only(
        DISTRIBUTED.replace("replicas: 2}", f"replicas: 2, {off}}}"), "service-account-token"
    )
    assert "$.spec.worker.automountServiceAccountToken" in line


@pytest.mark.parametrize("workload", [name for name, w in WORKLOADS.items() if not w.api_token])
def test_a_workload_that_does_not_call_the_api_server_may_leave_the_token_out(workload):
    found = diagnostics(spec(workload, automountServiceAccountToken=False))
    assert [d for d in found if d.rule == "service-account-token"] == []


def test_a_token_without_an_account_is_the_namespaces_default_accounts():
    (line,) = only(PADDLEJOB + TOKEN, "default-account-token")
    assert line.startswith(
        "spec.yaml:10:33: warning: $.spec.automountServiceAccountToken: with no "
        "serviceAccountName the token mounted in the ps pods and the worker pods is the "
        "namespace's default ServiceAccount's"
    )
    named = PADDLEJOB + TOKEN + "  serviceAccountName: trainer\n"
    assert only(named, "default-account-token") == []
    # a role of its own account: only the other role's pods are said
    own = PADDLEJOB.replace("ps: {replicas: 1}", "ps: {replicas: 1, serviceAccountName: ps}")
    (line,) = only(own + TOKEN, "default-account-token")
    assert "the token mounted in the worker pods is" in line


def test_distributed_trainers_run_as_the_jobs_own_account_but_its_data_job_does_not():
    assert only(DISTRIBUTED + TOKEN, "default-account-token") == []
    data = "  dataPrep: {volume: d, image: r/d:1}\n"
    (line,) = only(DISTRIBUTED + data + TOKEN, "default-account-token")
    assert "the token mounted in the data Job's pod is" in line


def test_dns_policy_none_needs_a_nameserver_where_it_goes_wrong():
    (line,) = only(JOB + "  dnsPolicy: None\n", "dns-config")
    assert line.startswith(
        "spec.yaml:8:14: error: $.spec.dnsPolicy: dnsPolicy None leaves the pods' resolver to "
        "dnsConfig, and they have none: the API server refuses the pods"
    )
    (line,) = only(
        JOB + "  dnsPolicy: None\n  dnsConfig: {searches: [corp.example.com]}\n", "dns-config"
    )
    assert line.startswith(
        "spec.yaml:9:3: error: $.spec.dnsConfig: dnsConfig lists no nameserver, and with "
        "dnsPolicy None ($.spec.dnsPolicy) it is the pods' whole resolver configuration"
    )
    fine = JOB + "  dnsPolicy: None\n  dnsConfig: {nameservers: [10.96.0.10]}\n"
    assert only(fine, "dns-config") == []


def test_a_roles_own_dns_config_replaces_the_spec_wide_one():
    body = (
        BASE.format(workload="paddlejob")
        + "  ps: {replicas: 1, dnsConfig: {options: [{name: edns0}]}}\n"
        + "  worker: {replicas: 2}\n"
        + "  dnsPolicy: None\n  dnsConfig: {nameservers: [10.96.0.10]}\n"
    )
    (line,) = only(body, "dns-config")
    assert "$.spec.ps.dnsConfig: dnsConfig lists no nameserver, and with dnsPolicy None" in line


@pytest.mark.parametrize(
    ("server", "why"),
    [
        ("010.0.0.1", "has leading zeros, which some resolvers read as octal"),
        ("1.2.3.400", "is not an IP address"),
        ("'::ffff:10.0.0.1'", "is an IPv4-mapped IPv6 address"),
        ("'fd00:::1'", "is not an IP address"),
    ],
)
def test_a_nameserver_is_an_ip_address_as_the_api_server_parses_it(server, why):
    body = JOB + f"  dnsConfig: {{nameservers: [10.0.0.1, {server}]}}\n"
    (line,) = only(body, "dns-config")
    assert "$.spec.dnsConfig.nameservers[1]: nameserver" in line
    assert why in line


@pytest.mark.parametrize("server", ["10.0.0.1", "'fd00::a'", "'::1'", "'2001:db8::1.2.3.4'"])
def test_plain_addresses_are_nameservers(server):
    body = JOB + f"  dnsConfig: {{nameservers: [{server}]}}\n"
    assert only(body, "dns-config") == []


def test_the_search_list_fits_in_2048_characters():
    domain = "a" * 62 + "." + "b" * 62 + "." + "c" * 62 + "." + "d" * 61  # 250 characters
    fits = ", ".join([domain] * 8)  # 8 * 250 + 7 spaces = 2007
    too_long = ", ".join([domain] * 9)  # 2259
    body = JOB + "  dnsConfig: {{searches: [{}]}}\n"
    assert only(body.format(fits), "dns-config") == []
    (line,) = only(body.format(too_long), "dns-config")
    assert "$.spec.dnsConfig.searches: the search list is 2258 characters long" in line


@pytest.mark.parametrize(
    ("workload", "warned"),
    [
        ("collective-job", True),
        ("kubeflow-paddlejob", True),
        ("paddlejob", True),
        ("trainjob", True),
        ("job", False),  # one pod, no peers
        ("distributed-job", False),  # peers by the API server and their IPs
    ],
)
def test_dns_policy_default_stalls_a_workload_whose_ranks_meet_by_name(workload, warned):
    body = BASE.format(workload=workload) + ROLES[workload] + "  dnsPolicy: Default\n"
    lines = only(body, "dns-policy")
    assert len(lines) == warned
    if warned:
        assert "warning: $.spec.dnsPolicy: dnsPolicy Default resolves with the node's" in lines[0]


def test_a_host_network_paddlejob_with_cluster_first_resolves_as_default():
    host = PADDLEJOB + "  paddlejob: {intranet: Host}\n"
    (line,) = only(host + "  dnsPolicy: ClusterFirst\n", "dns-policy")
    assert "with intranet Host the pods are on their nodes' network" in line
    assert "remove it: paddlegen gives these pods ClusterFirstWithHostNet" in line
    assert only(PADDLEJOB + "  dnsPolicy: ClusterFirst\n", "dns-policy") == []
    assert only(host + "  dnsPolicy: ClusterFirstWithHostNet\n", "dns-policy") == []


def test_a_trainjob_on_a_runtime_of_the_specs_cannot_carry_pod_settings_only_a_runtime_has():
    body = BASE.format(workload="trainjob") + ROLES["trainjob"]
    mine = body + "  trainjob: {runtime: my-runtime}\n"
    (line,) = only(mine + "  dnsPolicy: Default\n", "workload-unsupported")
    assert "$.spec.dnsPolicy: a TrainJob's runtime patch (Trainer v2.3.0) has no dnsPolicy" in line
    assert "set dnsPolicy in the pod template of runtime my-runtime" in line
    assert only(body + "  dnsPolicy: Default\n", "workload-unsupported") == []
