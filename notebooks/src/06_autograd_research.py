# %% [markdown]
# # Autograd research with stateful Cells
#
# cellkit's transforms — `grad`, `vjp`, `jvp`, `jacfwd`, `jacrev`, `hvp`, `vmap`,
# `recompute`, hooks — accept functions and Cells that read Parameters through
# arguments, closures or globals, compose with each other and with `ms.jit`, and write
# back the Parameters they assign. This notebook uses them for five research staples,
# each checked against the same computation in raw JAX on the Cell's arrays:
#
# 1. per-example gradients (`vmap` of `grad` with `weights`);
# 2. Hessian-vector products with respect to the weights (forward over reverse);
# 3. gradient reversal through a backward hook;
# 4. a model ensemble with `vmap` over a `CellList`;
# 5. the memory `recompute` saves;
# 6. a physics-informed network whose loss needs a 4th derivative, by Taylor mode
#    (`ops.derivative`) and by nested `grad`.

# %%
import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn, ops

ms.set_seed(0)
rng = np.random.default_rng(0)
x = ms.Tensor(rng.standard_normal((8, 4)), ms.float32)
y = ms.Tensor(rng.standard_normal((8, 1)), ms.float32)

def report(name, got, want, rtol=1e-5, atol=1e-6):
    err = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(got, want))
    print(f"{name}: max |difference| = {err:.1e}")
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)

# %% [markdown]
# ## 1. Per-example gradients
#
# `ms.grad(loss, None, weights)` differentiates with respect to the Parameters; `ops.vmap`
# maps it over the batch, so each example gets its own gradient (for differential privacy,
# influence functions, gradient-noise statistics). The network is closed over: `vmap`
# binds nothing for it and the gradient transform finds its Parameters.

# %%
net = nn.SequentialCell([nn.Dense(4, 16), nn.Tanh(), nn.Dense(16, 1)])
params = net.trainable_params()

def loss(x, y):
    return ((net(x) - y) ** 2).mean()

per_example = ms.jit(ops.vmap(ms.grad(loss, None, params)))
grads = per_example(x[:, None], y[:, None])
print([tuple(g.shape) for g in grads])

# raw JAX: the same MLP written on the Cell's arrays
w1, b1, w2, b2 = (p.value for p in params)
def raw_loss(ws, x, y):
    w1, b1, w2, b2 = ws
    return ((jnp.tanh(x @ w1.T + b1) @ w2.T + b2 - y) ** 2).mean()

raw = jax.vmap(jax.grad(raw_loss), (None, 0, 0))([w1, b1, w2, b2], x[:, None], y[:, None])
report("per-example gradients", grads, raw)
print("per-example gradient norms:", np.round([float(jnp.linalg.norm(g)) for g in grads[0]], 3))

# %% [markdown]
# ## 2. Hessian-vector products
#
# `ops.hvp(fn, inputs, v, weights=...)` is forward-mode differentiation (`jvp`) of the
# reverse-mode gradient: `H v` at the cost of about two gradients, without building `H`.
# Used for curvature (the top eigenvalue by power iteration below), Newton-CG and
# sharpness measures.

# %%
def full_loss():
    return loss(x, y)

v = [jnp.ones_like(p.value) for p in params]
hv = ops.hvp(lambda: full_loss(), (), v, weights=params)
raw_hv = jax.jvp(jax.grad(lambda ws: raw_loss(ws, x, y)), ([w1, b1, w2, b2],), (v,))[1]
report("Hessian-vector product", hv, raw_hv, rtol=1e-4)

# The top Hessian eigenvalue by power iteration, each step one compiled HVP
hvp_step = ms.jit(lambda v: ops.hvp(lambda: full_loss(), (), v, weights=params))
vec = [jnp.asarray(rng.standard_normal(p.shape), jnp.float32) for p in params]
for _ in range(30):
    hv = hvp_step(vec)
    norm = jnp.sqrt(sum((h ** 2).sum() for h in hv))
    vec = [h / norm for h in hv]
print(f"top Hessian eigenvalue ~ {float(norm):.4f} (one compilation: {hvp_step.trace_count})")
flat = jnp.concatenate([p.value.ravel() for p in params])
sizes = [p.value.size for p in params]
def raw_flat(f):
    parts, i = [], 0
    for p, n in zip(params, sizes):
        parts.append(f[i:i + n].reshape(p.shape)); i += n
    return raw_loss(parts, x, y)
eig = np.linalg.eigvalsh(np.asarray(jax.hessian(raw_flat)(flat)))
print(f"largest |eigenvalue| of the full Hessian (raw JAX): {np.max(np.abs(eig)):.4f}")
assert abs(float(norm) - np.max(np.abs(eig))) < 1e-2 * np.max(np.abs(eig))

