# %% [markdown]
# # Custom gradients with `bprop`
#
# A Cell with a `bprop(self, *inputs, out, dout)` method has a hand-written backward pass:
# `out` is the forward output, `dout` the gradient arriving at it, and `bprop` returns one
# gradient per input of `construct`. cellkit turns such a Cell into a `jax.custom_vjp`,
# so the custom gradient is used by `ms.grad`/`ms.value_and_grad`, inside `ms.jit`, and
# by plain `jax.grad`.
#
# Each example below checks its gradient against an independent reference: `jax.grad` of a
# formulation without custom gradients, or finite differences.

# %%
import jax
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads
import matplotlib.pyplot as plt

import cellkit as ms
from cellkit import nn, ops

ms.set_seed(0)
rng = np.random.default_rng(0)

def report(name, got, want):
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    print(f"{name}: max |difference| = {err:.2e}")
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)

# %% [markdown]
# ## A true gradient, computed better: softplus
#
# `softplus(x) = log(1 + eˣ)` has the gradient `sigmoid(x)`. Writing it by hand is exact
# for any `x` and saves the backward pass from differentiating `logaddexp`. Since this is
# the true gradient, finite differences must agree: `jax.test_util.check_grads` compares
# the reverse-mode gradient with numerical differences.

# %%
class Softplus(nn.Cell):
    def construct(self, x):
        return jnp.logaddexp(x, 0.0)

    def bprop(self, x, out, dout):
        return (dout * ops.sigmoid(x),)

softplus = Softplus()
x = ms.Tensor(np.linspace(-6, 6, 9), ms.float32)

check_grads(softplus, (x,), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)
print("finite differences agree")
report("ms.grad vs jax.grad(logaddexp)", ms.grad(lambda x: softplus(x).sum())(x),
       jax.grad(lambda x: jnp.logaddexp(x, 0.0).sum())(x))

# %% [markdown]
# ## The tutorial's Dropout2d
#
# `ops.Dropout2D` zeroes whole channels and returns `(output, mask)`. The backward pass
# masks the incoming gradient with the same mask and scales it by `1 / keep_prob`. The
# reference is `jax.grad` of `x * mask / keep_prob` with the mask the forward pass drew.

# %%
class Dropout2d(nn.Cell):
    def __init__(self, keep_prob):
        super().__init__()
        self.keep_prob = keep_prob
        self.dropout2d = ops.Dropout2D(keep_prob)

    def construct(self, x):
        return self.dropout2d(x)

    def bprop(self, x, out, dout):
        _, mask = out
        dy, _ = dout
        if self.keep_prob != 0:
            dy = dy * (1 / self.keep_prob)
        dy = mask.astype(ms.float32) * dy
        return (dy.astype(x.dtype), )

dropout_2d = Dropout2d(0.8)
x = ms.Tensor(rng.normal(size=(2, 6, 4, 4)), ms.float32)
upstream = ms.Tensor(rng.normal(size=(2, 6, 4, 4)), ms.float32)

def forward(x):
    out, mask = dropout_2d(x)
    return (out * upstream).sum(), mask

for label, fn in [("eager", ms.grad(forward, 0, has_aux=True)),
                  ("ms.jit", ms.jit(ms.grad(forward, 0, has_aux=True)))]:
    dx, (mask,) = fn(x)
    want = jax.grad(lambda x: (x * mask / 0.8 * upstream).sum())(x)
    report(f"Dropout2d ({label})", dx, want)
print("kept channels (batch × channel):\n", np.asarray(mask[:, :, 0, 0]).astype(int))

# %% [markdown]
# ## A straight-through estimator for quantisation
#
# Rounding has a zero gradient almost everywhere, so a network with rounded weights cannot
# learn through plain autodiff. The straight-through estimator rounds in the forward pass
# and passes the gradient through unchanged in the backward pass. `QuantDense` stores
# full-precision weights and uses them rounded to a grid of step 0.25.

