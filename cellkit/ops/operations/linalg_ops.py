"""Matrix-product and linear-algebra Primitives (MindSpore's ``ops/operations/linalg_ops.py`` and the
linear algebra of its ``math_ops.py``): one table line each.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> P.BatchMatMul(transpose_b=True)(ms.ops.ones((2, 1, 3)), ms.ops.ones((2, 4, 3))).shape
(2, 1, 4)
>>> P.Einsum("ij->ji")((ms.Tensor([[1., 2.]]),))
Array([[1.],
       [2.]], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp

from .. import function as F
from ..function._utils import _v
from ..primitive import REQUIRED, install_primitives

__all__ = []


def _matmul(a, b, *, transpose_a, transpose_b):
    a, b = _v(a), _v(b)
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
    if transpose_b:
        b = jnp.swapaxes(b, -1, -2)
    return F.matmul(a, b)


def _einsum(operands, *, equation):
    return F.einsum(equation, *operands)


def _cross(x1, x2, *, dim):
    return F.cross(x1, x2, None if dim == -65530 else dim)


def _upper(fn):
    def call(x, *args, upper):
        return fn(x, *args, upper=upper)
    call.__name__ = fn.__name__
    return call


def _matrix_inverse(x, *, adjoint):
    inv = F.inverse(x)
    return jnp.swapaxes(inv, -1, -2).conj() if adjoint else inv


def _matrix_power(x, *, n):
    return F.matrix_power(x, n)


def _matrix_solve(matrix, rhs, *, adjoint):
    return F.matrix_solve(matrix, rhs, adjoint)


def _qr(x, *, full_matrices):
    return F.qr(x, "complete" if full_matrices else "reduced")


def _svd(x, *, full_matrices, compute_uv):
    out = F.svd(x, full_matrices, compute_uv)
    if not compute_uv:  # MindSpore's Primitive returns a one-element zero U and V then
        return out, jnp.zeros((1,), out.dtype), jnp.zeros((1,), out.dtype)
    return out


def _eig(x, *, compute_v):
    values, vectors = F.eig(x)
    return (values, vectors) if compute_v else (values, None)


def _cdist(x1, x2, *, p):
    return F.cdist(x1, x2, p)


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "MatMul": (_matmul, {"transpose_a": False, "transpose_b": False}),
    "BatchMatMul": (_matmul, {"transpose_a": False, "transpose_b": False}),
    "Einsum": (_einsum, {"equation": REQUIRED}),
    "Ger": (F.ger, {}),
    "Cross": (_cross, {"dim": -65530}),
    "Trace": (F.trace, {}),
    "Cdist": (_cdist, {"p": 2.0}),
    "MatrixDeterminant": (F.det, {}),
    "LogMatrixDeterminant": (F.slogdet, {}),
    "MatrixInverse": (_matrix_inverse, {"adjoint": False}),
    "MatrixPower": (_matrix_power, {"n": REQUIRED}),
    "MatrixSolve": (_matrix_solve, {"adjoint": False}),
    "MatrixExp": (F.matrix_exp, {}),
    "Cholesky": (_upper(F.cholesky), {"upper": False}),
    "CholeskyInverse": (_upper(F.cholesky_inverse), {"upper": False}),
    "CholeskySolve": (_upper(F.cholesky_solve), {"upper": False}),
    "Qr": (_qr, {"full_matrices": False}),
    "Svd": (_svd, {"full_matrices": False, "compute_uv": True}),
    "Eig": (_eig, {"compute_v": False}),
}
install_primitives(globals(), __all__, PRIMITIVES)
