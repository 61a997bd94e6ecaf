"""Data-parallel linear regression (training/collective.py's) that keeps a checkpoint with the
code docs/fault-tolerance.md shows (between the `checkpoint` marks below, word for word:
tests/docs/test_fault_tolerance_sample.py): every CHECKPOINT_EVERY steps rank 0 saves the
model and the optimizer in $PADDLE_CHECKPOINT_DIR, and at start every rank resumes from the
newest whole checkpoint. Full-batch SGD on fixed data: a resumed run ends with the weights of
an unfaulted one.

Faults: rank FAULT_RANK exits FAULT_CODE at step FAULT_STEP, on the attempts
(PADDLE_RESTART_ATTEMPT) FAULT_ATTEMPTS lists, comma-separated ("all": every one); FAULT_CODE
`hang` stops it there for ever instead, and the other ranks with it at their next all-reduce.
STEP_SECONDS slows each step (a test deletes a pod mid-run). Prints `rank R/W attempt A
resumed at step S`, then collective.py's lines."""

import os
import time

import numpy as np
import paddle
import paddle.distributed as dist

CHECKPOINT_EVERY = 20
STEPS = 300

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
attempt = os.environ.get("PADDLE_RESTART_ATTEMPT", "0")
rng = np.random.default_rng(0)  # the same data on every rank; each takes its own rows
x = rng.random((512, 4), dtype="float32")
y = x @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32") + 0.25
inputs, targets = paddle.to_tensor(x[rank::world]), paddle.to_tensor(y[rank::world])
paddle.seed(0)
model = paddle.DataParallel(paddle.nn.Linear(4, 1))
opt = paddle.optimizer.SGD(learning_rate=0.2, parameters=model.parameters())
attempts = os.environ.get("FAULT_ATTEMPTS", "")
faulty = attempts == "all" or attempt in attempts.split(",")
fault_step = int(os.environ.get("FAULT_STEP", "-1"))
fault_rank = int(os.environ.get("FAULT_RANK", "0"))


def train_one_step(step: int) -> None:
    if faulty and step == fault_step and rank == fault_rank:
        code = os.environ["FAULT_CODE"]
        print(f"rank {rank}/{world} step {step} {'hangs' if code == 'hang' else 'exits ' + code}",
              flush=True)  # fmt: skip
        while code == "hang":
            time.sleep(3600)
        os._exit(int(code))
    loss = paddle.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    opt.step()
    opt.clear_grad()
    if step % 50 == 0 or step == STEPS - 1:
        print(f"rank {rank}/{world} step {step} loss {float(loss):.6f}", flush=True)
    time.sleep(float(os.environ.get("STEP_SECONDS", "0")))


# checkpoint: begin
folder = os.environ["PADDLE_CHECKPOINT_DIR"]
latest = os.path.join(folder, "latest")  # names the newest whole checkpoint
start = 0
if os.path.exists(latest):  # every rank resumes from the same one
    with open(latest) as f:
        name = f.read().strip()
    state = paddle.load(os.path.join(folder, name))
    model.set_state_dict(state["model"])
    opt.set_state_dict(state["opt"])
    start = int(name.split("-")[1].split(".")[0])


def save(step):
    """The state before ``step``, then `latest` naming it, each renamed into place."""
    os.makedirs(folder, exist_ok=True)
    name = f"step-{step:06d}.pdparams"
    state = {"model": model.state_dict(), "opt": opt.state_dict()}
    paddle.save(state, os.path.join(folder, name + ".tmp"))
    os.replace(os.path.join(folder, name + ".tmp"), os.path.join(folder, name))
    with open(latest + ".tmp", "w") as f:
        f.write(name)
    os.replace(latest + ".tmp", latest)


print(f"rank {rank}/{world} attempt {attempt} resumed at step {start}", flush=True)
for step in range(start, STEPS):
    if step % CHECKPOINT_EVERY == 0 and step > start and dist.get_rank() == 0:
        save(step)
    train_one_step(step)
# checkpoint: end
learned = np.concatenate([parameter.numpy().ravel() for parameter in model.parameters()])
print(f"rank {rank}/{world} parameters {','.join(f'{v:.6f}' for v in learned)}")
