"""Transformer layers with MindSpore 2.10's signatures: ``TransformerEncoderLayer``,
``TransformerDecoderLayer``, ``TransformerEncoder``, ``TransformerDecoder``, ``Transformer``.

Built from :class:`MultiheadAttention`, ``Dense`` (``dense1``, ``dense2``) and
``LayerNorm`` (``norm1``...), so the Parameter names are MindSpore's:
``self_attn.in_proj_weight``, ``dense1.weight``, ``norm1.gamma``,
``layers.0.multihead_attn.out_proj.bias``...

Masks follow ``MultiheadAttention``: ``src_mask``/``tgt_mask``/``memory_mask``
are (L, S) or (N*nhead, L, S); ``*_key_padding_mask`` is (N, S). In a bool mask
True means "masked out"; a float mask is added to the attention scores (use
``-inf`` to mask). A key padding mask of another dtype is refused with an
AssertionError, as in MindSpore.

>>> import cellkit as ms
>>> from cellkit import nn
>>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
>>> enc = nn.TransformerEncoder(layer, num_layers=2)
>>> enc(ms.ops.ones((3, 5, 8))).shape
(3, 5, 8)
>>> [n for n, _ in enc.parameters_and_names()][:3]
['layers.0.self_attn.in_proj_weight', 'layers.0.self_attn.in_proj_bias', 'layers.0.self_attn.out_proj.weight']
"""

from __future__ import annotations

import copy
import math

import jax.numpy as jnp

from ... import dtype as mstype
from ... import ops
from ...cell import Cell
from ...initializer import HeUniform, Uniform, initializer
from ...ops.function._utils import _v
from .._checks import check_bool, positive_int
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .basic import Dense, Dropout
from .container import CellList
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder",
           "Transformer"]


def _activation(activation, what):
    """MindSpore's rule: 'relu'/'gelu', an nn.ReLU/nn.GELU instance, or ops.relu/ops.gelu."""
    if isinstance(activation, str):
        if activation == "relu":
            return ops.relu
        if activation == "gelu":
            return ops.gelu
        raise ValueError(f"For '{what}', the activation must be relu/gelu, but got {activation!r}.")
    if isinstance(activation, Cell):
        if not isinstance(activation, (ReLU, GELU)):
            raise ValueError(f"For '{what}', the argument 'activation' must be an nn.ReLU or nn.GELU instance, "
                             f"but got {activation!r}.")
        return activation
    if callable(activation):
        if activation is not ops.relu and activation is not ops.gelu:
            raise ValueError(f"For '{what}', the argument 'activation' must be ops.relu or ops.gelu, but got "
                             f"{activation!r}.")
        return activation
    raise ValueError(f"For '{what}', the argument 'activation' must be a str, callable or Cell instance, "
                     f"but got {activation!r}.")


def _check_padding_mask(mask, arg):
    if mask is None:
        return
    dtype = jnp.result_type(_v(mask))
    if dtype != jnp.bool_ and not jnp.issubdtype(dtype, jnp.floating):
        raise AssertionError(f"only bool and floating types of {arg} are supported, got {dtype}")


