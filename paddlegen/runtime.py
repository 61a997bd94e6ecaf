"""Helpers for training code inside the pods: who am I, how many of us, my share of the data.

Only the standard library (and paddlegen.errors) is imported, so a runtime image needs just
``pip install --no-deps paddlegen``, not the renderer's dependencies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from paddlegen.errors import PaddlegenError

# Where each workload puts the trainer's index and the trainer count, most specific first:
# TRAINER_ID/TRAINERS are the old Python SDK's names (paddlegen.sdk sets them where it can), the
# PaddleFlow operator and paddle.distributed.launch set PADDLE_*, an Indexed batch Job sets
# JOB_COMPLETION_INDEX, and the distributed-job image gets the trainer count as
# CONF_PADDLE_GRADIENT_NUM.
TRAINER_ID_VARS = ("TRAINER_ID", "PADDLE_TRAINER_ID", "JOB_COMPLETION_INDEX")
TRAINERS_VARS = ("TRAINERS", "PADDLE_TRAINERS_NUM", "CONF_PADDLE_GRADIENT_NUM")


class TrainerEnvError(PaddlegenError):
    """The pod's environment does not say which trainer this is, or how many there are."""


def _first_int(names: tuple[str, ...], env: Mapping[str, str] | None) -> int:
    env = os.environ if env is None else env
    for name in names:
        raw = env.get(name, "").strip()
        if not raw:
            continue  # an empty value (a ps pod's unset PADDLE_TRAINER_ID) says nothing
        try:
            return int(raw)
        except ValueError:
            raise TrainerEnvError(f"{name}={raw!r} is not an integer") from None
    raise TrainerEnvError(
        f"none of {', '.join(names)} is set: this process does not run as "
        "a trainer of a workload that provides it (see paddlegen's "
        "docs/python-api.md#paddlegenruntime-helpers-for-training-code)"
    )


def trainer_id(env: Mapping[str, str] | None = None) -> int:
    """This trainer's index, 0 .. trainers() - 1."""
    return _first_int(TRAINER_ID_VARS, env)


def trainers(env: Mapping[str, str] | None = None) -> int:
    """The number of trainers of the job."""
    count = _first_int(TRAINERS_VARS, env)
    if count < 1:
        raise TrainerEnvError(f"the trainer count is {count}; it must be at least 1")
    return count


# dist_reader keeps the old SDK's parameter names, which hide the functions above inside it.
_env_trainer_id = trainer_id
_env_trainers = trainers


def _ints(line: str) -> tuple[Any, ...]:
    """The old SDK's line format: comma-separated integers."""
    return tuple(int(cell) for cell in line.split(","))


def dist_reader(
    filename: str,
    trainers: int | None = None,
    trainer_id: int | None = None,
    parse: Callable[[str], tuple[Any, ...]] = _ints,
) -> Callable[[], Iterator[Any]]:
    """A reader creator yielding this trainer's share of the lines of ``filename``.

    Line ``cnt`` (counted from 1, as in the old SDK) belongs to the trainer with
    ``cnt % trainers == trainer_id``, so every line goes to exactly one trainer. The count
    and index default to the pod's environment, read when the reader is created.
    """
    count = _env_trainers() if trainers is None else trainers
    index = _env_trainer_id() if trainer_id is None else trainer_id
    if not 0 <= index < count:
        raise TrainerEnvError(f"trainer id {index} is outside 0..{count - 1}")

    def dist_reader_creator() -> Iterator[Any]:
        with open(filename, encoding="utf-8") as lines:
            for cnt, line in enumerate(lines, start=1):
                if cnt % count == index:
                    yield parse(line)

    return dist_reader_creator


def dataset_from_reader(filename: str, reader: Callable[[], Iterable[Iterable[Any]]]) -> None:
    """Write every sample of ``reader`` as one comma-separated line, the format dist_reader
    reads (the old SDK's data-preparation step)."""
    with open(filename, "w", encoding="utf-8") as out:
        for sample in reader():
            out.write(",".join(str(cell) for cell in sample))
            out.write("\n")
