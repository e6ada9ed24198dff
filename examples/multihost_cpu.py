"""Several hosts, simulated on one machine: 2 processes x 4 CPU devices vs 1 process x 8.

``python examples/multihost_cpu.py`` starts the worker below in 2 processes
that meet through ``jax.distributed.initialize`` (one 8-device mesh across
both), then in 1 process with 8 devices, and checks that all three print the
same losses. The worker is what each host of a real cluster runs (see
``docs/distributed.md``): the same program everywhere, the same seed, a mesh
over every device, and each process loading only its own part of the batch.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def worker(process_id: int, num_processes: int, port: int) -> None:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={8 // num_processes}"
    import jax

    if num_processes > 1:  # on a cluster: jax.distributed.initialize() with the scheduler's values
        jax.distributed.initialize(f"localhost:{port}", num_processes=num_processes, process_id=process_id)

    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    import cellkit as ms
    from cellkit import nn, ops, parallel

    class MLP(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(16, 32, weight_sharding=P("model", None), bias_sharding=P("model"))
            self.fc2 = nn.Dense(32, 8, weight_sharding=P(None, "model"))
            self.drop = nn.Dropout(p=0.1)

        def construct(self, x):
            return self.fc2(self.drop(ops.relu(self.fc1(x))))

    ms.set_seed(0)                                          # the same seed on every host
    mesh = parallel.make_mesh((2, 4), ("data", "model"))    # over all devices of all hosts
    with parallel.abstract():
        net = MLP()
    parallel.initialize(net, mesh)                          # each host makes its own shards
    net.set_train()

    weights = net.trainable_params()
    grad_fn = ms.value_and_grad(lambda x, y: ops.mean((net(x) - y) ** 2), None, weights)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        for p, g in zip(weights, grads):
            ops.assign(p, p - 0.1 * g)
        return loss

    rows = NamedSharding(mesh, P("data"))
    rng = np.random.default_rng(0)
    global_x = rng.normal(size=(16, 16)).astype(np.float32)  # a real loader reads only its part
    global_y = rng.normal(size=(16, 8)).astype(np.float32)
    per_host = len(global_x) // jax.process_count()
    mine = slice(jax.process_index() * per_host, (jax.process_index() + 1) * per_host)
    x = jax.make_array_from_process_local_data(rows, global_x[mine])
    y = jax.make_array_from_process_local_data(rows, global_y[mine])
    losses = [float(step(x, y)) for _ in range(3)]          # the loss is replicated: readable anywhere
    print(json.dumps({"process": jax.process_index(), "losses": losses}), flush=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _launch(num_processes: int, timeout: float = 300) -> list:
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XLA_FLAGS", None)
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(i), str(num_processes), str(port)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(num_processes)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        if p.returncode:
            raise RuntimeError(f"worker failed ({p.returncode}):\n{err[-3000:]}")
        results.append(json.loads(out.strip().splitlines()[-1])["losses"])
    return results


def main() -> dict:
    two_hosts = _launch(2)
    one_host = _launch(1)[0]
    print("2 processes x 4 devices:", two_hosts)
    print("1 process  x 8 devices:", one_host)
    assert two_hosts[0] == two_hosts[1], "the processes disagree"
    assert all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(two_hosts[0], one_host)), "2x4 and 1x8 differ"
    return {"two_processes": two_hosts, "one_process": one_host}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*map(int, sys.argv[2:5]))
    else:
        main()
