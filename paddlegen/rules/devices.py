"""The devices a pod's command or env pins against those it has: one rank per device."""

# Paddle's launcher (paddle 3.3.1, python/paddle/distributed/launch/) starts in each pod
# --nproc_per_node processes, else one per --devices entry, else one per device it sees
# (controllers/controller.py:277-287). It sees the devices CUDA_VISIBLE_DEVICES,
# XPU_VISIBLE_DEVICES, XPULINK_VISIBLE_DEVICES or <type>_VISIBLE_DEVICES of a custom device
# (NPU_VISIBLE_DEVICES for Ascend's `npu`) list, else every device of its build's kind, which
# are the pod's own: a device plugin gives the container only the devices it allocated
# (context/device.py:100-176). Each process gets the device of its local rank
# (controllers/collective.py:222-256), a --devices entry being looked up among those seen
# (device.py:82-90). Env PADDLE_DEVICES and PADDLE_NPROC_PER_NODE replace the flags
# (context/args_envs.py:24,30, context/__init__.py:100-107); CANN's ASCEND_RT_VISIBLE_DEVICES
# hides NPUs from the count the launcher asks for (PaddleCustomDevice@77090b6
# backends/npu/runtime/runtime.cc:398, aclrtGetDeviceCount).

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any, NamedTuple

from paddlegen.errors import InvalidValueError
from paddlegen.spec.accelerators import ACCELERATORS, is_extended, is_network_or_share
from paddlegen.spec.loader import FieldPath
from paddlegen.spec.model import replicas, role_value
from paddlegen.spec.quantity import server_value
from paddlegen.spec.rule import Context, Finding, SpecRule, role_gpus, role_resources
from paddlegen.workloads import WORKLOADS
from paddlegen.workloads.shared.launcher import LAUNCHER

# Env that lists the devices a process sees.
VISIBLE_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "XPU_VISIBLE_DEVICES",
    "XPULINK_VISIBLE_DEVICES",
    "NPU_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
)
# The launcher's flags (one flag, four names: args_envs.py:142-150) and env that list devices,
# and those that give the number of processes.
DEVICE_FLAGS = ("--devices", "--gpus", "--xpus", "--npus")
COUNT_FLAGS = ("--nproc_per_node",)
_FLAG_ENV = {"PADDLE_DEVICES": "--devices", "PADDLE_NPROC_PER_NODE": "--nproc_per_node"}
# What starts the launcher, as a word of a command or of a shell script.
_LAUNCHERS = ("paddle.distributed.launch", "paddle.distributed.fleet.launch", "fleetrun")
# A word worth reading: cheap to test on every word of every spec.
_MARKS = ("VISIBLE_DEVICES", *_LAUNCHERS)
_DEVICE_LIST = re.compile(r"^\d+(,\d+)*$")


class Pin(NamedTuple):
    """One pin: where, what it says (for the message), the devices it lists (None: a count)."""

    where: FieldPath
    said: str
    length: int  # devices listed, or processes
    ids: tuple[int, ...] | None
    by_launcher: bool  # a launcher flag (or its env), whose ids are the visible devices' own


def _pin(where: FieldPath, name: str, value: str, by_launcher: bool) -> Pin | None:
    """The pin ``name`` (an env or a flag) of ``value``, when a literal list or count."""
    value = value.strip().strip("'\"")
    said = f"{name}={value}"
    if name in COUNT_FLAGS:
        return Pin(where, said, int(value), None, True) if value.isdigit() else None
    if not _DEVICE_LIST.match(value):
        return None  # `all`, a variable: nothing to compare
    ids = tuple(int(i) for i in value.split(","))
    return Pin(where, said, len(ids), ids, by_launcher)


