"""Bessel functions of the first and second kind (``bessel_j0``, ``bessel_j1``, ``bessel_y0``,
``bessel_y1``) and modified ones of the second kind (``bessel_k0``, ``bessel_k0e``, ``bessel_k1``,
``bessel_k1e``); ``bessel_i0`` ... ``bessel_i1e`` are renames of ``jax.scipy.special`` in ``math_func``.

JAX has none of these, so they are computed here:

- ``J0, J1, Y0, Y1`` for ``|x| <= 25`` by Miller's backward recurrence (normalised by
  ``J0 + 2 (J2 + J4 + ...) = 1``), ``Y0`` and ``Y1`` from Neumann's series in the ``J_{2k}``;
  above 25 by Hankel's asymptotic expansion.
- ``K0, K1`` (and the scaled ``K e^x``) by the trapezoidal rule on
  ``K_v(x) = int_0^inf exp(-x cosh t) cosh(v t) dt`` (exponentially convergent), and by the
  asymptotic expansion above 30.

Gradients use the recurrences (``J0' = -J1``, ``K0' = -K1``, ...). As MindSpore: float inputs
only (float16 is computed in float32), ``Y`` is ``-inf`` for ``x < 0``, ``K`` is ``inf`` for ``x <= 0``.

>>> import cellkit as ms
>>> ms.ops.bessel_j0(ms.Tensor([0., 1.]))
Array([1.       , 0.7651977], dtype=float32)
>>> ms.ops.bessel_k0(ms.Tensor([1.])).round(5)
Array([0.42102], dtype=float32)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ._utils import _v, exporter

__all__ = []
EAGER_LOOPS = True   # (JAX loops from Python: cellkit.tracing)
_public = exporter(__all__)

_GAMMA = 0.5772156649015329
_ORDER = 64  # Miller's recurrence starts at J_64: below 1e-14 for |x| <= 25
_SMALL_J = 25.0
_SMALL_K = 30.0


def _float(name, x):
    x = _v(x)
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"For primitive[Bessel{name[7:].upper()[0]}{name[8:]}], the input argument[x] must be a "
                        f"type of {{Tensor[Float16], Tensor[Float32], Tensor[Float64]}}, but got {x.dtype}")
    return x


def _hankel_terms(nu, count):
    """a_k(nu) = prod_{j=1..k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), k = 0..count-1."""
    mu, out, a = 4.0 * nu * nu, [], 1.0
    for k in range(count):
        out.append(a)
        a *= (mu - (2 * k + 1) ** 2) / ((k + 1) * 8.0)
    return out


def _jy_asymptotic(x, nu):
    a = _hankel_terms(nu, 12)
    inv = 1.0 / x
    p = sum(((-1) ** k) * a[2 * k] * inv ** (2 * k) for k in range(6))
    q = sum(((-1) ** k) * a[2 * k + 1] * inv ** (2 * k + 1) for k in range(6))
    chi = x - (0.5 * nu + 0.25) * math.pi
    scale = jnp.sqrt(2.0 / (math.pi * x))
    return scale * (p * jnp.cos(chi) - q * jnp.sin(chi)), scale * (p * jnp.sin(chi) + q * jnp.cos(chi))


def _jy_small(x):
    """(J0, J1, Y0, Y1) for 0 < x <= 25 by Miller's recurrence."""
    def body(i, state):
        k = _ORDER - i  # f_{k-1} from f_k and f_{k+1}
        f_k, f_k1, norm, y0_sum, y1_sum = state
        f_prev = (2.0 * k / x) * f_k - f_k1
        km1 = k - 1
        even = km1 % 2 == 0
        half = km1 // 2
        sign = jnp.where(half % 2 == 0, 1.0, -1.0).astype(x.dtype)
        # norm: f_0 + 2 sum f_{2j}; Y0 sum: sum_j (-1)^j f_{2j} / j; Y1 sum: sum_j (-1)^j (f_{2j-1} - f_{2j+1}) / j
        norm = norm + jnp.where(even & (km1 > 0), 2.0 * f_prev, 0.0)
        y0_sum = y0_sum + jnp.where(even & (km1 > 0), sign * f_prev / jnp.maximum(half, 1), 0.0)
        # f_{k-1} with k - 1 odd enters the Y1 sum as +f_{2j-1}/j (j = k/2) and -f_{2j+1}/j (j = (k-2)/2)
        j_up, j_down = (km1 + 1) // 2, (km1 - 1) // 2
        s_up = jnp.where(j_up % 2 == 0, 1.0, -1.0).astype(x.dtype)
        s_down = jnp.where(j_down % 2 == 0, 1.0, -1.0).astype(x.dtype)
        y1_term = s_up * f_prev / jnp.maximum(j_up, 1) - jnp.where(j_down > 0, s_down * f_prev / jnp.maximum(j_down, 1),
                                                                     0.0)
        y1_sum = y1_sum + jnp.where(~even, y1_term, 0.0)
        big = jnp.abs(f_prev) > 1e10
        scale = jnp.where(big, 1e-10, 1.0).astype(x.dtype)
        return f_prev * scale, f_k * scale, norm * scale, y0_sum * scale, y1_sum * scale

    one, zero = jnp.ones_like(x), jnp.zeros_like(x)
    f1, f2, norm, y0s, y1s = jax.lax.fori_loop(0, _ORDER - 1, body, (one * 1e-20, zero, zero, zero, zero))
    # after the loop: f1 = f_1, f2 = f_2; one more step gives f_0
    f0 = (2.0 / x) * f1 - f2
    norm = norm + f0
    j0, j1 = f0 / norm, f1 / norm
    log_term = jnp.log(x / 2.0) + _GAMMA
    y0 = (2.0 / math.pi) * log_term * j0 - (4.0 / math.pi) * y0s / norm
    y1 = (2.0 / math.pi) * (log_term * j1 - j0 / x) + (2.0 / math.pi) * y1s / norm
    return j0, j1, y0, y1