# %% [markdown]
# ## 3. Gradient reversal through a hook
#
# Domain-adversarial training puts a gradient-reversal layer between a feature extractor
# and a domain classifier: the identity forward, `-λ ·` gradient backward. With cellkit
# that is a backward hook on the classifier, `hook_fn(cell, grad_input, grad_output)`
# returning the new `grad_input` (MindSpore 2.x's `register_backward_hook`). Removing the
# handle restores the plain gradient; `ms.jit` recompiles when hooks change.

# %%
features = nn.Dense(4, 8)
domain = nn.Dense(8, 1)
lam = 0.5

def domain_loss(x):
    return (domain(jnp.tanh(features(x))) ** 2).mean()

step = ms.jit(lambda x: ms.grad(domain_loss, None, features.trainable_params())(x))
plain = step(x)
handle = domain.register_backward_hook(lambda cell, grad_input, grad_output: tuple(-lam * g for g in grad_input))
reversed_ = step(x)
report("reversed = -λ · plain", reversed_, [-lam * g for g in plain])
handle.remove()
report("after handle.remove()", step(x), plain)
print("compilations:", step.trace_count)

# %% [markdown]
# ## 4. A model ensemble with `vmap`
#
# `ops.vmap` over an `nn.CellList` of copies of one Cell stacks their Parameters and runs
# them as one batched computation: one compiled program for the whole ensemble. With
# `in_axes=None` every member sees the same input. Below, 5 independently initialised
# MLPs, compared with calling each member in turn.

# %%
def make_member():
    return nn.SequentialCell([nn.Dense(4, 16), nn.Tanh(), nn.Dense(16, 1)])

members = nn.CellList([make_member() for _ in range(5)])
ensemble = ms.jit(lambda x: ops.vmap(members, in_axes=None)(x))
outs = ensemble(x)
print("ensemble output:", tuple(outs.shape))
report("ensemble vs one member at a time", list(outs), [m(x) for m in members])
mean, spread = outs.mean(0), outs.std(0)
print("prediction spread across members (first 4 examples):", np.round(np.asarray(spread[:4, 0]), 3))

# %% [markdown]
# ## 5. The memory `recompute` saves
#
# `Cell.recompute()` wraps a Cell in `jax.checkpoint`: its activations are recomputed in
# the backward pass instead of being stored. The forward pass then keeps only each
# block's input for the backward pass. `jax.vjp`'s backward function holds exactly what
# is kept (its *residuals*); we size them abstractly with `jax.eval_shape`, for a deep
# MLP with and without recompute, and check the gradients are equal.
#
# (`benchmarks/recompute.py` also reports XLA's temp bytes for a whole jitted train step.
# Those show the saving where XLA schedules each recomputation next to its use, as on
# GPU and TPU; XLA's CPU scheduler recomputes early, so on CPU they do not drop.)

# %%
class Block(nn.Cell):
    def __init__(self, width):
        super().__init__()
        self.a = nn.Dense(width, width)
        self.b = nn.Dense(width, width)

    def construct(self, h):
        return jnp.tanh(self.b(jnp.tanh(self.a(h))))

def deep(recompute):
    net = nn.SequentialCell([Block(64) for _ in range(8)])
    if recompute:
        for block in net:
            block.recompute()
    return net

batch = jnp.asarray(rng.standard_normal((512, 64)), jnp.float32)

def residual_bytes(net):
    def residuals(net):
        _, back = jax.vjp(lambda n: (n(batch) ** 2).mean(), net)
        return jax.tree_util.tree_leaves(back)
    return sum(int(np.prod(s.shape)) * s.dtype.itemsize for s in jax.eval_shape(residuals, net))

plain_net, remat_net = deep(False), deep(True)
for p, q in zip(plain_net.get_parameters(), remat_net.get_parameters()):
    q.set_data(p.value)  # the same weights in both
kept = {name: residual_bytes(n) for name, n in (("no recompute", plain_net), ("recompute", remat_net))}
for name, b in kept.items():
    print(f"{name:>13}: {b / 2**20:.2f} MiB kept for the backward pass")
print(f"ratio: {kept['recompute'] / kept['no recompute']:.2f}")
g_plain = ms.grad(lambda x: (plain_net(x) ** 2).mean(), None, plain_net.trainable_params())(batch)
g_remat = ms.grad(lambda x: (remat_net(x) ** 2).mean(), None, remat_net.trainable_params())(batch)
report("gradients with recompute", g_remat, g_plain, rtol=1e-4, atol=1e-7)