# %%
class RoundSTE(nn.Cell):
    """Round to multiples of `step`; identity gradient."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def construct(self, x):
        return ops.round(x / self.step) * self.step

    def bprop(self, x, out, dout):
        return (dout,)


class QuantDense(nn.Cell):
    def __init__(self, in_channels, out_channels, step=0.25):
        super().__init__()
        self.dense = nn.Dense(in_channels, out_channels)
        self.quant = RoundSTE(step)

    def construct(self, x):
        return ops.matmul(x, self.quant(self.dense.weight).T) + self.dense.bias

qnet = QuantDense(3, 2)
qnet

# %% [markdown]
# The reference is the usual trick without a custom gradient,
# `w + stop_gradient(round(w) - w)`: the same forward value, the identity's gradient.

# %%
xb = ms.Tensor(rng.normal(size=(16, 3)), ms.float32)
yb = ms.Tensor(rng.normal(size=(16, 2)), ms.float32)

def loss_fn(x, y):
    return ((qnet(x) - y) ** 2).mean()

dw, db = ms.grad(loss_fn, None, qnet.trainable_params())(xb, yb)

def reference(w, b):
    wq = w + jax.lax.stop_gradient(jnp.round(w / 0.25) * 0.25 - w)
    return ((xb @ wq.T + b - yb) ** 2).mean()

ref_dw, ref_db = jax.grad(reference, argnums=(0, 1))(qnet.dense.weight.value, qnet.dense.bias.value)
report("STE weight gradient", dw, ref_dw)
report("STE bias gradient", db, ref_db)
print("plain autodiff through round:\n",
      jax.grad(lambda w: ((xb @ (jnp.round(w / 0.25) * 0.25).T - yb) ** 2).mean())(qnet.dense.weight.value))

# %% [markdown]
# With the estimator the quantised layer trains; its weights stay on the grid in the
# forward pass:

# %%
target_w = ms.Tensor([[0.5, -1.0, 0.25], [1.5, 0.0, -0.75]], ms.float32)
x_train = ms.Tensor(rng.normal(size=(256, 3)), ms.float32)
y_train = ops.matmul(x_train, target_w.T)

qnet = QuantDense(3, 2)
optimizer = nn.SGD(qnet.trainable_params(), learning_rate=0.1)
grad_fn = ms.value_and_grad(loss_fn, None, optimizer.parameters)

@ms.jit
def train_step(x, y):
    loss, grads = grad_fn(x, y)
    optimizer(grads)
    return loss

losses = [float(train_step(x_train, y_train)) for _ in range(60)]
print("loss: first", f"{losses[0]:.3f}", "last", f"{losses[-1]:.2e}")
print("quantised weights:\n", np.asarray(qnet.quant(qnet.dense.weight)))

fig, ax = plt.subplots(figsize=(4.5, 2.8))
ax.plot(losses)
ax.set(yscale="log", xlabel="step", ylabel="MSE", title="QuantDense trained with the STE")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Gradient clipping
#
# `ClipGradNorm` is the identity in the forward pass and rescales the gradient flowing
# back through it to a norm of at most `max_norm`. Placed between two parts of a model, it
# bounds the gradient that reaches the first part. The reference applies the same clipping
# to the cotangent by hand, with `jax.vjp`.

# %%
class ClipGradNorm(nn.Cell):
    def __init__(self, max_norm):
        super().__init__()
        self.max_norm = max_norm

    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        norm = jnp.sqrt(jnp.sum(dout ** 2))
        return (dout * jnp.minimum(1.0, self.max_norm / (norm + 1e-12)),)

clip = ClipGradNorm(1.0)
x = ms.Tensor(rng.normal(size=(5,)), ms.float32)
a = ms.Tensor(rng.normal(size=(5,)) * 10, ms.float32)   # a large upstream gradient

got = ms.grad(lambda x: (a * clip(ops.sin(x))).sum())(x)
_, vjp = jax.vjp(jnp.sin, x)
(want,) = vjp(a * jnp.minimum(1.0, 1.0 / jnp.linalg.norm(a)))
report("clipped gradient", got, want)
clipped = jax.grad(lambda h: (a * clip(h)).sum())(jnp.sin(x))
print(f"norm of the gradient reaching sin: {float(jnp.linalg.norm(a)):.2f} -> {float(jnp.linalg.norm(clipped)):.2f}")

# %% [markdown]
# ## Gradient reversal
#
# Domain-adversarial training uses a layer that is the identity forward and multiplies the
# gradient by `-coeff` backward: the domain classifier learns to tell domains apart while
# the shared features learn to make that impossible. The reference is
# `-coeff * h + stop_gradient((1 + coeff) * h)` (value `h`, gradient `-coeff`).

# %%
class GradReverse(nn.Cell):
    def __init__(self, coeff=1.0):
        super().__init__()
        self.coeff = coeff

    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (-self.coeff * dout,)


class DomainAdversarial(nn.Cell):
    def __init__(self, coeff):
        super().__init__()
        self.features = nn.Dense(4, 8, activation="tanh")
        self.classifier = nn.Dense(8, 3)
        self.reverse = GradReverse(coeff)
        self.domain = nn.Dense(8, 2)

    def construct(self, x):
        h = self.features(x)
        return self.classifier(h), self.domain(self.reverse(h))

dann = DomainAdversarial(coeff=0.5)
ce = nn.CrossEntropyLoss()
x = ms.Tensor(rng.normal(size=(8, 4)), ms.float32)
y = ms.Tensor(rng.integers(0, 3, size=8), ms.int32)
d = ms.Tensor(rng.integers(0, 2, size=8), ms.int32)

def dann_loss(x, y, d):
    class_logits, domain_logits = dann(x)
    return ce(class_logits, y) + ce(domain_logits, d)

names = [p.name for p in dann.trainable_params()]
grads = ms.jit(ms.grad(dann_loss, None, dann.trainable_params()))(x, y, d)

def reference(params):
    p = dict(zip(names, params))
    h = jnp.tanh(x @ p["features.weight"].T + p["features.bias"])
    h_rev = -0.5 * h + jax.lax.stop_gradient(1.5 * h)
    class_logits = h @ p["classifier.weight"].T + p["classifier.bias"]
    domain_logits = h_rev @ p["domain.weight"].T + p["domain.bias"]
    xent = lambda logits, t: -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(t)), t])
    return xent(class_logits, y) + xent(domain_logits, d)

want = jax.grad(reference)([p.value for p in dann.trainable_params()])
for name, g, w in zip(names, grads, want):
    report(name, g, w)

# %% [markdown]
# ## The same Cells under plain `jax.grad`
#
# A Cell is a pytree, so `jax.grad` of a function of the Cell gives a Cell-shaped tree of
# gradients, and the custom `bprop`s apply there too:

# %%
def pure_loss(net, x, y, d):
    class_logits, domain_logits = net(x)
    return ce(class_logits, y) + ce(domain_logits, d)

tree = jax.grad(pure_loss)(dann, x, y, d)
print(type(tree).__name__, "with gradient leaves:", [jnp.shape(leaf) for leaf in jax.tree.leaves(tree)])
for name, g in zip(names, grads):
    report(name, tree.parameters_dict()[name].value, g)
