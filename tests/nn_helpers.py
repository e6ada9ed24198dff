"""Helpers shared by the layer tests (tests/test_nn_*.py)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads

import cellkit as ms

X64 = bool(jax.config.jax_enable_x64)
# Layers under gradient checks are built in float64 when JAX allows it, so the
# finite differences are precise; in float32 the tolerances are looser.
FLOAT = ms.float64 if X64 else ms.float32
NP_FLOAT = np.float64 if X64 else np.float32
INT = np.int64 if X64 else np.int32


def rand(*shape, seed=0, scale=1.0):
    """A fixed random array of the test float dtype."""
    return jnp.asarray(np.random.RandomState(seed).randn(*shape) * scale, NP_FLOAT)


def _bucket(n):
    return max(64, 1 << (int(n) - 1).bit_length())


def _ravel(args):
    """(flat vector of the leaves zero-padded to a power of two, a traceable inverse, all float64?)."""
    leaves, treedef = jax.tree_util.tree_flatten(args)
    arrays = [np.asarray(leaf) for leaf in leaves]
    flat = np.concatenate([a.ravel() for a in arrays]).astype(NP_FLOAT)
    bounds = np.cumsum([0] + [a.size for a in arrays])

    def unravel(v):
        parts = [v[lo:hi].reshape(a.shape).astype(a.dtype) for a, lo, hi in zip(arrays, bounds[:-1], bounds[1:])]
        return jax.tree_util.tree_unflatten(treedef, parts)
    precise = all(a.dtype == np.float64 for a in arrays if a.dtype.kind == "f")
    return jnp.asarray(np.pad(flat, (0, _bucket(flat.size) - flat.size))), unravel, precise


def grads_ok(f, args):
    """``check_grads`` (reverse mode) of ``f(*args)`` with dtype-appropriate tolerances.

    The arguments (Cells included: they are pytrees) are raveled into one
    vector and the outputs into another, both zero-padded to a power-of-two
    length, and the function is compiled with ``jax.jit``. The padding adds
    inputs the output does not depend on and outputs that are constant zero,
    so the check is unchanged, while the checker's own array operations are
    compiled once per size instead of once per test. (The eager path is
    covered by the layers' own tests.)
    """
    flat, unravel, precise = _ravel(args)
    out_size = int(sum(np.size(o) for o in jax.tree_util.tree_leaves(jax.eval_shape(
        lambda v: f(*unravel(v)), flat))))

    def g(v):
        out = jnp.concatenate([jnp.ravel(o) for o in jax.tree_util.tree_leaves(f(*unravel(v)))])
        return jnp.pad(out.astype(v.dtype), (0, _bucket(out_size) - out_size))
    g = jax.jit(g)
    if precise:     # every float leaf is float64 (x64 mode and a float64 layer)
        check_grads(g, (flat,), order=1, modes=["rev"], atol=1e-5, rtol=1e-5)
    else:
        check_grads(g, (flat,), order=1, modes=["rev"], atol=5e-2, rtol=5e-2, eps=1e-2)


def params_of(cell):
    """{path: (Parameter name, shape, dtype name, requires_grad)} of a Cell."""
    return {path: (p.name, tuple(p.shape), str(p.dtype), p.requires_grad)
            for path, p in cell.parameters_and_names()}


def set_params(cell, values):
    """Set Parameters by path from NumPy arrays."""
    params = dict(cell.parameters_and_names())
    for path, v in values.items():
        params[path].set_data(ms.Tensor(np.asarray(v), params[path].dtype))


def close(a, b, tol=None):
    tol = 1e-5 if tol is None else tol
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol, atol=tol)


def init(*shape, seed=0, scale=0.5):
    """A fixed random Tensor to pass as weight_init/bias_init (no random-kernel compilation)."""
    return ms.Tensor(np.random.RandomState(seed).randn(*shape) * scale, FLOAT)


def replace_params(cell, values):
    """Give Parameters new values by path, as new Parameters of the same name and dtype.

    Unlike ``set_data`` this never materialises a lazy random initialisation
    first, which keeps tests free of random-kernel compilations.
    """
    params = dict(cell.parameters_and_names())
    for path, v in values.items():
        old = params[path]
        owner = cell
        *parents, attr = path.split(".")
        for part in parents:
            owner = getattr(owner, part)
        setattr(owner, attr, ms.Parameter(ms.Tensor(np.asarray(v), old.dtype), name=old.name,
                                          requires_grad=old.requires_grad))
