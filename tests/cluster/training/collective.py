"""Data-parallel linear regression (Paddle 3.x, collective): every rank fits its shard of one
synthetic data set (no download), gradients all-reduced by Paddle, so all ranks end with the
same parameters. The shard is `$DATA_DIR/part-<rank>.npy` when DATA_DIR is set (what the data
Job wrote, prepare_data.py), else rows of the same data made here. With HOLD_UNTIL (a path),
waits first until that file exists: a job that must still be running when a test preempts it,
and that trains at once when admitted again (the test creates the file then). With
EXIT_AT_STEP, every rank ends at that step with EXIT_CODE (a fault: 137 is what a rank the OOM
killer ends exits with). Prints `rank R/W step S loss L` and `rank R/W parameters V,V,...`."""

import os
import time

import numpy as np
import paddle
import paddle.distributed as dist

hold = os.environ.get("HOLD_UNTIL")
while hold and not os.path.exists(hold):
    time.sleep(0.2)
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
if "DATA_DIR" in os.environ:
    shard = np.load(f"{os.environ['DATA_DIR']}/part-{rank}.npy")
    x, y = shard[:, :4], shard[:, 4:]
    print(f"rank {rank}/{world} read {len(shard)} rows of {os.environ['DATA_DIR']}")
else:
    rng = np.random.default_rng(0)  # the same data on every rank; each takes its own rows
    x = rng.random((512, 4), dtype="float32")
    y = x @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32") + 0.25
    x, y = x[rank::world], y[rank::world]
inputs, targets = paddle.to_tensor(x), paddle.to_tensor(y)
paddle.seed(0)
model = paddle.DataParallel(paddle.nn.Linear(4, 1))  # broadcasts rank 0's initial parameters
sgd = paddle.optimizer.SGD(learning_rate=0.2, parameters=model.parameters())
exit_at = int(os.environ.get("EXIT_AT_STEP", "-1"))
for step in range(300):
    if step == exit_at:
        print(f"rank {rank}/{world} step {step} exits {os.environ['EXIT_CODE']}", flush=True)
        os._exit(int(os.environ["EXIT_CODE"]))
    loss = paddle.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    sgd.step()
    sgd.clear_grad()
    if step % 50 == 0 or step == 299:
        print(f"rank {rank}/{world} step {step} loss {float(loss):.6f}")
learned = np.concatenate([parameter.numpy().ravel() for parameter in model.parameters()])
print(f"rank {rank}/{world} parameters {','.join(f'{v:.6f}' for v in learned)}")
