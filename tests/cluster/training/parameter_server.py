"""Linear regression on parameter servers (Paddle 2.6, static graph, fleet, GEO mode): each
worker trains on its shard of one synthetic data set and every 5 steps sends what it learned to
the servers and takes the merged parameters back. Workers print `rank R/W step S loss L` and
`rank R/W parameters V,V,...`: close on every rank.

GEO because Paddle 2.6's parameter-server runtime makes no communicator for the other modes
(paddle/distributed/ps/the_one_ps.py, _init_worker): with `Executor.run` the synchronous mode
crashes in its send_barrier op and the asynchronous one never pulls the parameters back.

A server runs until a worker stops it, and a PaddleJob completes only when every replica
succeeded: the first worker stops the servers once every worker has sent its last update (a
barrier, which needs Gloo: withGloo 1). A worker waits for the servers before it initialises:
init_worker pushes the initial parameters before its own wait for them."""

import numpy as np
import paddle
import paddle.distributed.fleet as fleet
from paddle.distributed.fleet.base.private_helper_function import wait_server_ready

paddle.enable_static()
fleet.init()
x = paddle.static.data("x", [None, 4], "float32")
y = paddle.static.data("y", [None, 1], "float32")
prediction = paddle.static.nn.fc(x, 1, name="linear")
loss = paddle.mean(paddle.square(prediction - y))
strategy = fleet.DistributedStrategy()
strategy.a_sync = True
strategy.a_sync_configs = {"k_steps": 5}  # GEO
optimizer = fleet.distributed_optimizer(paddle.optimizer.SGD(learning_rate=0.2), strategy)
optimizer.minimize(loss)

if fleet.is_server():
    fleet.init_server()
    fleet.run_server()  # until the first worker stops the servers
else:
    rank, world = fleet.worker_index(), fleet.worker_num()
    rng = np.random.default_rng(0)
    xs = rng.random((512, 4), dtype="float32")
    ys = xs @ np.array([[1.5], [-2.0], [0.5], [3.0]], "float32") + 0.25
    feed = {"x": xs[rank::world], "y": ys[rank::world]}
    executor = paddle.static.Executor(paddle.CPUPlace())
    executor.run(paddle.static.default_startup_program())
    wait_server_ready(fleet.server_endpoints(to_string=False))
    fleet.init_worker()
    for step in range(300):
        (value,) = executor.run(feed=feed, fetch_list=[loss])
        if step % 50 == 0 or step == 299:
            print(f"rank {rank}/{world} step {step} loss {float(value):.6f}")
    fleet.stop_worker()  # sends the last update
    scope = paddle.static.global_scope()
    names = sorted(p.name for p in paddle.static.default_main_program().all_parameters())
    learned = np.concatenate([np.array(scope.find_var(n).get_tensor()).ravel() for n in names])
    print(f"rank {rank}/{world} parameters {','.join(f'{v:.6f}' for v in learned)}")
    fleet.barrier_worker()
    if fleet.is_first_worker():
        paddle.base.core.DistFleetWrapper().stop_server()  # the fleet's one instance
