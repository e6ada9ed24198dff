# %% [markdown]
# # Cells are JAX pytrees
#
# A Cell flattens to the arrays of its Parameters; the class, the names, `requires_grad`,
# hyper-parameters and the train/predict phase are static structure. So plain JAX works on
# Cells directly: `jax.tree_util`, `jax.jit`, `jax.grad`, `jax.vmap`, optax and chex.
#
# Under plain `jax.*` transforms a Cell is a value, as any pytree is: a function returns
# a new Cell rather than mutating its argument. (`ms.jit` and `ms.value_and_grad` are the
# stateful layer that updates Parameters in place; notebook 03 uses them.)

# %%
import chex
import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax

import cellkit as ms
from cellkit import nn

ms.set_seed(0)

class MLP(nn.Cell):
    def __init__(self, hidden=32):
        super().__init__()
        self.fc1 = nn.Dense(1, hidden, activation="tanh")
        self.fc2 = nn.Dense(hidden, hidden, activation="tanh")
        self.head = nn.Dense(hidden, 1)

    def construct(self, x):
        return self.head(self.fc2(self.fc1(x)))

net = MLP()
net

# %% [markdown]
# In Jupyter a Cell displays as a tree of sub-Cells with each Parameter's shape, dtype and
# size, and the number of values below each node. A Parameter has a short display too:

# %%
net.fc1.weight.init_data()

# %% [markdown]
# ## Flattening
#
# The leaves are the Parameters' arrays, with key paths that spell the attribute path:

# %%
leaves, treedef = jax.tree_util.tree_flatten(net)
print(len(leaves), "leaves,", sum(leaf.size for leaf in leaves), "values")
for path, leaf in jax.tree_util.tree_flatten_with_path(net)[0]:
    print(f"{jax.tree_util.keystr(path):20s} {str(leaf.shape):10s} {leaf.dtype}")

# %% [markdown]
# Unflattening with new leaves gives a Cell of the same class and names. `jax.tree.map`
# does both: here, a copy of `net` with every weight halved.

# %%
halved = jax.tree.map(lambda a: a / 2, net)
print(type(halved).__name__, halved.fc1.weight.name)
print(np.allclose(halved.head.weight.asnumpy(), net.head.weight.asnumpy() / 2))

# %% [markdown]
# ## `jax.jit`
#
# A Cell passed as an argument is traced like any pytree. The compiled function is reused
# when the values change; the new values are inputs, not constants baked in at the first
# call:

# %%
x = jnp.linspace(-3, 3, 128)[:, None]
y = jnp.sin(2 * x) + 0.1 * jnp.asarray(np.random.default_rng(0).normal(size=x.shape))

traces = []

@jax.jit
def mse(net, x, y):
    traces.append(type(net).__name__)   # runs only while JAX traces the function
    return jnp.mean((net(x) - y) ** 2)

print(f"loss: {float(mse(net, x, y)):.4f}")
print(f"with the halved weights: {float(mse(halved, x, y)):.4f}")
print("traced", len(traces), "time(s)")

# %% [markdown]
# ## `jax.grad`
#
# The gradient of a function of a Cell is a Cell-shaped tree: the same class and names,
# holding gradients.

# %%
grads = jax.grad(mse)(net, x, y)
print(type(grads).__name__, "|", grads.head.weight.name, grads.head.weight.shape)
grads

# %% [markdown]
# It agrees with cellkit's MindSpore-style `ms.grad` over the trainable Parameters
# (`chex.assert_trees_all_close` compares whole trees):

# %%
ms_grads = ms.grad(lambda x, y: jnp.mean((net(x) - y) ** 2), None, net.trainable_params())(x, y)
chex.assert_trees_all_close(tuple(jax.tree.leaves(grads)), ms_grads, rtol=1e-5, atol=1e-7)
print("jax.grad and ms.grad agree on", len(ms_grads), "Parameters")

# %% [markdown]
# ## `jax.vmap`
#
# **Per-example gradients**: map the gradient over the examples and not over the Cell
# (`in_axes=None`). Each leaf gets a leading batch axis.

