"""Products, norms and linear algebra (MindSpore's ``ops/function/linalg_func.py`` and the linear
algebra of its ``math_func.py``).

>>> import cellkit as ms
>>> a = ms.Tensor([[2., 0.], [0., 4.]])
>>> ms.ops.det(a)
Array(8., dtype=float32)
>>> ms.ops.addmm(ms.ops.ones((2, 2)), a, a, beta=0.5)
Array([[ 4.5,  0.5],
       [ 0.5, 16.5]], dtype=float32)
>>> ms.ops.einsum("ij,j->i", a, ms.Tensor([1., 1.]))
Array([2., 4.], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from ._utils import _axis, _v, exporter

__all__ = []
_public = exporter(__all__)


def _matmul_error(name, a, b):
    return ValueError(f"ops.{name}: the inputs' shapes {jnp.shape(a)} and {jnp.shape(b)} do not match for a "
                      "matrix product (the last dimension of the first must equal the second-to-last of the second)")


def _product(name, fn, doc):
    def op(input, other):  # noqa: A002
        a, b = _v(input), _v(other)
        try:
            return fn(a, b)
        except (TypeError, ValueError) as e:
            if "dimension" in str(e) or "shape" in str(e):
                raise _matmul_error(name, a, b) from None
            raise
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return _public(op)


matmul = _product("matmul", jnp.matmul, "The matrix product of two tensors, with broadcast batch dimensions.")
mm = _product("mm", jnp.matmul, "The matrix product of two 2-D tensors.")
dot = _product("dot", jnp.dot, "The dot product (``jax.numpy.dot``).")
inner = _product("inner", jnp.inner, "The inner product over the last dimension of both inputs.")
mv = _product("mv", jnp.matmul, "The product of a matrix and a vector.")
kron = _product("kron", jnp.kron, "The Kronecker product.")
outer = _product("outer", jnp.outer, "The outer product of two vectors.")
ger = _product("ger", jnp.outer, "The outer product of two vectors (``outer``).")


@_public
def bmm(input_x, mat2):
    """The batched matrix product of two tensors of at least three dimensions."""
    a, b = _v(input_x), _v(mat2)
    if jnp.ndim(a) < 3 or jnp.ndim(b) < 3:
        raise ValueError(f"ops.bmm: both inputs must have at least 3 dimensions, got {jnp.shape(a)} and {jnp.shape(b)}")
    return matmul(a, b)


@_public
def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return beta * _v(input) + alpha * mm(mat1, mat2)


@_public
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return beta * _v(input) + alpha * jnp.sum(bmm(batch1, batch2), axis=0)


@_public
def baddbmm(input, batch1, batch2, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * (batch1 @ batch2)`` batch by batch."""
    return beta * _v(input) + alpha * bmm(batch1, batch2)


@_public
def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * (mat @ vec)``."""
    return beta * _v(input) + alpha * mv(mat, vec)


@_public
def addr(x, vec1, vec2, *, beta=1, alpha=1):
    """``beta * x + alpha * outer(vec1, vec2)``."""
    return beta * _v(x) + alpha * outer(vec1, vec2)


@_public
def einsum(equation, *operands):
    """Einstein summation (``jax.numpy.einsum``); operands may also be given as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return jnp.einsum(equation, *[_v(o) for o in operands])


@_public
def tensor_dot(x1, x2, axes):
    """``jax.numpy.tensordot`` over ``axes``."""
    return jnp.tensordot(_v(x1), _v(x2), axes=axes)


