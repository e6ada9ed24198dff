"""``cellkit.amp``: mixed precision as MindSpore's ``mindspore.amp``.

Mixed precision is a dtype policy on Cells: ``Cell.to_float(dst_type)`` marks a
Cell (and its sub-Cells) to compute in ``dst_type``; calling it casts its
floating Tensor inputs and its own Parameters to that type (the Parameters stay
float32, and so do their gradients). :func:`auto_mixed_precision` sets the
policy by level:

* ``"O0"``: nothing.
* ``"O1"``: the white-list Cells (Dense, convolutions, RNN cells) compute in
  ``dtype``; their outputs are cast back to float32.
* ``"O2"``: everything in ``dtype`` except the black list (BatchNorm, LayerNorm),
  which stays float32; the network's output is float32.
* ``"O3"``: everything in ``dtype``; the output is float32.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn, amp
>>> net = amp.auto_mixed_precision(nn.SequentialCell([nn.Dense(3, 4), nn.BatchNorm1d(4)]), "O2")
>>> out = net(ms.Tensor(np.ones((2, 3), np.float32)))
>>> out.dtype, net._backbone[0].fp16, net._backbone[1]._backbone.fp32
(dtype('float32'), True, True)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import dtype as mstype
from .cell import Cell, _call_failed, precision_call, special_call
from .engine import Frame, _Active, _apply_writes
from .parameter import Parameter, bump_structure, local
from .nn.wrap.loss_scale import (DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,  # noqa: F401 (amp.*)
                                 TrainOneStepWithLossScaleCell)
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from . import nn

__all__ = ["DynamicLossScaleManager", "LossScaleManager", "FixedLossScaleManager", "build_train_network",
           "DynamicLossScaler", "StaticLossScaler", "LossScaler", "auto_mixed_precision", "all_finite",
           "custom_mixed_precision", "get_white_list", "get_black_list"]


# ----- the policy: how a Cell with a mixed-precision type is called -----------------------

def _floating(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray)) and jnp.issubdtype(x.dtype, jnp.floating)


def _cast_tree(tree, dst):
    def cast(x):
        if isinstance(x, Parameter):
            x = x.value
        return x.astype(dst) if _floating(x) and x.dtype != dst else x
    return jax.tree.map(cast, tree, is_leaf=lambda x: isinstance(x, Parameter))


def _policy_call(cell, args, kwargs):
    """Call ``cell`` with floating inputs and its own floating Parameters cast to its type."""
    dst = np.dtype(mstype.dtype_to_nptype(cell._mixed_precision_type))
    args, kwargs = _cast_tree(args, dst), _cast_tree(kwargs, dst)
    parent = local.frame
    frame = Frame(parent)
    own = [p for _, p in cell._own_params()]
    for p in own:
        value = parent.read(p) if parent is not None else p._get()
        if jnp.issubdtype(value.dtype, jnp.floating) and value.dtype != dst:
            frame.bind(p, value.astype(dst))
    try:
        with _Active(frame):
            if cell._ck_bprop:
                out = special_call[0](cell, args, kwargs)
            else:
                try:
                    out = cell.construct(*args, **kwargs)
                except Exception as err:
                    new = _call_failed(cell, err, args, kwargs)
                    if new is None:
                        raise
                    raise new from err
    finally:
        pass
    writes = [(p, v.astype(p._get().dtype) if _floating(v) else v) for p, v in frame.writes()]
    _apply_writes(parent, writes)
    return out


precision_call[0] = _policy_call


# ----- levels -----------------------------------------------------------------------------

def _white_list():
    names = ["Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose", "Dense",
             "LSTMCell", "RNNCell", "GRUCell"]
    return [getattr(nn, n) for n in names if hasattr(nn.layer, n) or n in nn.__all__]


def _black_list():
    names = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm"]
    return [getattr(nn, n) for n in names if n in nn.__all__]


def get_white_list():
    """The Cell classes "O1" runs in low precision (a copy)."""
    return list(_white_list())


def get_black_list():
    """The Cell classes "O2" keeps in float32 (a copy)."""
    return list(_black_list())


class _OutputTo16(Cell):
    """``backbone`` (a float32 Cell) with its output cast to ``dtype``."""

    def __init__(self, backbone, dtype=mstype.float16):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self.dtype = dtype

    def construct(self, *args, **kwargs):
        return _cast_tree(self._backbone(*args, **kwargs), np.dtype(mstype.dtype_to_nptype(self.dtype)))


class _OutputTo32(Cell):
    """``backbone`` with its floating outputs cast to float32."""

    def __init__(self, backbone):
        super().__init__(auto_prefix=False)
        self._backbone = backbone

    def construct(self, *args, **kwargs):
        return _cast_tree(self._backbone(*args, **kwargs), np.dtype(np.float32))

    def __getitem__(self, index):
        return self._backbone[index]


def _replace_children(network, match, wrap):
    """Replace each sub-Cell (at any depth) for which ``match`` holds by ``wrap(sub_cell)``."""
    for name, sub in list(network.name_cells().items()):
        if match(sub):
            new = wrap(sub)
            network.__dict__[name] = new
            if isinstance(network, nn.SequentialCell):
                _sequential_replace(network, sub, new)
            bump_structure()
        else:
            _replace_children(sub, match, wrap)
    return network


def _sequential_replace(seq, old, new):
    cells = getattr(seq, "cell_list", None)
    if isinstance(cells, list):
        seq.__dict__["cell_list"] = [new if c is old else c for c in cells]


def _auto_black_list(network, black_list, dtype):
    network.to_float(dtype)
    kinds = tuple(black_list)
    return _replace_children(network, lambda c: isinstance(c, kinds),
                             lambda c: _OutputTo16(c.to_float(mstype.float32), dtype))


def _auto_white_list(network, white_list, dtype):
    kinds = tuple(white_list)
    return _replace_children(network, lambda c: isinstance(c, kinds), lambda c: _OutputTo32(c.to_float(dtype)))


def _check_dtype(dtype):
    if dtype not in (mstype.float16, mstype.bfloat16):
        raise ValueError(f"The dtype should be one of (mstype.float16, mstype.bfloat16), but got {dtype}.")


def auto_mixed_precision(network, amp_level="O0", dtype=mstype.float16):
    """Set mixed precision on ``network`` by ``amp_level`` ("O0", "O1", "O2", "O3"); returns the
    network to use (wrapped so that its output is float32 for "O2"/"O3").

    Sub-Cells are replaced in place (as MindSpore does), so the Parameters keep their names.
    ``"auto"`` (MindSpore's per-operator lists) is refused: use "O1"..."O3".
    """
    if not isinstance(network, Cell):
        raise TypeError(f"For amp_level '{amp_level}', the network type should be Cell.")
    _check_dtype(dtype)
    if amp_level == "O0":
        return network
    if amp_level == "O1":
        network = _auto_white_list(network, _white_list(), dtype)
    elif amp_level == "O2":
        network = _OutputTo32(_auto_black_list(network, _black_list(), dtype))
    elif amp_level == "O3":
        network = _OutputTo32(network.to_float(dtype))
    elif amp_level == "auto":
        raise NotImplementedError("amp_level 'auto' (per-operator casting lists) is not supported by cellkit: "
                                  "use 'O1', 'O2' or 'O3'.")
    else:
        raise ValueError(f"The amp level {amp_level} is not supported")
    network.__dict__["_amp_level"] = amp_level
    return network


def custom_mixed_precision(network, *, white_list=None, black_list=None, dtype=mstype.float16):
    """Mixed precision by your own lists of Cell classes: ``white_list`` (only those in ``dtype``)
    or ``black_list`` (all but those)."""
    if not isinstance(network, Cell):
        raise TypeError("The network type should be Cell.")
    if white_list is None and black_list is None:
        raise ValueError("For custom_mixed_precision, one of white_list and black_list must be provided.")
    if white_list is not None and black_list is not None:
        raise ValueError("For custom_mixed_precision, the white_list or black_list cannot be provided at the same "
                         "time, please provide one or the other.")
    _check_dtype(dtype)
    name = "white_list" if white_list is not None else "black_list"
    given = white_list if white_list is not None else black_list
    if not isinstance(given, list):
        raise TypeError(f"The type of {name} should be list, but got {type(given)}")
    for elem in given:
        if not (isinstance(elem, type) and issubclass(elem, Cell)):
            raise TypeError(f"The element in {name} should be a Cell class, but got {elem}")
    if white_list is not None:
        return _auto_white_list(network, white_list, dtype)
    return _OutputTo32(_auto_black_list(network, black_list, dtype))


# ----- building the training network ---------------------------------------------------------

_config_level = {
    "O0": {"keep_batchnorm_fp32": False, "cast_model_type": mstype.float32, "loss_scale_manager": None},
    "O1": {"keep_batchnorm_fp32": False, "cast_model_type": mstype.float32, "loss_scale_manager": None},
    "O2": {"keep_batchnorm_fp32": True, "cast_model_type": mstype.float16, "loss_scale_manager": "dynamic"},
    "O3": {"keep_batchnorm_fp32": False, "cast_model_type": mstype.float16, "loss_scale_manager": None},
}


class _WithLossCellFp32(Cell):
    """MindSpore's amp loss wrapper: the loss computed on float32 outputs and labels."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        f32 = np.dtype(np.float32)
        return self._loss_fn(_cast_tree(self._backbone(data), f32), _cast_tree(label, f32))


def build_train_network(network, optimizer, loss_fn=None, level="O0", boost_level="O0", **kwargs):
    """The training network MindSpore's ``Model`` uses: mixed precision by ``level``, the loss,
    and a one-step Cell (with loss scaling when a loss-scale manager asks for it).

    Keyword args: ``cast_model_type`` (float16/float32), ``keep_batchnorm_fp32`` (bool),
    ``loss_scale_manager`` (default: ``DynamicLossScaleManager()`` for "O2", none otherwise).
    """
    if not isinstance(optimizer, nn.Optimizer):
        raise TypeError(f"For 'build_train_network', 'optimizer' must be an Optimizer, but got "
                        f"{type(optimizer).__name__}.")
    if not isinstance(level, str):
        raise TypeError("The argument `level` must be a string in ['O0', 'O1', 'O2', 'O3', 'auto'],but got type "
                        f"{type(level)}.")
    if level == "auto":
        raise NotImplementedError("amp level 'auto' is not supported by cellkit: use 'O1', 'O2' or 'O3'.")
    if level not in _config_level:
        raise ValueError(f"For 'build_train_network', 'level' must be in ['O0', 'O1', 'O2', 'O3', 'auto'], but got "
                         f"{level!r}.")
    if boost_level not in ("O0", "O1", "O2"):
        raise ValueError(f"For 'build_train_network', 'boost_level' must be in ['O0', 'O1', 'O2'], but got "
                         f"{boost_level!r}.")
    for arg in kwargs:
        if arg not in ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager"):
            raise ValueError(f"Unsupported arg '{arg}'")
    if "cast_model_type" in kwargs and kwargs["cast_model_type"] not in (mstype.float16, mstype.float32):
        raise TypeError(f"For 'build_train_network', 'cast_model_type' must be float16 or float32, but got "
                        f"{kwargs['cast_model_type']}.")
    if "keep_batchnorm_fp32" in kwargs and not isinstance(kwargs["keep_batchnorm_fp32"], bool):
        raise TypeError("For 'build_train_network', 'keep_batchnorm_fp32' must be bool.")
    lsm = kwargs.get("loss_scale_manager")
    if lsm is not None and not isinstance(lsm, LossScaleManager):
        raise TypeError(f"For 'build_train_network', 'loss_scale_manager' must be a LossScaleManager, but got "
                        f"{type(lsm).__name__}.")
    config = dict(_config_level[level], **kwargs)
    if config["loss_scale_manager"] == "dynamic":
        config["loss_scale_manager"] = DynamicLossScaleManager()
    if config["cast_model_type"] == mstype.float16:
        network.to_float(mstype.float16)
        if config["keep_batchnorm_fp32"]:
            _replace_children(network, lambda c: isinstance(c, tuple(_black_list())),
                              lambda c: _OutputTo16(c.to_float(mstype.float32)))
    elif not config["keep_batchnorm_fp32"] and level == "O2":
        network.to_float(mstype.float16)
    elif not (config["cast_model_type"] == mstype.float32 and level in ("O2", "O3")):
        network = auto_mixed_precision(network, level)
    if loss_fn:
        if not isinstance(loss_fn, Cell):
            raise TypeError(f"For 'build_train_network', 'loss_fn' must be a Cell, but got {type(loss_fn).__name__}.")
        if config["cast_model_type"] in (mstype.float16, mstype.bfloat16):
            network = _WithLossCellFp32(network, loss_fn)
        else:
            network = nn.WithLossCell(network, loss_fn)
    manager = config["loss_scale_manager"]
    loss_scale = None
    if manager is not None:
        loss_scale = manager.get_loss_scale()
        update_cell = manager.get_update_cell()
        if update_cell is not None:
            return TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell).set_train()
    return nn.TrainOneStepCell(network, optimizer, loss_scale).set_train()


