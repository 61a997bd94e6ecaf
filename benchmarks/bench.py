#!/usr/bin/env python3
"""paddlegen's benchmark: cold-process timings and peak RSS on synthetic repositories, next to
its peers (helm template, kustomize build, a bare jinja2 + PyYAML floor) in the same run.

    python benchmarks/bench.py [--sizes 1,100,1000,5000] [--runs 5] [--out benchmarks/results]

See benchmarks/README.md for what each row measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

CHART = HERE / "peers" / "paddlejob-chart"
FLOOR = HERE / "peers" / "floor.py"
TOOLS_BIN = HERE / ".tools" / "bin"
HELM_MODULE = "helm.sh/helm/v3/cmd/helm"
HELM_VERSION = "v3.22.0"

TARGETS = {  # seconds, for a 2-core machine
    "version": 0.060,
    "hook-validate-examples": 1.5,  # the paddlegen-validate hook on the examples
    "render-1-spec": 0.200,
    "render-1000": 3.0,
    "rerender-1000": 1.0,
    "check-1000": 1.0,
    "validate-kubeconform-1000": 5.0,
    "rss-1000-mb": 150.0,
    "growth-5000/1000": 5.5,
}


@dataclass
class Row:
    key: str  # e.g. render-1000
    label: str
    n: int  # jobs the row covers (per-job rows divide by it)
    runs: int
    times: list[float] = field(default_factory=list)  # seconds, one per run
    rss_mb: list[float] = field(default_factory=list)  # peak RSS of the largest process in the tree
    cpu: list[float] = field(default_factory=list)  # user + system seconds of the process tree
    busy: float = 0.0  # share of the machine's CPU used by other processes just before the row
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def per_job(self) -> float:
        return self.median / max(self.n, 1)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


class Failed(Exception):
    pass


def run_once(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    ok: tuple[int, ...] = (0,),
    log: Path,
) -> tuple[float, float, float]:
    """Wall time, peak RSS (MB) and CPU time of one cold process (``os.wait4`` gives this
    child's rusage, which includes the children it waited for, such as kubeconform)."""
    with open(log, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        tail = log.read_text(errors="replace")[-2000:]
        raise Failed(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{tail}")
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # maxrss in KiB


def busy_share(seconds: float = 0.5) -> float:
    """Share of all CPUs busy during ``seconds`` (this process sleeps meanwhile)."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as fh:
            values = [int(v) for v in fh.readline().split()[1:]]
        idle = values[3] + values[4]  # idle + iowait
        return sum(values) - idle, sum(values)

    try:
        b0, t0 = sample()
        time.sleep(seconds)
        b1, t1 = sample()
        return (b1 - b0) / max(t1 - t0, 1)
    except (OSError, ValueError, IndexError):
        return 0.0


WAIT_IDLE = 0.0  # seconds to wait for a quiet machine before each row (--wait-idle)
IDLE_BELOW = 0.25


def wait_for_quiet() -> float:
    """The machine's busy share, after waiting up to WAIT_IDLE seconds for it to drop."""
    deadline = time.monotonic() + WAIT_IDLE
    share = busy_share()
    while share >= IDLE_BELOW and time.monotonic() < deadline:
        time.sleep(2)
        share = busy_share()
    return share


def measure(row: Row, argv_for, *, setup=None, log: Path, **kw) -> Row:
    """Run ``row.runs`` times; ``argv_for`` (or ``argv_for(run)``) is one command or a list of
    commands whose times add up (per-job peers); ``setup(run)`` runs untimed before each."""
    row.busy = wait_for_quiet()
    for run in range(row.runs):
        if setup:
            setup(run)
        commands = argv_for(run) if callable(argv_for) else argv_for
        if commands and isinstance(commands[0], str):
            commands = [commands]
        total, peak, cpu = 0.0, 0.0, 0.0
        for argv in commands:
            elapsed, rss, used = run_once(argv, log=log, **kw)
            total += elapsed
            peak = max(peak, rss)
            cpu += used
        row.times.append(total)
        row.rss_mb.append(peak)
        row.cpu.append(cpu)
    print(
        f"  {row.label:<58} {fmt_s(row.median):>9}  ({fmt_s(min(row.times))}-"
        f"{fmt_s(max(row.times))}, {row.runs} run{'s' if row.runs != 1 else ''}, "
        f"cpu {fmt_s(row.cpu_median)}, {max(row.rss_mb):.0f} MB, "
        f"others busy {row.busy:.0%})",
        flush=True,
    )
    return row


def child_env() -> dict[str, str]:
    """The environment of every measured process."""
    # Python keeps compiled bytecode (__pycache__) as it does for any installed package; a
    # PYTHONDONTWRITEBYTECODE=1 in the caller's environment (some sandboxes set it) would make
    # every cold process recompile paddlegen's sources, ~40 ms no user pays.
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("PADDLEGEN_KUBECONFORM", "PYTHONDONTWRITEBYTECODE")
    }


def measure_pair(a: Row, argv_a: list[str], b: Row, argv_b: list[str], **kw) -> tuple[Row, Row]:
    """Two cold commands in interleaved runs (a b, b a, ...), for the ratio of their CPU
    times: what slows the machine down during a pair weighs on both."""
    a.busy = b.busy = wait_for_quiet()
    for run in range(a.runs):
        order = [(a, argv_a), (b, argv_b)]
        for row, argv in order if run % 2 == 0 else reversed(order):
            elapsed, rss, used = run_once(argv, **kw)
            row.times.append(elapsed)
            row.rss_mb.append(rss)
            row.cpu.append(used)
    for row in (a, b):
        print(
            f"  {row.label:<58} {fmt_s(row.median):>9}  (cpu {fmt_s(row.cpu_median)}, "
            f"{row.runs} runs interleaved, others busy {row.busy:.0%})",
            flush=True,
        )
    print(f"  {'CPU ratio':<58} {a.cpu_median / b.cpu_median:>8.2f}x", flush=True)
    return a, b


def measure_plugin(
    pg: str, specs: list[Path], work: Path, log: Path, env: dict[str, str], runs: int
) -> Row:
    """The Argo CD plugin's generate, per Application, as the sidecar runs it: its command
    (`sh -c`, from the plugin.yaml paddlegen writes) in each Application's folder of one spec,
    with the environment `paddlegen serve` gives argocd-cmp-server. The renderer starts before
    the row, untimed; its start is in the row's note. CPU is the client's alone (the worker
    that renders is the renderer's child, not the client's)."""
    from paddlegen.gitops.argocd_files import CMP_FILE
    from paddlegen.gitops.argocd_sidecar import cmp_plugin
    from paddlegen.gitops.plugin_client import CLIENT_VARIABLE, PYTHON_VARIABLE, SOCKET_VARIABLE
    from paddlegen.gitops.plugin_client import __file__ as client_file
    from paddlegen.yamlio import load_all

    (plugin,) = [d for d in load_all(cmp_plugin()[CMP_FILE]) if d]
    generate = plugin["spec"]["generate"]["command"][2]
    apps = []
    for spec in specs:  # an Application's source path: a folder holding its spec
        app = work / "plugin-apps" / spec.stem
        app.mkdir(parents=True, exist_ok=True)
        shutil.copy(spec, app / spec.name)
        apps.append(app)
    socket_path = work / "renderer.sock"
    served = {
        **env,
        SOCKET_VARIABLE: str(socket_path),
        CLIENT_VARIABLE: client_file,
        PYTHON_VARIABLE: interpreter_of(pg),
    }
    started = time.perf_counter()
    renderer = subprocess.Popen(
        [pg, "serve", "--socket", str(socket_path)], env=env, stderr=subprocess.DEVNULL
    )
    try:
        while not socket_path.exists():  # bound once paddlegen is loaded
            if renderer.poll() is not None or time.perf_counter() - started > 120:
                raise Failed(f"paddlegen serve did not listen at {socket_path}")
            time.sleep(0.01)
        ready = time.perf_counter() - started
        row = measure(
            Row("plugin-per-app", "Argo CD plugin generate, per Application", len(apps), runs),
            [["sh", "-c", f"cd {shlex.quote(str(app))} && {generate}"] for app in apps],
            log=log,
            env=served,
        )
    finally:
        renderer.kill()
        renderer.wait()
    row.note = f"the renderer's start, outside the row: {ready:.2f} s"
    print(f"  {row.note}", flush=True)
    return row


def interpreter_of(script: str) -> str:
    """The Python a console script runs on (its shebang), for floors measured on the same."""
    with open(script, "rb") as fh:
        first = fh.readline().decode(errors="replace")
    python = first[2:].strip() if first.startswith("#!") else ""
    return python if python and os.path.exists(python) else sys.executable


def fresh(path: Path, trash: Path):
    """A ``setup`` for ``measure`` that moves ``path`` aside into ``trash`` before each run."""

    def setup(_run: int) -> None:
        # Moved aside, deleted only at the end: ext4 skips inodes freed in the last 60-300 s
        # when it allocates new ones (recently_deleted), so deleting thousands of files just
        # before a timed run makes every file that run creates several times dearer.
        if path.exists():
            path.rename(trash / f"{len(list(trash.iterdir()))}")

    return setup


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def machine() -> dict[str, object]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "cpu_model": model,
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_before": os.getloadavg()[0],
    }


def tool_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        text = (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "absent"
    if text in ("development", "(devel)") and shutil.which("go"):
        # `go install`ed binaries print no version; the module version is in the build info.
        info = subprocess.run(
            ["go", "version", "-m", shutil.which(argv[0]) or argv[0]],
            capture_output=True,
            text=True,
        )
        for line in info.stdout.splitlines():
            parts = line.split()
            if parts[:1] == ["mod"] and len(parts) >= 3:
                return parts[2]
    return text


def find_paddlegen() -> str:
    # The console script next to this interpreter: a pyenv/asdf shim in front of it would add a
    # shell start-up (~50 ms) that is not paddlegen's.
    local = Path(sys.executable).parent / "paddlegen"
    found = str(local) if local.exists() else shutil.which("paddlegen")
    if not found:
        raise SystemExit("paddlegen is not installed (pip install -e .)")
    return found


def find_helm(install: bool) -> tuple[str | None, str]:
    for candidate in (TOOLS_BIN / "helm", shutil.which("helm")):
        if candidate and Path(candidate).exists():
            return str(candidate), ""
    if not install:
        return None, "helm not found and --no-install-helm given"
    if not shutil.which("go"):
        return None, "helm not found and no Go toolchain to build it"
    print(f"installing helm {HELM_VERSION} with go install into {TOOLS_BIN} ...", flush=True)
    TOOLS_BIN.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["go", "install", f"{HELM_MODULE}@{HELM_VERSION}"],
        env={**os.environ, "GOBIN": str(TOOLS_BIN)},
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return None, f"go install {HELM_MODULE}@{HELM_VERSION} failed: {proc.stderr[-300:]}"
    return str(TOOLS_BIN / "helm"), ""


def without_kubeconform(env: dict[str, str]) -> dict[str, str]:
    """The environment with every PATH entry that holds a kubeconform removed."""
    dirs = [
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "kubeconform").exists()
    ]
    out = {**env, "PATH": os.pathsep.join(dirs)}
    out.pop("PADDLEGEN_KUBECONFORM", None)
    return out


def kustomize_root(rendered: Path, root: Path) -> Path:
    """A kustomization outside the rendered tree that includes every job (its overlay if any)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:"]
    for job in sorted(p for p in rendered.iterdir() if p.is_dir()):
        target = job / "overlays" / "prod" if (job / "overlays").is_dir() else job
        lines.append(f"- {os.path.relpath(target, root)}")
    (root / "kustomization.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def helm_values(doc: dict) -> dict:
    """The chart's values for one peer spec (the same job paddlegen renders)."""
    spec = doc["spec"]
    volume = spec["volumes"][0]
    from paddlegen.spec.model import build_job  # the gang's summed requests, as paddlegen sums them
    from paddlegen.workloads import workload_of

    return {
        "name": doc["metadata"]["name"],
        "image": spec["image"],
        "command": spec["command"],
        "env": spec["env"],
        "resources": spec["resources"],
        "ps": spec["ps"],
        "worker": spec["worker"],
        "volume": {k: volume[k] for k in ("name", "mountPath", "nfs", "capacity", "accessModes")},
        "scheduling": {
            "queue": spec["scheduling"]["queue"],
            "minResources": build_job(doc, workload_of(doc)).min_resources,
        },
        "paddlejob": spec["paddlejob"],
    }


def runs_for(n: int, runs: int, budget: int) -> int:
    return max(1, min(runs, budget // max(n, 1)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="1,100,1000,5000", help="repository sizes N (default: %(default)s)"
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=5,
        help="runs per measure; the median is reported (default: %(default)s)",
    )
    parser.add_argument(
        "--spec-budget",
        type=int,
        default=3000,
        help="fewer runs for big N: runs(N) = max(1, min(runs, budget // N)) "
        "(default: %(default)s, so 3 runs at N=1000 and 1 at N=5000)",
    )
    parser.add_argument(
        "--peer-jobs",
        type=int,
        default=20,
        help="jobs rendered one process each for the per-job peers (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=7, help="synthetic repository seed")
    parser.add_argument(
        "--kustomize-max",
        type=int,
        default=100,
        help="largest N for `kustomize build` over the whole tree: it grows "
        "faster than linearly (default: %(default)s)",
    )
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each row, wait up to SECONDS for other processes to use "
        f"less than {IDLE_BELOW * 100:.0f}%% of the CPUs (default: do not wait)",
    )
    parser.add_argument(
        "--out",
        default=str(HERE / "results"),
        help="where results.md and results.json go (default: %(default)s)",
    )
    parser.add_argument("--work", help="scratch folder (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--no-peers", action="store_true", help="skip helm, kustomize, floor")
    parser.add_argument(
        "--no-install-helm", action="store_true", help="do not go install helm when it is missing"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    global WAIT_IDLE
    WAIT_IDLE = args.wait_idle

    pg = find_paddlegen()
    env = child_env()
    env_inproc = without_kubeconform(env)
    kustomize = shutil.which("kustomize")
    helm, helm_note = (
        (None, "skipped (--no-peers)") if args.no_peers else find_helm(not args.no_install_helm)
    )
    if not args.no_peers and helm is None:
        print(f"helm: skipped: {helm_note}", flush=True)

    info = machine()
    info["versions"] = {
        "paddlegen": tool_version([pg, "--version"]),
        "kubeconform": tool_version(["kubeconform", "-v"]),
        "kustomize": tool_version(["kustomize", "version"]) if kustomize else "absent",
        "helm": tool_version([helm, "version", "--short"]) if helm else "absent",
        "libyaml": _libyaml(),
    }
    print(
        f"machine: {info['cores']} cores ({info['usable_cores']} usable), {info['cpu_model']}, "
        f"{info['memory']}, Python {info['python']}",
        flush=True,
    )
    print(f"tools: {info['versions']}", flush=True)

    work = Path(args.work or tempfile.mkdtemp(prefix="paddlegen-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "last.log"
    rows: list[Row] = []
    started = time.perf_counter()

    trash = work / "trash"
    trash.mkdir(exist_ok=True)

    try:
        print("constant-size measures:", flush=True)
        python = interpreter_of(pg)
        # The cold path, each against its floor in the same interleaved runs: `--version`
        # at most 2x the interpreter alone; one spec through `render --stdout` (what an Argo CD
        # plugin runs, once per Application per refresh) at most 1x importing the libraries.
        rows += measure_pair(
            Row("version", "paddlegen --version", 1, max(args.runs, 11)),
            [pg, "--version"],
            Row("python", "baseline: python -c pass (interpreter start)", 1, max(args.runs, 11)),
            [python, "-c", "pass"],
            log=log,
            env=env,
        )
        quickstart = str(ROOT / "examples" / "quickstart.yaml")
        rows += measure_pair(
            Row(
                "render-stdout-1",
                "render --stdout 1 spec (examples/quickstart.yaml)",
                1,
                max(args.runs, 11),
            ),
            [pg, "render", "--stdout", quickstart],
            Row(
                "import-floor",
                'floor: python -c "import jinja2, yaml, jsonschema, click"',
                1,
                max(args.runs, 11),
            ),
            [python, "-c", "import jinja2, yaml, jsonschema, click"],
            log=log,
            env=env,
        )
        # What the paddlegen-validate pre-commit hook does when a commit touches every example:
        # schema, checks and the rendered manifests (every environment), in process.
        examples = sorted(str(p) for p in (ROOT / "examples").glob("*.yaml"))
        rows.append(
            measure(
                Row(
                    "hook-validate-examples",
                    "validate the example specs (pre-commit hook)",
                    len(examples),
                    args.runs,
                ),
                [pg, "validate", *examples],
                log=log,
                env=env,
            )
        )
        one = synth.write_repo(work / "one", 1, args.seed, synth.one_spec)[0]
        out1 = work / "out-one"
        rows.append(
            measure(
                Row("render-1-spec", "render 1 spec (empty dir, all files written)", 1, args.runs),
                [pg, "render", str(one), "-o", str(out1)],
                setup=fresh(out1, trash),
                log=log,
                env=env,
            )
        )

        for n in sizes:
            runs = runs_for(n, args.runs, args.spec_budget)
            repo = work / f"repo-{n}"
            out = work / f"out-{n}"
            t0 = time.perf_counter()
            synth.write_repo(repo, n, args.seed)
            print(
                f"N={n} ({runs} run{'s' if runs != 1 else ''}; repository written in "
                f"{time.perf_counter() - t0:.1f} s):",
                flush=True,
            )
            render = [pg, "render", str(repo), "-o", str(out)]
            rows.append(
                measure(
                    Row(f"render-{n}", f"render {n} specs into an empty dir", n, runs),
                    render,
                    setup=fresh(out, trash),
                    log=log,
                    env=env,
                )
            )
            rows.append(
                measure(
                    Row(f"rerender-{n}", f"re-render {n} unchanged specs", n, runs),
                    render,
                    log=log,
                    env=env,
                )
            )
            rows.append(
                measure(
                    Row(f"check-{n}", f"check {n} unchanged specs", n, runs),
                    [pg, "check", str(repo), "-o", str(out)],
                    log=log,
                    env=env,
                )
            )
            rows.append(
                measure(
                    Row(
                        f"validate-kubeconform-{n}",
                        f"validate {n} jobs' manifests, kubeconform",
                        n,
                        runs,
                    ),
                    [pg, "validate", str(out)],
                    log=log,
                    env=env,
                )
            )
            rows.append(
                measure(
                    Row(
                        f"validate-inprocess-{n}",
                        f"validate {n} jobs' manifests, in-process fallback",
                        n,
                        runs,
                    ),
                    [pg, "validate", str(out)],
                    log=log,
                    env=env_inproc,
                )
            )
            if args.no_peers:
                continue
            floor_out = work / f"floor-{n}"
            rows.append(
                measure(
                    Row(f"floor-{n}", f"floor: bare jinja2 + PyYAML, {n} specs", n, runs),
                    [sys.executable, str(FLOOR), str(repo), str(floor_out)],
                    setup=fresh(floor_out, trash),
                    log=log,
                    env=env,
                )
            )
            if kustomize and n <= args.kustomize_max:
                kroot = kustomize_root(out, work / f"kustomize-{n}")
                rows.append(
                    measure(
                        Row(
                            f"kustomize-{n}",
                            f"kustomize build over the {n} rendered jobs",
                            n,
                            runs_for(n, args.runs, args.spec_budget // 3),
                        ),
                        [kustomize, "build", str(kroot), "-o", str(work / "kustomize.out.yaml")],
                        log=log,
                        env=env,
                    )
                )

        if not args.no_peers:
            k = args.peer_jobs
            print(
                f"peers, per job ({k} PaddleJob + PodGroup + PV + PVC jobs, one process each):",
                flush=True,
            )
            peer_specs = synth.write_repo(work / "peer", k, args.seed, synth.peer_spec)
            peer_out = work / "peer-out"
            rows.append(
                measure(
                    Row("pg-per-job", "paddlegen render, one process per job", k, args.runs),
                    [[pg, "render", str(p), "-o", str(peer_out)] for p in peer_specs],
                    setup=fresh(peer_out, trash),
                    log=log,
                    env=env,
                )
            )
            rows.append(
                measure(
                    Row(
                        "pg-batch-peer", f"paddlegen render, {k} jobs in one process", k, args.runs
                    ),
                    [pg, "render", str(work / "peer"), "-o", str(peer_out)],
                    setup=fresh(peer_out, trash),
                    log=log,
                    env=env,
                )
            )
            rows.append(measure_plugin(pg, peer_specs, work, log, env, args.runs))
            if helm:
                import yaml

                values = []
                for p in peer_specs:
                    doc = yaml.safe_load(p.read_text(encoding="utf-8"))
                    v = p.with_suffix(".values.yaml.txt")
                    v.write_text(yaml.safe_dump(helm_values(doc)), encoding="utf-8")
                    values.append((doc["metadata"]["name"], doc["metadata"]["namespace"], v))
                helm_out = work / "helm-out"
                helm_out.mkdir(exist_ok=True)
                rows.append(
                    measure(
                        Row("helm-per-job", "helm template, one process per job", k, args.runs),
                        [
                            [
                                helm,
                                "template",
                                name,
                                str(CHART),
                                "--namespace",
                                ns,
                                "-f",
                                str(v),
                                "--output-dir",
                                str(helm_out / name),
                            ]
                            for name, ns, v in values
                        ],
                        setup=fresh(helm_out, trash),
                        log=log,
                        env=env,
                    )
                )
            if kustomize:
                rows.append(
                    measure(
                        Row(
                            "kustomize-per-job",
                            "kustomize build, one process per job",
                            k,
                            args.runs,
                        ),
                        [
                            [kustomize, "build", str(peer_out / d.name)]
                            for d in sorted(peer_out.iterdir())
                        ],
                        log=log,
                        env=env,
                    )
                )
        total = time.perf_counter() - started
        result = report(rows, info, sizes, args, helm_note, total)
        out_dir = Path(args.out)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "results.md").write_text(result["markdown"], encoding="utf-8")
        data = {k: v for k, v in result.items() if k != "markdown"}
        (out_dir / "results.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print()
        print(result["markdown"])
        print(
            f"wrote {out_dir / 'results.md'} and {out_dir / 'results.json'} "
            f"(benchmark took {total:.0f} s)",
            flush=True,
        )
        return 0
    except Failed as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep and not args.work:
            print(f"removing {work} ...", flush=True)  # slow where rmdir is (ext4 + discard)
            shutil.rmtree(work, ignore_errors=True)


def _libyaml() -> str:
    try:
        import yaml

        return f"PyYAML {yaml.__version__}, libyaml {'yes' if yaml.__with_libyaml__ else 'no'}"
    except ImportError:
        return "absent"


def report(
    rows: list[Row], info: dict, sizes: list[int], args, helm_note: str, total: float
) -> dict:
    by = {r.key: r for r in rows}
    lines = [
        "# paddlegen benchmark",
        "",
        f"Machine: {info['cores']} cores ({info['usable_cores']} usable), {info['cpu_model']}, "
        f"{info['memory']}; Python {info['python']}; {info['platform']}.",
        "Tools: " + "; ".join(f"{k} {v}" for k, v in info["versions"].items()) + ".",
        f"Command: `python benchmarks/bench.py --sizes {args.sizes} --runs {args.runs} "
        f"--spec-budget {args.spec_budget} --peer-jobs {args.peer_jobs} --seed {args.seed}` "
        f"({total:.0f} s in all).",
        "Every measure is a cold process (a new interpreter; OS file cache warm). Runs per row: "
        f"{args.runs}, fewer for big N (runs = max(1, min({args.runs}, {args.spec_budget} // N)))"
        "; the runs column says how many. Peak RSS is that of the largest process in the tree.",
        "",
        "Columns: wall time median and min - max; per job = median / N; CPU = median user + "
        "system time of the process tree; busy = CPU share other processes used just before "
        "the row (above 0 % the wall times are pessimistic; CPU time is the steadier figure).",
        "",
        "| measure | N | runs | median | min - max | per job | CPU | peak RSS | busy |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.label} | {r.n} | {r.runs} | {fmt_s(r.median)} | "
            f"{fmt_s(min(r.times))} - {fmt_s(max(r.times))} | "
            f"{r.per_job * 1000:.2f} ms | {fmt_s(r.cpu_median)} | "
            f"{max(r.rss_mb):.0f} MB | {r.busy:.0%} |"
        )
    skipped = [n for n in sizes if n > args.kustomize_max]
    if skipped and not args.no_peers:
        lines += [
            "",
            f"kustomize build over the whole tree is not run for N = "
            f"{', '.join(map(str, skipped))} (above --kustomize-max {args.kustomize_max}): "
            "its time grows faster than N.",
        ]
    if helm_note:
        lines += ["", f"helm: {helm_note}"]
    notes = [f"{r.label}: {r.note}." for r in rows if r.note]
    lines += ["", *notes] if notes else []

    ratios: list[tuple[str, float]] = []

    def ratio(label: str, a: str, b: str, per_job: bool = True, cpu: bool = False) -> None:
        if a in by and b in by:
            if cpu:
                x, y = by[a].cpu_median, by[b].cpu_median
            else:
                x, y = (by[a].per_job, by[b].per_job) if per_job else (by[a].median, by[b].median)
            ratios.append((label, x / y))

    ratio(
        "paddlegen --version / python -c pass, CPU (at most 2)",
        "version",
        "python",
        cpu=True,
    )
    ratio(
        "render --stdout 1 spec / import jinja2, yaml, jsonschema, click, CPU (at most 1)",
        "render-stdout-1",
        "import-floor",
        cpu=True,
    )
    ratio(
        "paddlegen per job (one process per job) / helm template per job",
        "pg-per-job",
        "helm-per-job",
    )
    ratio(
        "Argo CD plugin generate per Application (warm renderer) / helm template per job "
        "(target: at most 1)",
        "plugin-per-app",
        "helm-per-job",
    )
    ratio(
        f"paddlegen per job ({args.peer_jobs} peer jobs, one process) / helm template per job",
        "pg-batch-peer",
        "helm-per-job",
    )
    for n in sizes:
        ratio(
            f"paddlegen render per job at N={n} / helm template per job",
            f"render-{n}",
            "helm-per-job",
        )
    for n in sizes:
        ratio(f"paddlegen render / floor at N={n}", f"render-{n}", f"floor-{n}")
    for n in sizes:
        ratio(f"kustomize build / paddlegen render at N={n}", f"kustomize-{n}", f"render-{n}")
    ratio("kustomize build per job / helm template per job", "kustomize-per-job", "helm-per-job")
    for n in sizes:
        ratio(
            f"validate in-process / kubeconform at N={n}",
            f"validate-inprocess-{n}",
            f"validate-kubeconform-{n}",
        )
    big = [n for n in sizes if n > 1000]
    if 1000 in sizes and big:
        for what in (
            "render",
            "rerender",
            "check",
            "validate-kubeconform",
            "validate-inprocess",
            "floor",
            "kustomize",
        ):
            ratio(
                f"growth {what}: time({big[-1]}) / time(1000)",
                f"{what}-{big[-1]}",
                f"{what}-1000",
                per_job=False,
            )
            ratio(
                f"growth {what}: CPU time({big[-1]}) / CPU time(1000)",
                f"{what}-{big[-1]}",
                f"{what}-1000",
                cpu=True,
            )
    lines += ["", "| ratio | value |", "| --- | ---: |"]
    lines += [f"| {label} | {value:.2f} |" for label, value in ratios]

    targets = []

    def target(
        label: str, value: float | None, limit: float, unit: str, cpu: float | None = None
    ) -> None:
        if value is None:
            targets.append((label, None, limit, unit, "not measured", None))
        else:
            status = "met" if value <= limit else "NOT met"
            if cpu is not None and (cpu <= limit) != (value <= limit):
                status += f" (by CPU time: {'met' if cpu <= limit else 'NOT met'})"
            targets.append((label, value, limit, unit, status, cpu))

    def med(key: str) -> float | None:
        return by[key].median if key in by else None

    def cpu_of(key: str) -> float | None:
        return by[key].cpu_median if key in by else None

    for key, label in (
        ("version", "`paddlegen --version`, cold"),
        (
            "hook-validate-examples",
            "validate hook on the example specs (schema, checks, manifests)",
        ),
        ("render-1-spec", "render 1 spec, cold"),
        ("render-1000", "render 1,000 specs"),
        ("rerender-1000", "re-render 1,000 unchanged"),
        ("check-1000", "check 1,000 unchanged"),
        ("validate-kubeconform-1000", "validate 1,000 jobs, kubeconform"),
    ):
        cpu = cpu_of(key)
        if key == "render-1000" and cpu is not None:
            # This one uses every core (-j): its CPU time spreads over them.
            cpu /= info["usable_cores"] or 1
        target(label, med(key), TARGETS[key], "s", cpu)
    rss = [
        max(by[k].rss_mb)
        for k in ("render-1000", "rerender-1000", "check-1000", "validate-kubeconform-1000")
        if k in by
    ]
    target(
        "peak RSS, 1,000 specs (render/re-render/check/validate)",
        max(rss) if rss else None,
        TARGETS["rss-1000-mb"],
        "MB",
    )
    if big and 1000 in sizes:
        for what in ("render", "check"):
            a, b = med(f"{what}-{big[-1]}"), med(f"{what}-1000")
            ca, cb = cpu_of(f"{what}-{big[-1]}"), cpu_of(f"{what}-1000")
            target(
                f"growth {what} time({big[-1]})/time(1000)",
                a / b if a and b else None,
                TARGETS["growth-5000/1000"],
                "x",
                ca / cb if ca and cb else None,
            )
    if "helm-per-job" in by:
        for key, label in (("pg-per-job", "one process per job"), ("pg-batch-peer", "batch")):
            if key in by:
                target(
                    f"faster per job than helm template ({label}): paddlegen/helm",
                    by[key].per_job / by["helm-per-job"].per_job,
                    1.0,
                    "x",
                    by[key].cpu_median / by["helm-per-job"].cpu_median,
                )
    else:
        target("faster per job than helm template", None, 1.0, "x")
    lines += [
        "",
        "| target | measured | CPU time basis | limit | status |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    notes = [
        "",
        "CPU time basis: the row's CPU time (user + system of the process tree), the "
        "steadier figure on a busy machine; for render 1,000 (all cores by design) divided "
        "by the usable cores.",
    ]

    def show(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        return fmt_s(value) if unit == "s" else f"{value:.2f} {unit}"

    for label, value, limit, unit, status, cpu in targets:
        lim = fmt_s(limit) if unit == "s" else f"{limit:g} {unit}"
        lines.append(f"| {label} | {show(value, unit)} | {show(cpu, unit)} | {lim} | {status} |")
    lines += notes
    markdown = "\n".join(lines) + "\n"
    return {
        "machine": info,
        "command": sys.argv,
        "seconds": total,
        "rows": [
            {
                **asdict(r),
                "median": r.median,
                "min": min(r.times),
                "max": max(r.times),
                "per_job": r.per_job,
                "cpu_median": r.cpu_median,
                "peak_rss_mb": max(r.rss_mb),
            }
            for r in rows
        ],
        "ratios": dict(ratios),
        "targets": [
            {
                "target": t[0],
                "value": t[1],
                "limit": t[2],
                "unit": t[3],
                "status": t[4],
                "cpu_basis": t[5],
            }
            for t in targets
        ],
        "markdown": markdown,
    }


if __name__ == "__main__":
    raise SystemExit(main())