@jax.jit
def _jy(x):
    ax = jnp.abs(x)
    small = ax <= _SMALL_J
    safe_small = jnp.where(small & (ax >= 1e-4), ax, 1.0)
    safe_large = jnp.where(small, _SMALL_J + 1.0, ax)
    j0s, j1s, y0s, y1s = _jy_small(safe_small)
    j0l, y0l = _jy_asymptotic(safe_large, 0.0)
    j1l, y1l = _jy_asymptotic(safe_large, 1.0)
    j0 = jnp.where(small, j0s, j0l)
    j1 = jnp.where(small, j1s, j1l)
    y0 = jnp.where(small, y0s, y0l)
    y1 = jnp.where(small, y1s, y1l)
    # below 1e-4 the series' leading terms (the recurrence would overflow)
    tiny = ax < 1e-4
    xt = jnp.where(tiny & (ax > 0), ax, 1.0)
    log_t = jnp.log(xt / 2.0) + _GAMMA
    j0 = jnp.where(tiny, 1.0 - xt * xt / 4.0, j0)
    j1 = jnp.where(tiny, xt / 2.0, j1)
    y0 = jnp.where(tiny, (2.0 / math.pi) * log_t * (1.0 - xt * xt / 4.0) + xt * xt / (2.0 * math.pi), y0)
    y1 = jnp.where(tiny, -2.0 / (math.pi * xt) + (xt / math.pi) * (log_t - 0.5), y1)
    j0 = jnp.where(ax == 0, 1.0, j0)
    j1 = jnp.where(ax == 0, 0.0, jnp.sign(x) * j1)
    y0 = jnp.where(x <= 0, -jnp.inf, y0)
    y1 = jnp.where(x <= 0, -jnp.inf, y1)
    return j0, j1, y0, y1


_NODES = np.arange(0, 257) / 16.0  # t in [0, 16], step 1/16
_WEIGHTS = np.full(257, 1.0 / 16.0)
_WEIGHTS[0] = 0.5 / 16.0


