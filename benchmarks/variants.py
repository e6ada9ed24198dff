"""Train-step and eager-forward builders, one per framework variant.

Every train step is one step of ``optax.adam`` (:func:`transformation`) on
:func:`models.cross_entropy`. A builder takes a cellkit Cell (the weights'
source; cellkit's stateful variants train that very Cell) and a batch, and
returns ``run()``: one step per call, returning the loss as a JAX array.
Where the step can be lowered, ``run.lower()`` gives its ``jax.stages.Lowered``
(for XLA's memory analysis).

Train variants:

* ``raw_jax``: ``jax.jit`` over a dict of arrays and the optax state, both
  donated (the floor).
* ``cellkit_closure``/``cellkit_argument``: ``cellkit.jit`` step calling
  ``cellkit.value_and_grad`` and an ``nn.Optimizer`` running ``optax.adam``
  (state in Parameters, written back in place); the Cell and optimizer reached
  through the closure, or passed as arguments.
* ``cellkit_pure``: plain ``jax.jit`` over the Cell pytree and optax state, donated.
* ``nnx_jit``: ``nnx.jit`` over the NNX model and ``nnx.Optimizer``.
* ``nnx_split_merge``: ``jax.jit`` over ``nnx.split`` state, merged inside.
* ``equinox``: ``eqx.filter_jit`` over the Equinox model and optax state.

cellkit.nn optimizers in MindSpore's own training loop (:data:`NN_OPTIMIZERS`,
the ``nn.SGD``/``nn.Momentum``/``nn.Adam`` rows): ``nn_raw(name)`` is the same
update written with ``jax.numpy`` under a donating ``jax.jit``, and
``nn_cellkit(name)`` is the loop a MindSpore user writes::

    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

with the Cell and the optimizer reached through the closure.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Callable

import jax
import jax.numpy as jnp
import optax

import cellkit as ms
from cellkit import nn

from . import models
from .models import cross_entropy

__all__ = ["LR", "OPT_LR", "transformation", "OptaxAdam", "Variant", "TRAIN", "EAGER", "NN_OPTIMIZERS",
           "NN_VARIANTS", "nn_raw", "nn_cellkit", "skip_note", "available"]

LR = 1e-3


def transformation(learning_rate=LR) -> optax.GradientTransformation:
    """The optimizer of every variant."""
    return optax.adam(learning_rate)


class OptaxAdam(nn.Optimizer):
    """A cellkit optimizer Cell whose update is exactly :func:`transformation` (``optax.adam``)."""

    def __init__(self, params, learning_rate=LR):
        super().__init__(learning_rate, params)
        self.init_optax()

    def update_rule(self, learning_rate, weight_decay, decay_mask):
        """``optax.adam`` at the injected learning rate."""
        return transformation(learning_rate)


def _functional_step(loss, tx, value_and_grad=jax.value_and_grad, params_of=lambda m: m,
                     apply=optax.apply_updates):
    """``step(model, opt_state, x, y) -> (model, opt_state, loss)`` for frameworks whose models are values."""
    def step(model, opt_state, x, y):
        value, grads = value_and_grad(loss)(model, x, y)
        updates, opt_state = tx.update(grads, opt_state, params_of(model))
        return apply(model, updates), opt_state, value
    return step


def _carry(step, state, x, y):
    """``run()`` for a functional ``step(*state, x, y) -> (*state, loss)``: keeps the new state."""
    state = list(state)

    def run():
        *new, loss = step(*state, x, y)
        state[:] = new
        return loss
    if hasattr(step, "lower"):
        run.lower = lambda: step.lower(*state, x, y)
    return run


def _own(tree):
    """A copy of every array in ``tree``: a donating step must not delete arrays other variants share."""
    return jax.tree.map(jnp.copy, tree)


def _donating_jit(fn, n_state):
    return jax.jit(fn, donate_argnums=tuple(range(n_state)))


def _cell_loss(net, x, y):
    return cross_entropy(net(x), y)


# ----- train steps -------------------------------------------------------------------------

def raw_jax(cell, x, y):
    """``jax.jit`` over a ``{name: array}`` dict and the optax state: no framework at all."""
    forward, params, tx = models.raw_forward(cell), _own(models.raw_params(cell)), transformation()
    step = _donating_jit(_functional_step(lambda p, x, y: cross_entropy(forward(p, x), y), tx), 2)
    return _carry(step, (params, tx.init(params)), x, y)


def _closure_step(forward, opt, x, y):
    """MindSpore's training loop: ``value_and_grad`` over ``opt.parameters`` and an ``ms.jit`` step
    that calls the optimizer, both reached through the closure; a runner with ``.lower``."""
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss
    run = lambda: step(x, y)  # noqa: E731
    run.lower = lambda: step.lower(x, y)
    return run


def cellkit_closure(cell, x, y):
    """``cellkit.jit`` step reaching the Cell and optimizer through its closure."""
    opt = OptaxAdam(cell.trainable_params())
    return _closure_step(lambda x, y: _cell_loss(cell, x, y), opt, x, y)


def cellkit_argument(cell, x, y):
    """``cellkit.jit`` step taking the Cell and optimizer as arguments."""
    opt = OptaxAdam(cell.trainable_params())

    @ms.jit
    def step(net, opt, x, y):
        loss, grads = ms.value_and_grad(lambda x, y: _cell_loss(net, x, y), None, opt.parameters)(x, y)
        opt(grads)
        return loss
    run = lambda: step(cell, opt, x, y)  # noqa: E731
    run.lower = lambda: step.lower(cell, opt, x, y)
    return run


def cellkit_pure(cell, x, y):
    """Plain ``jax.jit`` over the Cell as a pytree (cellkit's pure layer) and the optax state."""
    tx, cell = transformation(), _own(cell)
    step = _donating_jit(_functional_step(_cell_loss, tx), 2)
    return _carry(step, (cell, tx.init(cell)), x, y)


def _nnx_update(model, optimizer, x, y):
    from flax import nnx
    loss, grads = nnx.value_and_grad(lambda m: _cell_loss(m, x, y))(model)
    optimizer.update(model, grads)
    return loss


def _nnx_model(cell):
    from flax import nnx
    from . import nnx_models
    model = nnx_models.from_cell(cell)
    return model, nnx.Optimizer(model, transformation(), wrt=nnx.Param)


def nnx_jit(cell, x, y):
    """``nnx.jit`` over the NNX model and ``nnx.Optimizer`` (updated in place)."""
    from flax import nnx
    model, optimizer = _nnx_model(cell)
    step = nnx.jit(_nnx_update)
    run = lambda: step(model, optimizer, x, y)  # noqa: E731
    if hasattr(step, "lower"):
        run.lower = lambda: step.lower(model, optimizer, x, y)
    return run


def nnx_split_merge(cell, x, y):
    """``jax.jit`` over the state of ``nnx.split((model, optimizer))``, merged inside the step."""
    from flax import nnx
    graphdef, state = nnx.split(_nnx_model(cell))

    @jax.jit
    def step(state, x, y):
        model, optimizer = nnx.merge(graphdef, state)
        loss = _nnx_update(model, optimizer, x, y)
        return nnx.state((model, optimizer)), loss
    return _carry(step, (state,), x, y)


def equinox(cell, x, y):
    """``eqx.filter_jit`` over the Equinox model and the optax state."""
    import equinox as eqx
    from . import eqx_models
    model, tx = eqx_models.from_cell(cell), transformation()
    params_of = lambda m: eqx.filter(m, eqx.is_array)  # noqa: E731
    step = eqx.filter_jit(_functional_step(_cell_loss, tx, eqx.filter_value_and_grad, params_of,
                                           eqx.apply_updates))
    return _carry(step, (model, tx.init(params_of(model))), x, y)


# ----- cellkit.nn optimizers in MindSpore's loop, against the same update in raw JAX ----------

# The optimizers, their learning rate and the same updates in raw JAX are benchmarks.nn_optim's
# (whose own script times them alone): name -> (cellkit optimizer, raw update, raw initial state).
from .nn_optim import LR as OPT_LR, OPTIMIZERS as NN_OPTIMIZERS  # noqa: E402


def nn_raw(name):
    """Builder: the update of ``nn.<name>`` in ``jax.numpy`` under ``jax.jit``, params and state donated."""
    update, init = NN_OPTIMIZERS[name][1:]

    def build(cell, x, y):
        forward, params = models.raw_forward(cell), _own(models.raw_params(cell))

        def step(p, s, x, y):
            loss, g = jax.value_and_grad(lambda p: cross_entropy(forward(p, x), y))(p)
            p, s = update(p, g, s)
            return p, s, loss
        return _carry(_donating_jit(step, 2), (params, init(params)), x, y)
    build.__doc__ = f"``nn.{name}``'s update in raw JAX."
    return build


def nn_cellkit(name):
    """Builder: MindSpore's loop with ``nn.<name>`` (Cell and optimizer reached through the closure)."""
    make = NN_OPTIMIZERS[name][0]

    def build(cell, x, y):
        opt = make(cell.trainable_params())

        return _closure_step(lambda x, y: cross_entropy(cell(x), y), opt, x, y)
    build.__doc__ = f"MindSpore's training loop with cellkit's ``nn.{name}``."
    return build


# ----- eager forward -----------------------------------------------------------------------

def eager_raw(cell, x):
    """The raw JAX forward function, not jitted: one dispatch per ``jax.numpy`` op."""
    forward, params = models.raw_forward(cell), models.raw_params(cell)
    return lambda: forward(params, x)


def eager_cellkit(cell, x):
    """Calling the Cell outside any transform (PyNative mode)."""
    return lambda: cell(x)


def eager_nnx(cell, x):
    """Calling the NNX module outside any transform."""
    from . import nnx_models
    model = nnx_models.from_cell(cell)
    return lambda: model(x)


def eager_eqx(cell, x):
    """Calling the Equinox module (its ``jax.vmap``) outside any transform."""
    from . import eqx_models
    model = eqx_models.from_cell(cell)
    return lambda: model(x)


# ----- the registry ------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Variant:
    """A named builder and the optional package it needs."""

    name: str
    build: Callable
    needs: str | None = None


TRAIN = (
    Variant("raw_jax", raw_jax),
    Variant("cellkit_closure", cellkit_closure),
    Variant("cellkit_argument", cellkit_argument),
    Variant("cellkit_pure", cellkit_pure),
    Variant("nnx_jit", nnx_jit, "flax"),
    Variant("nnx_split_merge", nnx_split_merge, "flax"),
    Variant("equinox", equinox, "equinox"),
)

# Per optimizer: the two variants of its rows (workloads 1 and 2).
NN_VARIANTS = {name: (Variant("raw_jax", nn_raw(name)), Variant("cellkit_closure", nn_cellkit(name)))
               for name in NN_OPTIMIZERS}

EAGER = (
    Variant("raw_jax", eager_raw),
    Variant("cellkit", eager_cellkit),
    Variant("nnx", eager_nnx, "flax"),
    Variant("equinox", eager_eqx, "equinox"),
)


def skip_note(variant: Variant) -> str | None:
    """Why ``variant`` cannot run here (its package is missing), or None."""
    if variant.needs and importlib.util.find_spec(variant.needs) is None:
        return f"{variant.needs} is not installed (python -m pip install -e \".[bench]\")"
    return None


def available(variant_list) -> tuple:
    """(the variants that can run here, {name: why not} for the others)."""
    notes = {v.name: skip_note(v) for v in variant_list}
    return [v for v in variant_list if not notes[v.name]], {n: why for n, why in notes.items() if why}