# ----- loss scalers for functional training --------------------------------------------------

def all_finite(inputs):
    """Are all elements of all arrays in ``inputs`` finite? (a bool Tensor)

    >>> import cellkit as ms
    >>> from cellkit import amp
    >>> bool(amp.all_finite((ms.Tensor([1.0, 2.0]), ms.Tensor([float("inf")]))))
    False
    """
    leaves = [x.value if isinstance(x, Parameter) else x
              for x in jax.tree.leaves(inputs, is_leaf=lambda x: isinstance(x, Parameter))]
    if not leaves:
        return jnp.asarray(True)
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))


class LossScaler:
    """Base class: ``scale(inputs)``, ``unscale(inputs)``, ``adjust(grads_finite)``."""

    def scale(self, inputs):
        raise NotImplementedError

    def unscale(self, inputs):
        raise NotImplementedError

    def adjust(self, grads_finite):
        raise NotImplementedError


def _check_scale_value(scale_value):
    if isinstance(scale_value, bool) or not isinstance(scale_value, (float, int)):
        raise TypeError(f"The type of 'scale_value' should be one of [float, int], but got {type(scale_value)}.")
    if scale_value < 1.0:
        raise ValueError(f"The argument 'scale_value' must be > 1, but got {scale_value}")


class StaticLossScaler(LossScaler):
    """Multiply by (``scale``) and divide by (``unscale``) a constant ``scale_value``.

    >>> import cellkit as ms
    >>> from cellkit import amp
    >>> s = amp.StaticLossScaler(1024)
    >>> s.unscale(s.scale(ms.Tensor(0.5)))
    Array(0.5, dtype=float32)
    """

    def __init__(self, scale_value):
        _check_scale_value(scale_value)
        self.scale_value = Parameter(np.asarray(scale_value, np.float32), name="scale_value")

    def scale(self, inputs):
        s = self.scale_value.value
        return jax.tree.map(lambda x: x * s.astype(x.dtype), inputs)

    def unscale(self, inputs):
        s = 1 / self.scale_value.value
        return jax.tree.map(lambda x: x * s.astype(x.dtype), inputs)

    def adjust(self, grads_finite):
        return False


class DynamicLossScaler(StaticLossScaler):
    """A scale that ``adjust(grads_finite)`` divides by ``scale_factor`` (not below 1) after an
    overflow and multiplies by it after ``scale_window`` finite steps (state in Parameters, so
    it works inside ``cellkit.jit``)."""

    def __init__(self, scale_value, scale_factor, scale_window):
        super().__init__(scale_value)
        for name, v in (("scale_window", scale_window), ("scale_factor", scale_factor)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"For 'DynamicLossScaler', '{name}' must be a positive int, but got {v!r}.")
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.counter = Parameter(np.asarray(0, np.int32), name="counter")

    def adjust(self, grads_finite):
        from .ops.function.parameter_func import assign
        scale = self.scale_value.value
        counter = self.counter.value
        grads_finite = jnp.asarray(grads_finite)
        mul = scale * self.scale_factor
        grown = jnp.where(counter == self.scale_window - 1, jnp.where(jnp.isfinite(mul), mul, scale), scale)
        new = jnp.where(grads_finite, grown, jnp.maximum(jnp.ones((), scale.dtype), scale / self.scale_factor))
        assign(self.scale_value, new)
        assign(self.counter, ((counter + 1) % self.scale_window * grads_finite).astype(counter.dtype))
        return True
