#!/usr/bin/env python3
"""Two paddlegen installations on the same synthetic repositories, row by row, interleaved
(base, head, head, base, ...): the CPU time of each cold process and the ratio head/base
within each pair, so that a slow minute of a shared machine weighs on both sides alike.

    python benchmarks/compare.py --base ../base-checkout --head . [--pairs 10]
        [--sizes 1,100,1000] [--leave-out efs]

--base and --head each name a checkout with its own virtualenv (its `.venv/bin/paddlegen`
runs) or a `paddlegen` executable. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import synth  # noqa: E402

VALIDATE_ROWS = ("validate-kubeconform", "validate-inprocess")
LIMIT = 1.05  # no render, check or validate row more than 5% slower


@dataclass(frozen=True)
class Side:
    name: str  # base or head
    paddlegen: str  # the console script
    python: str  # the interpreter of its virtualenv, for the control row
    revision: str  # the checkout's commit (+ "dirty"), or the executable's path


@dataclass
class Pair:
    base_cpu: float
    head_cpu: float
    base_wall: float
    head_wall: float
    head_first: bool

    @property
    def ratio(self) -> float:
        return self.head_cpu / self.base_cpu


@dataclass
class Row:
    key: str
    label: str
    n: int
    pairs: list[Pair] = field(default_factory=list)
    busy: float = 0.0  # share of the CPUs other processes used just before the row

    def median(self, what: str) -> float:
        return statistics.median(getattr(p, what) for p in self.pairs)

    @property
    def ratios(self) -> list[float]:
        return sorted(p.ratio for p in self.pairs)

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def quartiles(self) -> tuple[float, float]:
        r = self.ratios
        if len(r) < 2:
            return r[0], r[0]
        q = statistics.quantiles(r, n=4, method="inclusive")
        return q[0], q[2]


def side(name: str, where: str) -> Side:
    path = Path(where).resolve()
    if path.is_dir():
        pg = path / ".venv" / "bin" / "paddlegen"
        if not pg.exists():
            raise SystemExit(
                f"--{name} {where}: no .venv/bin/paddlegen in that checkout (make its virtualenv: "
                "benchmarks/README.md)"
            )
        return Side(name, str(pg), str(pg.parent / "python"), _revision(path))
    if not path.exists():
        raise SystemExit(f"--{name} {where}: neither a checkout nor a paddlegen executable")
    python = path.parent / "python"
    return Side(name, str(path), str(python if python.exists() else sys.executable), str(path))


def _revision(checkout: Path) -> str:
    def git(*argv: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(checkout), *argv], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or str(checkout)  # not a git checkout
    return commit + (" (dirty)" if git("status", "--porcelain", "--untracked-files=no") else "")


def measure(
    row: Row,
    base: Side,
    head: Side,
    argv_for: Callable[[Side], list[str]],
    *,
    pairs: int,
    log: Path,
    env: dict[str, str],
    setup: Callable[[Side], None] | None = None,
) -> Row:
    """``pairs`` pairs of runs, the order alternating (base-head, head-base, ...): a drift of
    the machine's speed during a row then favours neither side."""
    row.busy = bench.wait_for_quiet()
    for p in range(pairs):
        order = (base, head) if p % 2 == 0 else (head, base)
        got: dict[str, tuple[float, float]] = {}
        for s in order:
            if setup:
                setup(s)
            wall, _rss, cpu = bench.run_once(argv_for(s), log=log, env=env)
            got[s.name] = (cpu, wall)
        row.pairs.append(
            Pair(got["base"][0], got["head"][0], got["base"][1], got["head"][1], p % 2 == 1)
        )
    q1, q3 = row.quartiles
    print(
        f"  {row.label:<52} cpu base {bench.fmt_s(row.median('base_cpu')):>8}  "
        f"head {bench.fmt_s(row.median('head_cpu')):>8}  ratio {row.ratio:.3f} "
        f"(IQR {q1:.3f}-{q3:.3f}, {min(row.ratios):.3f}-{max(row.ratios):.3f}), "
        f"others busy {row.busy:.0%}",
        flush=True,
    )
    return row


