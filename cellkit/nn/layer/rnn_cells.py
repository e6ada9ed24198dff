"""Recurrent cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` (MindSpore 2.10's ``nn.layer.rnn_cells``).

One step of a recurrence on a (batch, input_size) input. The step functions
(``rnn_tanh_step`` and friends) are shared with the stacked layers in
``rnns.py``; they take the input projection ``x @ W_ih^T + b_ih`` already
computed, so that a layer computes it once for every time step.

Gate order in the stacked weights is MindSpore's (and PyTorch's): LSTM
``[i, f, g, o]``, GRU ``[r, z, n]``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> cell = nn.LSTMCell(3, 4)
>>> [(n, p.shape) for n, p in cell.parameters_and_names()]
[('weight_ih', (16, 3)), ('weight_hh', (16, 4)), ('bias_ih', (16,)), ('bias_hh', (16,))]
>>> h, c = cell(ms.ops.ones((2, 3)), (ms.ops.zeros((2, 4)), ms.ops.zeros((2, 4))))
>>> h.shape, c.shape
((2, 4), (2, 4))
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...eager_jit import host_first
from ...initializer import Uniform
from ...ops.function._utils import _v
from ...tiered_jit import tiered_jit
from .._checks import check_bool, positive_int
from .._init_util import make_param

__all__ = ["RNNCell", "LSTMCell", "GRUCell"]


def project(x, w, b):
    """``x @ w^T (+ b)``: the input (or hidden) projection of every gate at once."""
    y = jnp.matmul(x, w.T)
    return y if b is None else y + b


def rnn_tanh_step(gi, h, w_hh, b_hh):
    return jnp.tanh(gi + project(h, w_hh, b_hh))


def rnn_relu_step(gi, h, w_hh, b_hh):
    return jax.nn.relu(gi + project(h, w_hh, b_hh))


def lstm_step(gi, state, w_hh, b_hh):
    h, c = state
    i, f, g, o = jnp.split(gi + project(h, w_hh, b_hh), 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    return jax.nn.sigmoid(o) * jnp.tanh(c), c


def gru_step(gi, h, w_hh, b_hh):
    i_r, i_z, i_n = jnp.split(gi, 3, axis=-1)
    h_r, h_z, h_n = jnp.split(project(h, w_hh, b_hh), 3, axis=-1)
    r = jax.nn.sigmoid(i_r + h_r)
    z = jax.nn.sigmoid(i_z + h_z)
    n = jnp.tanh(i_n + r * h_n)
    return n + z * (h - n)


# mode: (step function, gates per hidden unit, carries a (h, c) pair)
MODES = {
    "RNN_TANH": (rnn_tanh_step, 1, False),
    "RNN_RELU": (rnn_relu_step, 1, False),
    "LSTM": (lstm_step, 4, True),
    "GRU": (gru_step, 3, False),
}


def check_float(x, arg, what):
    """``x`` as an array; a TypeError naming ``arg`` unless it is a floating-point tensor."""
    x = _v(x)
    if not hasattr(x, "dtype") or not jnp.issubdtype(x.dtype, jnp.floating):
        got = getattr(x, "dtype", type(x).__name__)
        raise TypeError(f"For '{what}', '{arg}' must be a float16 or float32 Tensor, but got {got}.")
    return jnp.asarray(x)


def check_state(hx, is_lstm, what):
    """``hx`` as an array, or a pair of arrays for an LSTM, checked for type."""
    if not is_lstm:
        return check_float(hx, "hx", what)
    if not isinstance(hx, (tuple, list)):
        raise TypeError(f"For '{what}', 'hx' must be a tuple (h, c) of two Tensors, but got "
                        f"{type(hx).__name__}.")
    if len(hx) != 2:
        raise TypeError(f"For '{what}', the length of 'hx' must be 2, but got {len(hx)}.")
    return check_float(hx[0], "hx[0]", what), check_float(hx[1], "hx[1]", what)


def check_nonlinearity(nonlinearity, what):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"For '{what}', the 'nonlinearity' must be in ['tanh', 'relu'], but got "
                         f"{nonlinearity!r}.")
    return "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


class _RNNCellBase(Cell):
    """Parameters ``weight_ih`` (G*H, I), ``weight_hh`` (G*H, H), ``bias_ih``, ``bias_hh`` (G*H,),
    all U(-1/sqrt(H), 1/sqrt(H)) as MindSpore initialises them."""

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, has_bias, dtype):
        super().__init__()
        name = self.cls_name
        self.input_size = positive_int(input_size, "input_size", name)
        self.hidden_size = positive_int(hidden_size, "hidden_size", name)
        self.has_bias = check_bool(has_bias, "has_bias", name)
        dtype = mstype.float32 if dtype is None else dtype
        gates = MODES[self._mode][1] * self.hidden_size
        init = Uniform(1 / math.sqrt(self.hidden_size))
        self.weight_ih = make_param(init, (gates, self.input_size), dtype, "weight_ih", what=name)
        self.weight_hh = make_param(init, (gates, self.hidden_size), dtype, "weight_hh", what=name)
        self.bias_ih = make_param(init, (gates,), dtype, "bias_ih", what=name) if has_bias else None
        self.bias_hh = make_param(init, (gates,), dtype, "bias_hh", what=name) if has_bias else None

    def construct(self, x, hx):
        name = self.cls_name
        is_lstm = MODES[self._mode][2]
        x = check_float(x, "x", name)
        hx = check_state(hx, is_lstm, name)
        if x.ndim != 2 or x.shape[-1] != self.input_size:
            raise ValueError(f"For '{name}', 'x' must have shape (batch_size, {self.input_size}), "
                             f"but got {x.shape}.")
        want = (x.shape[0], self.hidden_size)
        for i, h in enumerate(hx if is_lstm else (hx,)):
            if h.shape != want:
                arg = f"hx[{i}]" if is_lstm else "hx"
                raise ValueError(f"For '{name}', '{arg}' must have shape {want}, but got {h.shape}.")
        b = (None, None) if self.bias_ih is None else (self.bias_ih.value, self.bias_hh.value)
        return _cell_step(x, hx, self.weight_ih.value, self.weight_hh.value, *b, mode=self._mode)

    def extend_repr(self):
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}, has_bias={self.has_bias}"


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("mode",))
def _cell_step(x, hx, w_ih, w_hh, b_ih, b_hh, *, mode):
    return MODES[mode][0](project(x, w_ih, b_ih), hx, w_hh, b_hh)


class RNNCell(_RNNCellBase):
    r"""An Elman RNN cell: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (MindSpore 2.10).

    Args:
        input_size (int), hidden_size (int).
        has_bias (bool): default ``True``.
        nonlinearity (str): ``'tanh'`` (default) or ``'relu'``.
        dtype: the Parameters' dtype; default ``float32``.

    Inputs: ``x`` (batch, input_size), ``hx`` (batch, hidden_size). Output: the new hidden state.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> cell = nn.RNNCell(2, 3, nonlinearity='relu')
    >>> cell(ms.ops.ones((4, 2)), ms.ops.zeros((4, 3))).shape
    (4, 3)
    """

    def __init__(self, input_size, hidden_size, has_bias=True, nonlinearity="tanh", dtype=mstype.float32):
        self._mode = check_nonlinearity(nonlinearity, "RNNCell")
        super().__init__(input_size, hidden_size, has_bias, dtype)
        self.nonlinearity = nonlinearity


class LSTMCell(_RNNCellBase):
    r"""An LSTM cell (MindSpore 2.10): ``(h', c') = LSTMCell(x, (h, c))``, gates ``[i, f, g, o]``.

    Args:
        input_size (int), hidden_size (int).
        has_bias (bool): default ``True``.
        dtype: the Parameters' dtype; default ``float32``.

    Inputs: ``x`` (batch, input_size), ``hx`` a tuple ``(h, c)`` of (batch, hidden_size).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> h, c = nn.LSTMCell(2, 3)(ms.ops.ones((4, 2)), (ms.ops.zeros((4, 3)), ms.ops.zeros((4, 3))))
    >>> h.shape
    (4, 3)
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, dtype)


class GRUCell(_RNNCellBase):
    r"""A GRU cell (MindSpore 2.10), gates ``[r, z, n]``: ``h' = n + z * (h - n)``.

    Args:
        input_size (int), hidden_size (int).
        has_bias (bool): default ``True``.
        dtype: the Parameters' dtype; default ``float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.GRUCell(2, 3)(ms.ops.ones((4, 2)), ms.ops.zeros((4, 3))).shape
    (4, 3)
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, dtype)
