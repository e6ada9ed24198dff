"""Stacked recurrent layers ``RNN``, ``LSTM``, ``GRU`` (MindSpore 2.10's ``nn.layer.rnns``) over ``lax.scan``.

Constructor ``(input_size, hidden_size, num_layers=1, has_bias=True,
batch_first=False, dropout=0.0, bidirectional=False, dtype=float32)``
(``RNN`` also takes ``nonlinearity='tanh'`` or ``'relu'``); call
``(x, hx=None, seq_length=None)``.

Parameters are named as MindSpore names them, so its checkpoints load
unchanged: ``weight_ih_l{k}`` (G*H, I or D*H), ``weight_hh_l{k}`` (G*H, H),
``bias_ih_l{k}``, ``bias_hh_l{k}`` (G*H,), with a ``_reverse`` suffix for the
backward direction, G = 1 (RNN), 4 (LSTM, gates i, f, g, o) or 3 (GRU, r, z, n),
all U(-1/sqrt(H), 1/sqrt(H)).

How it computes: for each layer the input projection of every time step is
one matmul; the recurrence is one ``lax.scan`` over time (both directions of a
bidirectional layer in the same scan, batched over the direction). With
``seq_length``, as in MindSpore, a sequence's state stops changing after its
length, its outputs past the length are zeros, and the backward direction
reads each sequence reversed within its own length.

>>> import cellkit as ms
>>> from cellkit import nn
>>> lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
>>> out, (h, c) = lstm(ms.ops.ones((2, 5, 3)))
>>> out.shape, h.shape, c.shape
((2, 5, 8), (4, 2, 4), (4, 2, 4))
>>> [n for n, _ in lstm.parameters_and_names()][:4]
['weight_ih_l0', 'weight_ih_l0_reverse', 'weight_ih_l1', 'weight_ih_l1_reverse']
"""

from __future__ import annotations

import functools
import math
import warnings

import jax
import jax.numpy as jnp

from ... import dtype as mstype
from ...cell import Cell
from ...eager_jit import host_first
from ...initializer import Uniform
from ...ops.function import array_func
from ...ops.function._utils import _v
from ...random import next_key
from ...tiered_jit import tiered_jit
from .._checks import check_bool, positive_int
from .._init_util import make_param
from .rnn_cells import MODES, check_float, check_nonlinearity, check_state

__all__ = ["RNN", "LSTM", "GRU"]
EAGER_LOOPS = True   # (JAX loops from Python: cellkit.tracing)