def _k_scaled(x):
    """(K0 e^x, K1 e^x) for x > 0."""
    small = x <= _SMALL_K
    xs = jnp.where(small, x, 1.0)
    t = jnp.asarray(_NODES, x.dtype)
    w = jnp.asarray(_WEIGHTS, x.dtype)

    def body(i, acc):
        e = w[i] * jnp.exp(-xs * 2.0 * jnp.sinh(t[i] / 2.0) ** 2)
        return acc[0] + e, acc[1] + e * jnp.cosh(t[i])

    zero = jnp.zeros_like(x)
    k0s, k1s = jax.lax.fori_loop(0, len(_NODES), body, (zero, zero))
    xl = jnp.where(small, _SMALL_K + 1.0, x)
    scale = jnp.sqrt(math.pi / (2.0 * xl))
    k0l = scale * sum(a / xl ** k for k, a in enumerate(_hankel_terms(0.0, 8)))
    k1l = scale * sum(a / xl ** k for k, a in enumerate(_hankel_terms(1.0, 8)))
    k0e, k1e = jnp.where(small, k0s, k0l), jnp.where(small, k1s, k1l)
    # below 1e-5 the integral is truncated: the leading terms
    tiny = x < 1e-5
    xt = jnp.where(tiny, x, 1.0)
    k0e = jnp.where(tiny, -(jnp.log(xt / 2.0) + _GAMMA), k0e)
    k1e = jnp.where(tiny, 1.0 / xt, k1e)
    return k0e, k1e


@jax.jit
def _k(x):
    pos = x > 0
    k0e, k1e = _k_scaled(jnp.where(pos, x, 1.0))
    return jnp.where(pos, k0e, jnp.inf), jnp.where(pos, k1e, jnp.inf)


def _compute(x):
    dtype = x.dtype
    work = x.astype(jnp.float32) if dtype == jnp.float16 else x
    return work, dtype


@jax.custom_jvp
def _j0(x):
    return _jy(x)[0]


@jax.custom_jvp
def _j1(x):
    return _jy(x)[1]


@jax.custom_jvp
def _y0(x):
    return _jy(x)[2]


@jax.custom_jvp
def _y1(x):
    return _jy(x)[3]


@jax.custom_jvp
def _k0(x):
    return _k(x)[0] * jnp.exp(-x)


@jax.custom_jvp
def _k1(x):
    return _k(x)[1] * jnp.exp(-x)


@jax.custom_jvp
def _k0e(x):
    return _k(x)[0]


@jax.custom_jvp
def _k1e(x):
    return _k(x)[1]


def _rule(fn, derivative):
    @fn.defjvp
    def jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return fn(x), derivative(x) * dx


_rule(_j0, lambda x: -_j1(x))
_rule(_j1, lambda x: _j0(x) - jnp.where(x == 0, 0.5, _j1(x) / jnp.where(x == 0, 1.0, x)))
_rule(_y0, lambda x: -_y1(x))
_rule(_y1, lambda x: _y0(x) - _y1(x) / x)
_rule(_k0, lambda x: -_k1(x))
_rule(_k1, lambda x: -_k0(x) - _k1(x) / x)
_rule(_k0e, lambda x: _k0e(x) - _k1e(x))
_rule(_k1e, lambda x: _k1e(x) - _k0e(x) - _k1e(x) / x)


def _make(name, core, doc):
    def op(x):
        x = _float(name, x)
        work, dtype = _compute(x)
        return core(work).astype(dtype)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return _public(op)


bessel_j0 = _make("bessel_j0", _j0, "The Bessel function of the first kind of order 0, elementwise.")
bessel_j1 = _make("bessel_j1", _j1, "The Bessel function of the first kind of order 1, elementwise.")
bessel_y0 = _make("bessel_y0", _y0, "The Bessel function of the second kind of order 0 (``-inf`` for ``x <= 0``).")
bessel_y1 = _make("bessel_y1", _y1, "The Bessel function of the second kind of order 1 (``-inf`` for ``x <= 0``).")
bessel_k0 = _make("bessel_k0", _k0, "The modified Bessel function of the second kind of order 0 (``inf`` for ``x <= 0``).")
bessel_k1 = _make("bessel_k1", _k1, "The modified Bessel function of the second kind of order 1 (``inf`` for ``x <= 0``).")
bessel_k0e = _make("bessel_k0e", _k0e, "``bessel_k0(x) * exp(x)``, computed without overflow.")
bessel_k1e = _make("bessel_k1e", _k1e, "``bessel_k1(x) * exp(x)``, computed without overflow.")