def _batch_dot_axes(s1, s2, axes):
    """MindSpore's ``batch_dot`` axes as a list of two non-negative ints (its checks and messages)."""
    what = "For 'batch_dot', the"
    if axes is None:
        axes = [len(s1) - 1, len(s2) - 1 if len(s2) == 2 else len(s2) - 2]
    if isinstance(axes, (list, tuple)):
        if 0 in axes:
            raise ValueError(f"{what} 'axes' cannot contain 0, but got axes: {axes}.")
        if len(axes) != 2 or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            raise ValueError(f"{what} 'axes' must be two ints, but got {axes}.")
        axes = [axes[0] + len(s1) if axes[0] < 0 else axes[0], axes[1] + len(s2) if axes[1] < 0 else axes[1]]
        if min(axes) < 0 or axes[0] > len(s1) or axes[1] > len(s2):
            raise ValueError(f"{what} axes are out of range: {axes} for shapes {s1} and {s2}.")
        return axes
    if isinstance(axes, int) and not isinstance(axes, bool):
        if axes == 0 or axes > len(s1) or axes > len(s2):
            raise ValueError(f"{what} 'axes' must be non-zero and at most the ranks, but got {axes}.")
        return [axes + len(s1), axes + len(s2)] if axes < 0 else [axes, axes]
    raise ValueError(f"{what} type of 'axes' must be one of those: int, tuple(int), list(int), "
                     f"but got {type(axes).__name__}.")


@_public
def batch_dot(x1, x2, axes=None):
    """Per-sample dot product over a leading batch axis, MindSpore's (deprecated) ``ops.batch_dot``.

    ``axes`` (an int, a pair, or None: the last axis of ``x1`` and the second-to-last of ``x2``,
    the last for a 2-D ``x2``) names the contracted axis of each input; the result holds the
    batch, then ``x1``'s free axes, then ``x2``'s. A 2-D input is a batch of vectors. float32 only.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.batch_dot(ops.ones((2, 2, 3)), ops.ones((2, 3, 2)), (-1, -2))[0]
    Array([[3., 3.],
           [3., 3.]], dtype=float32)
    """
    a, b = jnp.asarray(_v(x1)), jnp.asarray(_v(x2))
    for name, x in (("x1", a), ("x2", b)):
        if x.dtype != jnp.float32:
            raise TypeError(f"The '{name}' doesn't support '{x.dtype}' and expect to receive [mindspore.float32].")
        if x.ndim < 2:
            raise ValueError(f"For 'batch_dot', the rank of '{name}' must be at least 2, got shape {x.shape}.")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"For 'batch_dot', the inputs 'x1', 'x2' should have the same batch sizes, but got "
                         f"'x1_batch_size': {a.shape[0]} and 'x2_batch_size': {b.shape[0]}.")
    axes = _batch_dot_axes(a.shape, b.shape, axes)
    squeeze = None
    if a.ndim == 2:
        a, axes[0], squeeze = a[:, None], axes[0] + 1, 1
    if b.ndim == 2:
        b, squeeze = b[:, :, None], (squeeze if squeeze is not None else -1)
    out = jax.vmap(lambda u, v: jnp.tensordot(u, v, axes=([axes[0] - 1], [axes[1] - 1])))(a, b)
    return jnp.squeeze(out, squeeze) if squeeze is not None else out


@_public
def vecdot(x, y, *, axis=-1):
    """The dot product of vectors along ``axis`` (the first input conjugated)."""
    return jnp.sum(jnp.conj(_v(x)) * _v(y), axis=axis)


@_public
def trace(input):  # noqa: A002
    """The sum of the main diagonal of a matrix."""
    x = _v(input)
    if jnp.ndim(x) != 2:
        raise ValueError(f"ops.trace: the input must be a matrix, got shape {jnp.shape(x)}")
    return jnp.trace(x)