class _LayerBase(Cell):
    """The shared constructor: attention blocks, the feed-forward block, norms and dropouts."""

    _cross = False

    def __init__(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                 norm_first, dtype):
        super().__init__()
        name = self.cls_name
        positive_int(d_model, "d_model", name)
        positive_int(nhead, "nhead", name)
        positive_int(dim_feedforward, "dim_feedforward", name)
        dtype = mstype.float32 if dtype is None else dtype
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, dtype=dtype)
        if self._cross:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                     dtype=dtype)
        self.dense1 = Dense(d_model, dim_feedforward, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(d_model)), dtype=dtype)
        self.dropout = Dropout(p=dropout)
        self.dense2 = Dense(dim_feedforward, d_model, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(dim_feedforward)), dtype=dtype)
        self.norm_first = check_bool(norm_first, "norm_first", name)
        norms = 3 if self._cross else 2
        for i in range(1, norms + 1):
            setattr(self, f"norm{i}", LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for i in range(1, norms + 1):
            setattr(self, f"dropout{i}", Dropout(p=dropout))
        self.activation1 = activation
        self.activation = _activation(activation, name)
        self.d_model = d_model
        self.nhead = nhead
        self.dim_feedforward = dim_feedforward
        self.dropout_num = dropout
        self.layernorm_eps = layer_norm_eps
        self.batch_first = batch_first
        self.dtype = dtype

    def _attn_block(self, attn, drop, x, mem, attn_mask, key_padding_mask):
        x = attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return drop(x)

    def _ff_block(self, x, drop):
        return drop(self.dense2(self.dropout(self.activation(self.dense1(x)))))


class TransformerEncoderLayer(_LayerBase):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm (MindSpore 2.10).

    Args:
        d_model (int): model width; nhead (int): attention heads.
        dim_feedforward (int): default ``2048``.
        dropout (float): default ``0.1`` (active only in training mode).
        activation: ``'relu'`` (default), ``'gelu'``, ``nn.ReLU()``/``nn.GELU()``
            or ``ops.relu``/``ops.gelu``.
        layer_norm_eps (float): default ``1e-5``.
        batch_first (bool): (N, L, E) instead of (L, N, E); default ``False``.
        norm_first (bool): pre-norm (LayerNorm before each block); default ``False``.
        dtype: default ``float32``.

    Inputs: ``src``, ``src_mask=None``, ``src_key_padding_mask=None``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.TransformerEncoderLayer(8, 2, 16)(ms.ops.ones((5, 3, 8))).shape
    (5, 3, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, dtype)

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask, "key_padding_mask")
        x = src
        if self.norm_first:
            h = self.norm1(x)
            x = x + self._attn_block(self.self_attn, self.dropout1, h, h, src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._attn_block(self.self_attn, self.dropout1, x, x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_LayerBase):
    """Self-attention, attention over ``memory``, then a feed-forward block (MindSpore 2.10).

    Defaults (MindSpore 2.10's): ``dim_feedforward=2048``, ``dropout=0.1``, ``activation='relu'``,
    ``layer_norm_eps=1e-05``, ``batch_first=False``, ``norm_first=False``, ``dtype=Float32``.

    Arguments as :class:`TransformerEncoderLayer`. Inputs: ``tgt``, ``memory``,
    ``tgt_mask``, ``memory_mask``, ``tgt_key_padding_mask``, ``memory_key_padding_mask``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> dec = nn.TransformerDecoderLayer(8, 2, 16)
    >>> dec(ms.ops.ones((4, 3, 8)), ms.ops.ones((5, 3, 8))).shape
    (4, 3, 8)
    """

    _cross = True

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, dtype)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            h = self.norm1(x)
            x = x + self._attn_block(self.self_attn, self.dropout1, h, h, tgt_mask, tgt_key_padding_mask)
            x = x + self._attn_block(self.multihead_attn, self.dropout2, self.norm2(x), memory, memory_mask,
                                     memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._attn_block(self.self_attn, self.dropout1, x, x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._attn_block(self.multihead_attn, self.dropout2, x, memory, memory_mask,
                                            memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x, self.dropout3))


def _clones(layer, cls, num_layers, what):
    """``num_layers`` copies of a fresh ``cls`` built from ``layer``'s arguments, as MindSpore does
    (every copy starts from the same weights; ``layer``'s own Parameters are not used)."""
    if not isinstance(layer, cls):
        raise TypeError(f"For '{what}', the first argument must be a {cls.__name__}, but got "
                        f"{type(layer).__name__}.")
    positive_int(num_layers, "num_layers", what)
    fresh = cls(layer.d_model, layer.nhead, layer.dim_feedforward, layer.dropout_num, layer.activation1,
                layer.layernorm_eps, layer.batch_first, layer.norm_first, dtype=layer.dtype)
    for p in fresh.get_parameters():
        p.init_data()   # drawn once, so that every copy holds the same values
    return CellList([copy.deepcopy(fresh) for _ in range(num_layers)])


class TransformerEncoder(Cell):
    """``num_layers`` copies of ``encoder_layer`` and an optional final ``norm`` (MindSpore 2.10).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, norm=nn.LayerNorm((8,)))
    >>> enc(ms.ops.ones((5, 3, 8)), src_key_padding_mask=ms.ops.zeros((3, 5), ms.bool_)).shape
    (5, 3, 8)
    """

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, TransformerEncoderLayer, num_layers, self.cls_name)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask, "key_padding_mask")
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Cell):
    """``num_layers`` copies of ``decoder_layer`` and an optional final ``norm`` (MindSpore 2.10).

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2)
    >>> dec(ms.ops.ones((4, 3, 8)), ms.ops.ones((5, 3, 8))).shape
    (4, 3, 8)
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, TransformerDecoderLayer, num_layers, self.cls_name)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask)
        return out if self.norm is None else self.norm(out)


class Transformer(Cell):
    """Encoder-decoder Transformer (MindSpore 2.10): ``decoder(tgt, encoder(src))``.

    Args: ``d_model=512``, ``nhead=8``, ``num_encoder_layers=6``,
    ``num_decoder_layers=6``, ``dim_feedforward=2048``, ``dropout=0.1``,
    ``activation='relu'``, ``custom_encoder=None``, ``custom_decoder=None``,
    ``layer_norm_eps=1e-5``, ``batch_first=False``, ``norm_first=False``,
    ``dtype=float32``. Every Parameter of 2 or more dimensions is
    re-initialised XavierUniform, as in MindSpore; the encoder and decoder end
    with a LayerNorm.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Transformer(8, 2, 1, 1, 16)
    >>> net(ms.ops.ones((5, 3, 8)), ms.ops.ones((4, 3, 8))).shape
    (4, 3, 8)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for _, p in self.parameters_and_names():
            if p.ndim > 1:
                p.set_data(initializer("xavier_uniform", p.shape, p.dtype))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        src_, tgt_ = _v(src), _v(tgt)
        if src_.ndim == 3:
            axis = 0 if self.batch_first else 1
            if src_.shape[axis] != tgt_.shape[axis]:
                raise ValueError("The number of batch size for 'src' and 'tgt' must be equal.")
        if src_.shape[-1] != self.d_model or tgt_.shape[-1] != self.d_model:
            raise ValueError(f"The number of features for 'src' and 'tgt' must be equal to `d_model` "
                             f"({self.d_model}), but got {src_.shape[-1]} and {tgt_.shape[-1]}.")
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