# %%
def example_loss(net, xi, yi):
    return jnp.sum((net(xi[None]) - yi[None]) ** 2)

per_example = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(net, x, y)
print("per-example head.weight gradients:", per_example.head.weight.shape)
print("their mean equals the batch gradient:",
      np.allclose(per_example.head.weight.mean(0), grads.head.weight.value, atol=1e-6))

# %% [markdown]
# **An ensemble**: stack the leaves of five independently initialised MLPs into one Cell
# whose arrays have a leading axis of 5, and map over it.

# %%
members = [MLP() for _ in range(5)]
ensemble = jax.tree.map(lambda *leaves: jnp.stack(leaves), *members)
print("stacked fc1.weight:", ensemble.fc1.weight.shape)
predictions = jax.vmap(lambda net, x: net(x), in_axes=(0, None))(ensemble, x)
print("predictions:", predictions.shape)
np.testing.assert_allclose(predictions[2], members[2](x), rtol=1e-5, atol=1e-6)

# %% [markdown]
# ## Training with optax
#
# optax transformations take any pytree, so a Cell goes straight into `init`, `update`
# and `apply_updates`. The step is a pure function: it returns the new Cell and optimizer
# state. The ensemble trains at once by mapping the same step over it.

# %%
optimizer = optax.adam(1e-2)

@jax.jit
def train_step(net, opt_state, x, y):
    loss, grads = jax.value_and_grad(mse)(net, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, net)
    return optax.apply_updates(net, updates), opt_state, loss

opt_state = optimizer.init(net)
losses = []
for step in range(300):
    net, opt_state, loss = train_step(net, opt_state, x, y)
    losses.append(float(loss))
print(f"loss: {losses[0]:.3f} -> {losses[-1]:.4f}; net is now a new {type(net).__name__} Cell")

ensemble_step = jax.jit(jax.vmap(train_step, in_axes=(0, 0, None, None)))
ens_state = jax.vmap(optimizer.init)(ensemble)
for step in range(300):
    ensemble, ens_state, ens_loss = ensemble_step(ensemble, ens_state, x, y)
print("ensemble losses:", np.round(np.asarray(ens_loss), 4))

# %%
ens_pred = jax.vmap(lambda net, x: net(x), in_axes=(0, None))(ensemble, x)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
ax1.plot(losses)
ax1.set(yscale="log", xlabel="step", ylabel="MSE", title="optax.adam on a Cell")
ax2.scatter(x[:, 0], y[:, 0], s=6, color="grey", label="data")
ax2.plot(x[:, 0], net(x)[:, 0], label="trained MLP")
ax2.fill_between(x[:, 0], ens_pred.min(0)[:, 0], ens_pred.max(0)[:, 0], alpha=0.3, label="ensemble range")
ax2.legend(loc="lower left", fontsize=8)
ax2.set(title="fit of sin(2x)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The same step, both ways
#
# One step of plain SGD, once with optax on the pure layer and once with cellkit's
# stateful layer (`nn.SGD` inside an `ms.jit` step, updating the Parameters in place).
# `chex.assert_trees_all_close` compares the two resulting Cells leaf by leaf.

# %%
start = MLP()
pure = jax.tree.map(jnp.copy, start)   # an independent copy of the same values

sgd = optax.sgd(0.1)
g = jax.grad(mse)(pure, x, y)
updates, _ = sgd.update(g, sgd.init(pure))
pure = optax.apply_updates(pure, updates)

stateful = start
ms_sgd = nn.SGD(stateful.trainable_params(), learning_rate=0.1)
grad_fn = ms.grad(lambda x, y: mse(stateful, x, y), None, ms_sgd.parameters)

@ms.jit
def ms_step(x, y):
    ms_sgd(grad_fn(x, y))

ms_step(x, y)
chex.assert_trees_all_close(pure, stateful, rtol=1e-5, atol=1e-7)
print("optax and nn.SGD give the same Cell")