@_public
def cross(input, other, dim=None):  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (the first dimension of size 3 when None)."""
    a, b = _v(input), _v(other)
    if dim is None:
        dim = next((i for i, s in enumerate(jnp.broadcast_shapes(a.shape, b.shape)) if s == 3), None)
        if dim is None:
            raise ValueError(f"ops.cross: no dimension of size 3 in shapes {a.shape} and {b.shape}")
    return jnp.cross(a, b, axis=dim)


# Norms and distances.

@_public
def vector_norm(x, ord=2, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    """The vector ``ord``-norm over ``axis`` (the whole input flattened when None)."""
    x = _v(x)
    if dtype is not None:
        x = x.astype(dtype)
    if axis is None:
        x, axis = x.reshape(-1), 0
        if keepdims:
            return jnp.linalg.vector_norm(x, ord=ord).reshape([1] * _v(x).ndim)
    return jnp.linalg.vector_norm(x, ord=ord, axis=_axis(axis), keepdims=keepdims)


@_public
def matrix_norm(A, ord="fro", axis=(-2, -1), keepdims=False, *, dtype=None):  # noqa: N803,A002
    """The matrix ``ord``-norm over the two ``axis`` dimensions."""
    x = _v(A)
    if dtype is not None:
        x = x.astype(dtype)
    return jnp.linalg.norm(x, ord=ord, axis=tuple(axis), keepdims=keepdims)


@_public
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: N803,A002
    """A vector norm (one ``dim``, or a 1-D input) or a matrix norm (two ``dim``s, or a 2-D input)."""
    x = _v(A)
    if dtype is not None:
        x = x.astype(dtype)
    if ord is None and dim is None:
        return jnp.linalg.vector_norm(x.reshape(-1)).reshape([1] * x.ndim if keepdim else [])
    return jnp.linalg.norm(x, ord=ord, axis=_axis(dim), keepdims=keepdim)


@_public
def dist(input, other, p=2):  # noqa: A002
    """The ``p``-norm of ``input - other``."""
    d = (_v(input) - _v(other)).reshape(-1)
    return jnp.linalg.vector_norm(d, ord=p)


@_public
def cdist(x1, x2, p=2.0):
    """Pairwise ``p``-norm distances between the rows of ``x1`` (``[B,] P, M``) and ``x2`` (``[B,] R, M``)."""
    a, b = _v(x1), _v(x2)
    diff = a[..., :, None, :] - b[..., None, :, :]
    if p == 2.0:
        sq = jnp.sum(diff * diff, axis=-1)
        safe = jnp.where(sq == 0, 1.0, sq)
        return jnp.where(sq == 0, 0.0, jnp.sqrt(safe))
    return jnp.linalg.vector_norm(diff, ord=p, axis=-1)


@_public
def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``."""
    a, b = _v(x1), _v(x2)
    num = jnp.sum(a * b, axis=dim)
    den = jnp.maximum(jnp.linalg.vector_norm(a, axis=dim) * jnp.linalg.vector_norm(b, axis=dim), eps)
    return num / den


# Decompositions, inverses and determinants.

def _square_check(name, x):
    if jnp.ndim(x) < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"ops.{name}: the input must be a (batch of) square matrices, got shape {jnp.shape(x)}")
    return x


def _square_op(name, fn, doc):
    def op(input):  # noqa: A002
        return fn(_square_check(name, _v(input)))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return _public(op)


det = _square_op("det", jnp.linalg.det, "The determinant of (a batch of) square matrices.")
matrix_determinant = _square_op("matrix_determinant", jnp.linalg.det, "The determinant (``det``).")
inverse = _square_op("inverse", jnp.linalg.inv, "The inverse of (a batch of) square matrices.")
matrix_exp = _square_op("matrix_exp", jsl.expm, "The matrix exponential.")
logdet = _square_op("logdet", lambda x: jnp.log(jnp.linalg.det(x)),
                    "``log(det(input))`` (NaN for a negative determinant).")


@_public
def slogdet(input):  # noqa: A002
    """``(sign, log|det|)`` of (a batch of) square matrices."""
    sign, logabs = jnp.linalg.slogdet(_square_check("slogdet", _v(input)))
    return sign, logabs


@_public
def log_matrix_determinant(input):  # noqa: A002
    """``(sign, log|det|)`` (``slogdet``)."""
    return slogdet(input)