def examples_valid_in_both(
    base: Side, head: Side, files: list[Path], env: dict[str, str]
) -> tuple[list[Path], list[Path]]:
    """The example specs both installations validate with exit 0 (untimed), and the rest: a
    spec one version refuses measures an error path, not the hook's work."""
    kept, dropped = [], []
    for f in files:
        ok = all(
            subprocess.run(
                [s.paddlegen, "validate", str(f)], capture_output=True, env=env, check=False
            ).returncode
            == 0
            for s in (base, head)
        )
        (kept if ok else dropped).append(f)
    return kept, dropped


def run(args: argparse.Namespace) -> int:
    base, head = side("base", args.base), side("head", args.head)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    try:
        sources = synth.leaving_out(args.leave_out)
        one = functools.partial(synth.one_spec, sources=sources)
    except ValueError as exc:
        raise SystemExit(f"--leave-out: {exc}") from None
    bench.WAIT_IDLE = args.wait_idle
    env = bench.child_env()
    env_inproc = bench.without_kubeconform(env)
    work = Path(args.work or tempfile.mkdtemp(prefix="paddlegen-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    trash = work / "trash"
    trash.mkdir(exist_ok=True)
    log = work / "last.log"
    rows: list[Row] = []
    started = time.perf_counter()
    print(f"base: {base.paddlegen} ({base.revision})\nhead: {head.paddlegen} ({head.revision})")
    print(f"pairs per row: {args.pairs}; volume sources: {', '.join(sources)}", flush=True)

    def wanted(key: str) -> bool:
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in args.rows.split(","))

    def row(key: str, label: str, n: int, argv_for, **kw) -> None:
        if not wanted(key):
            return
        kw.setdefault("env", env)
        rows.append(
            measure(Row(key, label, n), base, head, argv_for, pairs=args.pairs, log=log, **kw)
        )

    def out_of(s: Side, name: str) -> Path:
        return work / s.name / name

    def fresh(name: str) -> Callable[[Side], None]:
        # bench.fresh: the previous output renamed aside, deleted only at the end (ext4).
        return lambda s: bench.fresh(out_of(s, name), trash)(0)

    try:
        spec1 = synth.write_repo(work / "one", 1, args.seed, one)[0]
        make = functools.partial(synth.make_spec, sources=sources)
        every_workload = work / "warm-up"
        synth.write_repo(every_workload, len(synth.WORKLOADS), args.seed, make)
        for s in (base, head):
            # Untimed: a checkout's first run compiles its modules (__pycache__) and each
            # workload's templates (paddlegen's bytecode cache, named after its code), which
            # later runs only load.
            warm = out_of(s, "warm-up")
            argv = [s.paddlegen, "render", str(every_workload), "-o", str(warm)]
            bench.run_once(argv, log=log, env=env)
            for with_env in (env, env_inproc):
                bench.run_once([s.paddlegen, "validate", str(warm)], log=log, env=with_env)
        examples, dropped = [], []
        if wanted("hook-validate-examples"):
            examples, dropped = examples_valid_in_both(
                base,
                head,
                [Path(f) for f in args.examples or sorted(ROOT.glob("examples/*.yaml"))],
                env,
            )
        if dropped:
            print(f"examples one side refuses, left out: {', '.join(f.name for f in dropped)}")
        print("constant-size rows:", flush=True)
        row("python", "control: python -c pass (its venv's)", 1, lambda s: [s.python, "-c", "pass"])
        row("version", "paddlegen --version", 1, lambda s: [s.paddlegen, "--version"])
        row(
            "hook-validate-examples",
            f"validate the {len(examples)} example specs both accept",
            len(examples),
            lambda s: [s.paddlegen, "validate", *map(str, examples)],
        )
        row(
            "render-1-spec",
            "render 1 spec (empty dir)",
            1,
            lambda s: [s.paddlegen, "render", str(spec1), "-o", str(out_of(s, "out-one"))],
            setup=fresh("out-one"),
        )
        row(
            "render-stdout-1",
            "render --stdout 1 spec (as an Argo CD plugin)",
            1,
            lambda s: [s.paddlegen, "render", "--stdout", str(spec1)],
        )
        for n in sizes:
            reading = [f"{what}-{n}" for what in ("rerender", "check", *VALIDATE_ROWS)]
            if not any(map(wanted, [f"render-{n}", *reading])):
                continue
            repo = work / f"repo-{n}"
            synth.write_repo(repo, n, args.seed, make)
            print(f"N={n}:", flush=True)

            def render(s: Side, repo: Path = repo, n: int = n) -> list[str]:
                return [s.paddlegen, "render", str(repo), "-o", str(out_of(s, f"out-{n}"))]

            row(
                f"render-{n}",
                f"render {n} specs into an empty dir",
                n,
                render,
                setup=fresh(f"out-{n}"),
            )
            if not wanted(f"render-{n}") and any(map(wanted, reading)):
                # the rows below read its output: made untimed
                for s in (base, head):
                    bench.run_once(render(s), log=log, env=env)
            row(f"rerender-{n}", f"re-render {n} unchanged specs", n, render)
            row(
                f"check-{n}",
                f"check {n} unchanged specs",
                n,
                lambda s, repo=repo, n=n: [
                    s.paddlegen,
                    "check",
                    str(repo),
                    "-o",
                    str(out_of(s, f"out-{n}")),
                ],
            )

            def validate(s: Side, n: int = n) -> list[str]:
                return [s.paddlegen, "validate", str(out_of(s, f"out-{n}"))]

            row(
                f"validate-kubeconform-{n}",
                f"validate {n} jobs' manifests, kubeconform",
                n,
                validate,
            )
            row(
                f"validate-inprocess-{n}",
                f"validate {n} jobs' manifests, in-process",
                n,
                validate,
                env=env_inproc,
            )
    except bench.Failed as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        print(f"removing the moved-aside outputs in {trash} ...", flush=True)
        shutil.rmtree(trash, ignore_errors=True)
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - started
    markdown = table(rows, base, head, args, total)
    print()
    print(markdown)
    if args.json:
        data = {
            "base": asdict(base),
            "head": asdict(head),
            "command": sys.argv,
            "seconds": total,
            "machine": bench.machine(),
            "rows": [
                {**asdict(r), "ratio_median": r.ratio, "ratio_quartiles": r.quartiles} for r in rows
            ],
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def table(rows: list[Row], base: Side, head: Side, args: argparse.Namespace, total: float) -> str:
    lines = [
        f"base {base.revision}, head {head.revision}; {args.pairs} pairs per row, interleaved "
        f"(base-head, head-base, ...); volume sources without {', '.join(args.leave_out) or '-'}; "
        f"{total:.0f} s in all.",
        "CPU: median user + system time of the process and the children it waited for; ratio: "
        f"median of the pairs' head/base CPU, its interquartile range and min-max; within: "
        f"median ratio <= {LIMIT}.",
        "",
        "| row | N | CPU base | CPU head | ratio | IQR | min - max | within 5% | busy |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in rows:
        q1, q3 = r.quartiles
        lines.append(
            f"| {r.label} | {r.n} | {bench.fmt_s(r.median('base_cpu'))} | "
            f"{bench.fmt_s(r.median('head_cpu'))} | {r.ratio:.3f} | {q1:.3f} - {q3:.3f} | "
            f"{min(r.ratios):.3f} - {max(r.ratios):.3f} | "
            f"{'yes' if r.ratio <= LIMIT else 'NO'} | {r.busy:.0%} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", required=True, help="the older checkout or its paddlegen")
    parser.add_argument("--head", required=True, help="the newer checkout or its paddlegen")
    parser.add_argument(
        "--pairs", type=int, default=10, help="pairs of runs per row (default: %(default)s)"
    )
    parser.add_argument(
        "--sizes", default="1,100,1000", help="repository sizes N (default: %(default)s)"
    )
    parser.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="SOURCE",
        help=f"a volume source the synthetic specs do not use, repeatable (one of "
        f"{', '.join(synth.SOURCES)}): for versions that spell it differently",
    )
    parser.add_argument(
        "--examples",
        nargs="+",
        help="the specs of the validate-the-examples row (default: this checkout's "
        "examples/*.yaml); those either side refuses are left out",
    )
    parser.add_argument(
        "--rows",
        default="*",
        metavar="KEYS",
        help="the rows to measure, comma-separated keys or patterns (render-1-spec, render-100, "
        "rerender-*, check-*, validate-kubeconform-*, validate-inprocess-*, "
        "hook-validate-examples, version, python; default: all)",
    )
    parser.add_argument("--seed", type=int, default=7, help="synthetic repository seed")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each row, wait up to SECONDS for a quiet machine (as bench.py)",
    )
    parser.add_argument("--json", help="also write every pair's numbers to this file")
    parser.add_argument("--work", help="scratch folder (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