# %% [markdown]
# ## 6. A PINN with a 4th derivative: Taylor mode against nested `grad`
#
# A simply supported beam under a uniform load bends as `u'''' = 1` on `[0, 1]`, with
# `u = u'' = 0` at both ends; the exact deflection is `x (1 - 2x² + x³) / 24`. A
# physics-informed network learns `u` by driving the residual to zero, so its loss needs
# the 4th derivative of the network with respect to its input, and training needs the
# gradient of that loss with respect to the Parameters.
#
# `ops.derivative(net, x, 4)` propagates a Taylor series through the network in one pass
# (`jax.experimental.jet` underneath, over the Cell's Parameters); four nested `ms.grad`
# calls differentiate the network four times over. Both give the same loss and the same
# Parameter gradients. We compare the compiled training step of each: time per call, the
# temporary memory XLA allocates for it, its floating-point work, and the number of
# operations in the program.

# %%
import time

class Beam(nn.Cell):
    def __init__(self, width=32):
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(1, width), nn.Tanh(), nn.Dense(width, width), nn.Tanh(),
                                       nn.Dense(width, 1)])

    def construct(self, x):
        return self.body(x)

beam = Beam()
ends = ms.Tensor([[0.], [1.]], ms.float32)

def taylor_loss(xs):
    _, d4 = ops.derivative(beam, xs, 4)          # u'''' at every collocation point
    u, d2 = ops.derivative(beam, ends, 2)        # u and u'' at the ends
    return ((d4 - 1) ** 2).mean() + (u ** 2).mean() + (d2 ** 2).mean()

def nth_derivative(n):
    f = lambda x: beam(x).sum()                  # each point's u depends on that point only
    for _ in range(n):
        f = ms.grad(f)
    return f

def nested_loss(xs):
    d4, d2, u = nth_derivative(4)(xs), nth_derivative(2)(ends), beam(ends)
    return ((d4 - 1) ** 2).mean() + (u ** 2).mean() + (d2 ** 2).mean()

weights = beam.trainable_params()
steps = {"ops.derivative": ms.jit(ms.value_and_grad(taylor_loss, None, weights)),
         "nested grad": ms.jit(ms.value_and_grad(nested_loss, None, weights))}
xs = ms.Tensor(np.linspace(0, 1, 1024)[:, None], ms.float32)
(l_t, g_t), (l_n, g_n) = (step(xs) for step in steps.values())
report("loss", [l_t], [l_n])
report("Parameter gradients", g_t, g_n, rtol=1e-4, atol=1e-6)

def per_call_ms(f, repeat=10):
    jax.block_until_ready(f(xs))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(f(xs))
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))

print(f"{'1024 points':>15} {'ms per step':>12} {'XLA temp MiB':>13} {'MFLOP':>7} {'HLO ops':>8}")
for name, step in steps.items():
    lowered = step.lower(xs)
    compiled = lowered.compile()
    temp = compiled.memory_analysis().temp_size_in_bytes / 2**20
    mflop = compiled.cost_analysis()["flops"] / 1e6
    n_ops = sum(" = stablehlo." in line for line in lowered.as_text().splitlines())
    print(f"{name:>15} {per_call_ms(step):12.2f} {temp:13.2f} {mflop:7.1f} {n_ops:8d}")

# %% [markdown]
# The timings are those of the machine that last ran this notebook. Taylor mode's cost
# grows with the order of the derivative; nested `grad`'s grows faster, so the gap
# widens with the order and the width of the network (on a handful of points either
# can be the quicker).
#
# Training on the Taylor-mode loss, with `nn.Adam` updating the Parameters inside the
# compiled step:

# %%
optimizer = nn.Adam(weights, learning_rate=5e-3)
train_grad = ms.value_and_grad(taylor_loss, None, optimizer.parameters)

@ms.jit
def train_step(xs):
    loss, grads = train_grad(xs)
    optimizer(grads)
    return loss

points = ms.Tensor(np.linspace(0, 1, 64)[:, None], ms.float32)
for i in range(501):
    loss = train_step(points)
    if i % 100 == 0:
        print(f"step {i:4d}: loss {float(loss):.2e}")

grid = np.linspace(0, 1, 101, dtype=np.float32)[:, None]
exact = grid * (1 - 2 * grid ** 2 + grid ** 3) / 24
error = np.abs(np.asarray(beam(ms.Tensor(grid))) - exact).max()
print(f"max |u - exact| = {error:.1e}  (max deflection {exact.max():.4f})")
assert error < 0.25 * exact.max()