@_public
def matrix_power(input, n):  # noqa: A002
    """The ``n``-th power of a square matrix (the inverse's power for negative ``n``)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"ops.matrix_power: n must be an int, got {type(n).__name__}")
    return jnp.linalg.matrix_power(_square_check("matrix_power", _v(input)), n)


@_public
def cholesky(input_x, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix (upper-triangular when ``upper``)."""
    x = _square_check("cholesky", _v(input_x))
    low = jnp.linalg.cholesky(x)
    return jnp.swapaxes(low, -1, -2).conj() if upper else low


@_public
def cholesky_inverse(input_x, upper=False):
    """The inverse of ``A`` from its Cholesky factor ``input_x``."""
    u = _square_check("cholesky_inverse", _v(input_x))
    a = jnp.swapaxes(u, -1, -2) @ u if upper else u @ jnp.swapaxes(u, -1, -2)
    return jnp.linalg.inv(a)


@_public
def cholesky_solve(input, input2, upper=False):  # noqa: A002
    """Solve ``A X = input`` given ``A``'s Cholesky factor ``input2``."""
    return jsl.cho_solve((_v(input2), not upper), _v(input))


@_public
def matrix_solve(matrix, rhs, adjoint=False):
    """Solve ``matrix @ X = rhs`` (with the adjoint of ``matrix`` when ``adjoint``)."""
    m = _v(matrix)
    if adjoint:
        m = jnp.swapaxes(m, -1, -2).conj()
    return jnp.linalg.solve(m, _v(rhs))