class _RNNBase(Cell):
    """The stacked, optionally bidirectional recurrence shared by RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.input_size = positive_int(input_size, "input_size", name)
        self.hidden_size = positive_int(hidden_size, "hidden_size", name)
        self.num_layers = positive_int(num_layers, "num_layers", name)
        if not isinstance(dropout, float):
            raise TypeError(f"For '{name}', the type of 'dropout' must be 'float', but got "
                            f"'{type(dropout).__name__}'.")
        if not 0 <= dropout < 1:
            raise ValueError(f"For '{name}', the 'dropout' must be a number in range [0, 1) representing the "
                             f"probability of an element being zeroed, but got {dropout}.")
        self.has_bias = check_bool(has_bias, "has_bias", name)
        self.batch_first = check_bool(batch_first, "batch_first", name)
        self.bidirectional = check_bool(bidirectional, "bidirectional", name)
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout is applied after every layer but the last, so a non-zero dropout "
                          f"expects num_layers > 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        self.dropout = dropout
        self._mode = mode
        dtype = mstype.float32 if dtype is None else dtype
        gates = MODES[mode][1] * self.hidden_size
        dirs = 2 if self.bidirectional else 1
        init = Uniform(1 / math.sqrt(self.hidden_size))
        suffixes = [f"_l{k}{'_reverse' if d else ''}" for k in range(self.num_layers) for d in range(dirs)]
        in_sizes = [self.input_size if k == 0 else self.hidden_size * dirs
                    for k in range(self.num_layers) for _ in range(dirs)]
        # MindSpore's creation order: every weight_ih, every weight_hh, then the biases.
        shapes = {"weight_ih": lambda i: (gates, in_sizes[i]), "weight_hh": lambda i: (gates, self.hidden_size),
                  "bias_ih": lambda i: (gates,), "bias_hh": lambda i: (gates,)}
        kinds = list(shapes) if self.has_bias else ["weight_ih", "weight_hh"]
        for kind in kinds:
            for i, suffix in enumerate(suffixes):
                setattr(self, kind + suffix, make_param(init, shapes[kind](i), dtype, kind + suffix, what=name))
        self._suffixes = tuple(suffixes)

    def _weights(self):
        """Per layer: a tuple over directions of (w_ih, w_hh, b_ih, b_hh) values."""
        dirs = 2 if self.bidirectional else 1
        out = []
        for k in range(self.num_layers):
            layer = []
            for suffix in self._suffixes[k * dirs:(k + 1) * dirs]:
                w = [getattr(self, kind + suffix, None) for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
                layer.append(tuple(None if p is None else p.value for p in w))
            out.append(tuple(layer))
        return tuple(out)

    def construct(self, x, hx=None, seq_length=None):
        name = self.cls_name
        is_lstm = MODES[self._mode][2]
        x = check_float(x, "x", name)
        if x.ndim != 3 or x.shape[-1] != self.input_size:
            layout = "(batch_size, seq_len, " if self.batch_first else "(seq_len, batch_size, "
            raise ValueError(f"For '{name}', 'x' must have shape {layout}{self.input_size}), but got {x.shape}.")
        batch = x.shape[0] if self.batch_first else x.shape[1]
        dirs = 2 if self.bidirectional else 1
        want = (self.num_layers * dirs, batch, self.hidden_size)
        if hx is None:
            zeros = array_func.zeros(want, x.dtype)   # (cellkit's op: made on the host when eager)
            hx = (zeros, zeros) if is_lstm else zeros
        else:
            hx = check_state(hx, is_lstm, name)
            for i, h in enumerate(hx if is_lstm else (hx,)):
                arg = f"hx[{i}]" if is_lstm else "hx"
                if h.dtype != x.dtype:
                    raise TypeError(f"For '{name}', '{arg}' must have the dtype of 'x' ({x.dtype}), "
                                    f"but got {h.dtype}.")
                if h.shape != want:
                    raise ValueError(f"For '{name}', '{arg}' must have shape (num_layers * num_directions, "
                                     f"batch_size, hidden_size) = {want}, but got {h.shape}.")
        if seq_length is not None:
            seq_length = jnp.asarray(_v(seq_length))
            if seq_length.dtype not in (jnp.int32, jnp.int64):
                raise TypeError(f"For '{name}', 'seq_length' must be an int32 or int64 Tensor, but got "
                                f"{seq_length.dtype}.")
            if seq_length.shape != (batch,):
                raise ValueError(f"For '{name}' batch size of x and seq_length must be equal, but got {batch} "
                                 f"of x and {seq_length.shape[0] if seq_length.ndim else seq_length.shape} "
                                 f"of seq_length.")
        drop = self.dropout if self.training and self.num_layers > 1 else 0.0
        rng = next_key() if drop > 0 else None
        return _stacked_rnn(x, hx, seq_length, self._weights(), rng, mode=self._mode, dropout=drop,
                            batch_first=self.batch_first)

    def extend_repr(self):
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
                f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")


def _reverse(x, lengths):
    """Reverse the time axis (0) of ``x``; with ``lengths``, each sequence within its own length."""
    if lengths is None:
        return x[::-1]
    t = jnp.arange(x.shape[0])[:, None]
    idx = jnp.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)        # (T, N)
    return jnp.take_along_axis(x, idx.reshape(idx.shape + (1,) * (x.ndim - 2)), axis=0)


def _scan(gi, h0, w_hh, b_hh, mask, mode):
    """One direction: ``gi`` (T, N, G*H) input projections, ``h0`` the initial state."""
    step, _, is_lstm = MODES[mode]

    def body(state, inputs):
        g, m = inputs
        new = step(g, state, w_hh, b_hh)
        out = new[0] if is_lstm else new
        if m is not None:
            new = jax.tree.map(lambda n, o: jnp.where(m, n, o), new, state)
            out = jnp.where(m, out, jnp.zeros((), out.dtype))
        return new, out

    return jax.lax.scan(body, h0, (gi, mask))


@host_first
@functools.partial(tiered_jit, inline=True, static_argnames=("mode", "dropout", "batch_first"))
def _stacked_rnn(x, hx, lengths, weights, rng, *, mode, dropout, batch_first):
    """Every layer and direction of a stacked recurrence on a (T, N, I) (or (N, T, I)) input."""
    is_lstm = MODES[mode][2]
    dtype = x.dtype
    weights = jax.tree.map(lambda w: w.astype(dtype), weights)
    if batch_first:
        x = jnp.swapaxes(x, 0, 1)
    mask = None if lengths is None else (jnp.arange(x.shape[0])[:, None] < lengths[None, :])[..., None]
    dirs = len(weights[0])
    h_n, c_n = [], []
    for k, layer in enumerate(weights):
        sl = slice(k * dirs, (k + 1) * dirs)
        h0 = (hx[0][sl], hx[1][sl]) if is_lstm else hx[sl]
        xs = [x] if dirs == 1 else [x, _reverse(x, lengths)]
        gis = [jnp.matmul(xd, w_ih.T) + (0 if b_ih is None else b_ih)
               for xd, (w_ih, _, b_ih, _) in zip(xs, layer)]
        w_hh = jnp.stack([w[1] for w in layer])
        b_hh = None if layer[0][3] is None else jnp.stack([w[3] for w in layer])
        if dirs == 1:
            state, out = _scan(gis[0], jax.tree.map(lambda s: s[0], h0), w_hh[0],
                               None if b_hh is None else b_hh[0], mask, mode)
            state = jax.tree.map(lambda s: s[None], state)
            x = out
        else:
            state, out = jax.vmap(_scan, in_axes=(0, 0, 0, 0, None, None))(
                jnp.stack(gis), h0, w_hh, b_hh, mask, mode)
            x = jnp.concatenate([out[0], _reverse(out[1], lengths)], axis=-1)
        if is_lstm:
            h_n.append(state[0])
            c_n.append(state[1])
        else:
            h_n.append(state)
        if dropout > 0 and k < len(weights) - 1:
            rng, sub = jax.random.split(rng)
            keep = 1.0 - dropout
            x = jnp.where(jax.random.bernoulli(sub, keep, x.shape), x / keep, 0).astype(dtype)
    if batch_first:
        x = jnp.swapaxes(x, 0, 1)
    h = jnp.concatenate(h_n)
    return (x, (h, jnp.concatenate(c_n))) if is_lstm else (x, h)


class RNN(_RNNBase):
    r"""Stacked Elman RNN, ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (MindSpore 2.10).

    Args:
        input_size (int), hidden_size (int).
        num_layers (int): default ``1``.
        nonlinearity (str): ``'tanh'`` (default) or ``'relu'`` (keyword only, as in MindSpore).
        has_bias (bool): default ``True``.
        batch_first (bool): inputs and outputs (N, T, ·) instead of (T, N, ·); default ``False``.
        dropout (float): dropout on every layer's output but the last, while
            training; in [0, 1); default ``0.0``.
        bidirectional (bool): default ``False``.
        dtype: the Parameters' dtype; default ``float32``.

    Inputs: ``x`` (T, N, input_size); ``hx`` (num_layers * num_directions, N,
    hidden_size), default zeros; ``seq_length`` (N,) int32/int64, default None.

    Returns ``(output, h_n)``: output (T, N, num_directions * hidden_size).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> out, h = nn.RNN(10, 16, 2, batch_first=True)(ms.ops.ones((3, 5, 10)), ms.ops.ones((2, 3, 16)))
    >>> out.shape, h.shape
    ((3, 5, 16), (2, 3, 16))
    """

    def __init__(self, *args, **kwargs):
        mode = check_nonlinearity(kwargs.pop("nonlinearity", "tanh"), "RNN")
        super().__init__(mode, *args, **kwargs)

    @property
    def nonlinearity(self):
        return "tanh" if self._mode == "RNN_TANH" else "relu"


class LSTM(_RNNBase):
    r"""Stacked LSTM (MindSpore 2.10): gates ``[i, f, g, o]``, ``c' = f c + i g``, ``h' = o tanh(c')``.

    Arguments as :class:`RNN` (without ``nonlinearity``). ``hx`` is a tuple
    ``(h_0, c_0)``; returns ``(output, (h_n, c_n))``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> out, (h, c) = nn.LSTM(10, 16, 2, batch_first=True)(ms.ops.ones((3, 5, 10)))
    >>> out.shape, h.shape
    ((3, 5, 16), (2, 3, 16))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(_RNNBase):
    r"""Stacked GRU (MindSpore 2.10): gates ``[r, z, n]``, ``h' = n + z (h - n)``.

    Arguments, inputs and outputs as :class:`RNN` (without ``nonlinearity``).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> out, h = nn.GRU(10, 16, bidirectional=True)(ms.ops.ones((5, 3, 10)))
    >>> out.shape, h.shape
    ((5, 3, 32), (2, 3, 16))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)