def _tokens(words: list[tuple[FieldPath, str]]) -> list[tuple[FieldPath, str]]:
    """The words, a shell script's split into its own words, each with its place."""
    out: list[tuple[FieldPath, str]] = []
    for where, word in words:
        if " " in word or "\n" in word:
            # a shell's words: `;` and `&&` apart from the words they end
            lexer = shlex.shlex(word, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            try:
                out += [(where, part) for part in lexer]
            except ValueError:  # an unclosed quote
                out += [(where, part) for part in word.split()]
        else:
            out.append((where, word))
    return out


def _word_pins(words: list[tuple[FieldPath, str]]) -> Iterator[Pin]:
    """`NAME=devices` assignments, and the launcher's device flags before its script."""
    tokens = _tokens(words)
    i = 0
    while i < len(tokens):
        where, token = tokens[i]
        i += 1
        name, eq, value = token.partition("=")
        if eq and name in VISIBLE_ENV:
            pin = _pin(where, name, value, by_launcher=False)
            if pin:
                yield pin
        if not token.endswith(_LAUNCHERS):
            continue
        # The launcher's flags, each with one value, up to its script (args_envs.py).
        while i < len(tokens) and tokens[i][1].startswith("--"):
            where, flag = tokens[i]
            name, eq, value = flag.partition("=")
            if not eq and i + 1 < len(tokens):
                value = tokens[i + 1][1]
            if name in DEVICE_FLAGS or name in COUNT_FLAGS:
                pin = _pin(where, name, value, by_launcher=True)
                if pin:
                    yield pin
            i += 1 if eq else 2


def _pins(ctx: Context, body: dict[str, Any], role: str) -> Iterator[Pin]:
    """Every pin of ``role``'s pods: in their env, their command and their args."""
    env_at: FieldPath = ("spec", role) if "env" in body else ("spec",)
    for i, entry in enumerate(role_value(ctx.spec, body, "env", [])):
        name, value = entry["name"], entry.get("value")
        if value is None or (name not in VISIBLE_ENV and name not in _FLAG_ENV):
            continue
        flag = _FLAG_ENV.get(name)
        pin = _pin((*env_at, "env", i, "value"), flag or name, value, flag is not None)
        if pin:
            yield pin._replace(said=f"{name}={value}")
    words: list[tuple[FieldPath, str]] = []
    for key in ("command", "args"):
        at: FieldPath = ("spec", role, key) if key in body else ("spec", key)
        given = role_value(ctx.spec, body, key)
        if given is None and key == "command" and WORKLOADS[ctx.workload].launcher:
            words += [(("spec",), word) for word in LAUNCHER]  # the default command
        words += [((*at, j), word) for j, word in enumerate(given or [])]
    if any(mark in word for _, word in words for mark in _MARKS):
        yield from _word_pins(words)


def _devices(ctx: Context, body: dict[str, Any]) -> tuple[int, str] | None:
    """The devices of a pod of the role and their accelerator: gpus, else a known
    accelerator's limit; None when it asks for another extended resource than a NIC or a
    GPU's share (another accelerator, or an unknown one, which may be a device)."""
    accelerator = ctx.accelerator
    gpus = role_gpus(ctx, body)
    if gpus:
        return gpus, accelerator
    limits = role_resources(ctx, body).get("limits", {})
    for name, quantity in limits.items():
        if name in ACCELERATORS:
            try:
                return int(server_value(quantity)), name
            except (InvalidValueError, ValueError):
                return None  # resource-quantity says what is wrong with it
        if is_extended(name) and not is_network_or_share(name):
            return None  # another accelerator, or unknown (rule unknown-resource)
    return 0, accelerator


def _finding(
    ctx: Context, pin: Pin, pods: str, replicas: int, devices: int, accelerator: str
) -> Finding | None:
    """What is wrong with ``pin`` in ``pods`` (how the message names them) of ``devices``."""
    kind = ACCELERATORS[accelerator]
    have = f"{pods} has {devices} {kind}{'s' if devices != 1 else ''}"
    if pin.ids is None:  # a number of processes: process i takes device i
        if devices and pin.length > devices:
            return ctx.finding(
                pin.where,
                f"{pin.said} starts {pin.length} ranks per pod, but {have}: ranks from "
                f"{devices} on find no device and the launcher fails",
                f"remove it; the launcher starts one rank per device ({devices} per pod)",
            )
        if devices and pin.length < devices:
            return _idle(ctx, pin, replicas, devices, have)
        return None
    if devices == 0:
        return ctx.finding(
            pin.where,
            f"{pin.said} pins {pin.length} device(s), but {pods} has no {kind} (gpus): the "
            "ranks find none",
            f"set gpus: {pin.length}, or remove the pin",
        )
    if pin.length > devices:
        return ctx.finding(
            pin.where,
            f"{pin.said} pins {pin.length} devices, but {have} and its container sees only "
            "those: the launcher or the ranks fail",
            f"remove it, and the launcher starts one rank per device; or set gpus: {pin.length}",
        )
    outside = [i for i in pin.ids if i >= devices]
    if pin.by_launcher and outside:
        return ctx.finding(
            pin.where,
            f"{pin.said} names device {outside[0]}, but {have}, numbered 0 to {devices - 1} "
            "in its container: the launcher fails looking it up",
            "remove it; the launcher starts one rank per device",
        )
    if pin.length < devices:
        return _idle(ctx, pin, replicas, devices, have)
    return None


def _idle(ctx: Context, pin: Pin, replicas: int, devices: int, have: str) -> Finding:
    return ctx.finding(
        pin.where,
        f"{pin.said} leaves {devices - pin.length} device(s) of each pod idle: {have}, but "
        f"the launcher starts {pin.length} rank(s) in it ({replicas} pod"
        f"{'s' if replicas != 1 else ''} x {pin.length} = "
        f"{replicas * pin.length} ranks, not {replicas * devices})",
        f"remove it, and the launcher starts one rank per device; or set gpus: {pin.length}",
        severity="warning",
    )


def _launcher_devices(ctx: Context) -> Iterator[Finding]:
    roles = dict(ctx.roles())
    roles.setdefault("worker", {})
    seen: set[Finding] = set()
    for role, body in roles.items():
        pins = list(_pins(ctx, body, role))
        if not pins:  # most specs pin nothing
            continue
        has = _devices(ctx, body)
        if has is None:
            continue
        pods = "each pod" if len(roles) == 1 else f"each {role} pod"
        for pin in pins:
            found = _finding(ctx, pin, pods, replicas(body), *has)
            if found and found not in seen:
                seen.add(found)
                yield found


LAUNCHER_DEVICES = SpecRule(
    "launcher-devices",
    "what a pod's command or env pins matches its devices (`gpus`): `--devices`, `--gpus`, "
    "`--xpus`, `--npus` or `--nproc_per_node` of Paddle's launcher (or `PADDLE_DEVICES`, "
    "`PADDLE_NPROC_PER_NODE`), `CUDA_VISIBLE_DEVICES` and the like, which the launcher "
    "starts one rank per entry of; fewer than the pod has is a warning (idle devices)",
    explanation=(
        "Paddle's launcher starts one rank per device it is given. A command or env that pins more "
        "devices than the pod has makes the launcher or the ranks fail (an error); fewer leaves "
        "devices idle (a warning)."
    ),
    severity="error",
    also=("warning",),
    silenceable=True,
    check=_launcher_devices,
)