@_public
def pinv(x, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse."""
    x = _v(x)
    if atol is not None:
        s = jnp.linalg.svd(x, compute_uv=False)
        cut = jnp.maximum(atol, (0.0 if rtol is None else rtol) * jnp.max(s, axis=-1, keepdims=True))
        rtol = cut / jnp.max(s, axis=-1, keepdims=True)
    return jnp.linalg.pinv(x, rtol=rtol, hermitian=hermitian)


@_public
def qr(input, mode="reduced"):  # noqa: A002
    """``(Q, R)`` of the QR decomposition; ``mode`` is "reduced", "complete" or "r"."""
    if mode not in ("reduced", "complete", "r"):
        raise TypeError(f"ops.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    x = _v(input)
    if mode == "r":
        return jnp.zeros((0,), x.dtype), jnp.linalg.qr(x, mode="r")
    return jnp.linalg.qr(x, mode=mode)


@_public
def svd(input, full_matrices=False, compute_uv=True):  # noqa: A002
    """``(S, U, V)`` (MindSpore's order; ``V`` not transposed), or ``S`` alone without ``compute_uv``."""
    x = _v(input)
    if not compute_uv:
        return jnp.linalg.svd(x, full_matrices=full_matrices, compute_uv=False)
    u, s, vh = jnp.linalg.svd(x, full_matrices=full_matrices)
    return s, u, jnp.swapaxes(vh, -1, -2).conj()


@_public
def eig(A):  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of a square matrix (complex; CPU only in JAX)."""
    return jnp.linalg.eig(_square_check("eig", _v(A)))


@_public
def eigvals(A):  # noqa: N803
    """The eigenvalues of a square matrix (complex; CPU only in JAX)."""
    return jnp.linalg.eigvals(_square_check("eigvals", _v(A)))


@_public
def cond(A, p=None):  # noqa: N803
    """The condition number in the ``p``-norm (2-norm when None)."""
    return jnp.linalg.cond(_v(A), p=p)


@_public
def vander(x, N=None):  # noqa: N803
    """The Vandermonde matrix of a vector (decreasing powers)."""
    return jnp.vander(_v(x), N)


@_public
def block_diag(*inputs):
    """A block-diagonal matrix of the inputs."""
    return jsl.block_diag(*[_v(i) for i in inputs])


@_public
def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance matrix of the rows of ``input`` (variables) over its columns (observations)."""
    return jnp.cov(_v(input), ddof=correction, fweights=_v(fweights), aweights=_v(aweights))


@_public
def tril_indices(row, col, offset=0, *, dtype=jnp.int64):
    """The ``(2, N)`` indices of the lower triangle of a ``row`` x ``col`` matrix."""
    return jnp.stack(jnp.tril_indices(row, offset, col)).astype(jax.dtypes.canonicalize_dtype(dtype))


@_public
def triu_indices(row, col, offset=0, *, dtype=jnp.int64):
    """The ``(2, N)`` indices of the upper triangle of a ``row`` x ``col`` matrix."""
    return jnp.stack(jnp.triu_indices(row, offset, col)).astype(jax.dtypes.canonicalize_dtype(dtype))



def _lu_args(op, lu_data, lu_pivots):
    lu, piv = jnp.asarray(_v(lu_data)), jnp.asarray(_v(lu_pivots))
    if not jnp.issubdtype(piv.dtype, jnp.integer):
        raise TypeError(f"For {op}, LU_pivots must be an int32 tensor (1-based, as LAPACK's), got {piv.dtype}")
    if lu.ndim < 2 or piv.shape != lu.shape[:-2] + (min(lu.shape[-2:]),):
        raise ValueError(f"For {op}, LU_data must be (..., M, N) and LU_pivots (..., min(M, N)), got "
                         f"{tuple(lu.shape)} and {tuple(piv.shape)}")
    return lu, piv.astype(jnp.int32)


def _permutation(piv, m):
    """The row permutation ``perm`` (``A[perm] = L U``) of LAPACK's 1-based ``piv``."""
    return jax.lax.linalg.lu_pivots_to_permutation(piv - 1, m)


@_public
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803 - MindSpore's names
    """``(P, L, U)`` of a packed LU factorisation (``A = P @ L @ U``); ``LU_pivots`` are 1-based.
    ``unpack_data=False`` leaves ``L`` and ``U`` as None, ``unpack_pivots=False`` leaves ``P`` as None.

    >>> import cellkit as ms
    >>> lu = ms.Tensor([[2., 1.], [0.5, 1.5]])
    >>> p, l, u = ms.ops.lu_unpack(lu, ms.Tensor([2, 2], ms.int32))
    >>> p.tolist(), l.tolist(), u.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.5, 1.0]], [[2.0, 1.0], [0.0, 1.5]])
    """
    lu, piv = _lu_args("lu_unpack", LU_data, LU_pivots)
    m, n = lu.shape[-2:]
    k = min(m, n)
    p = l_mat = u_mat = None
    if unpack_pivots:
        perm = _permutation(piv, m)
        p = jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=lu.dtype), -1, -2)
    if unpack_data:
        l_mat = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
        u_mat = jnp.triu(lu[..., :k, :])
    return p, l_mat, u_mat


@_public
def lu_solve(b, LU_data, LU_pivots):  # noqa: N803 - MindSpore's names
    """The solution ``x`` of ``A x = b`` from ``A``'s packed LU factorisation (1-based pivots); the
    batch dimensions broadcast."""
    lu, piv = _lu_args("lu_solve", LU_data, LU_pivots)
    b = jnp.asarray(_v(b))
    if b.ndim < 2 or b.shape[-2] != lu.shape[-1] or lu.shape[-1] != lu.shape[-2]:
        raise ValueError(f"For lu_solve, LU_data must be square (..., N, N) and b (..., N, K), got "
                         f"{tuple(lu.shape)} and {tuple(b.shape)}")
    batch = jnp.broadcast_shapes(b.shape[:-2], lu.shape[:-2])
    lu = jnp.broadcast_to(lu, batch + lu.shape[-2:])
    piv = jnp.broadcast_to(piv, batch + piv.shape[-1:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:]).astype(lu.dtype)
    perm = _permutation(piv, lu.shape[-1])
    pb = jnp.take_along_axis(b, perm[..., None], axis=-2)
    y = jax.lax.linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return jax.lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)
