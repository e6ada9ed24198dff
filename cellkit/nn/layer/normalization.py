"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``SyncBatchNorm``, ``LayerNorm``, ``GroupNorm``,
``InstanceNorm1d/2d/3d``.

BatchNorm keeps its running statistics in Parameters (``moving_mean``,
``moving_variance``, ``requires_grad=False``) and updates them with
``ops.assign``, so the update is written back after ``cellkit.jit`` and
``value_and_grad`` like any other Parameter write.

>>> import cellkit as ms
>>> from cellkit import nn
>>> bn = nn.BatchNorm2d(3)
>>> [name for name, _ in bn.parameters_and_names()]
['moving_mean', 'moving_variance', 'gamma', 'beta']
>>> bn(ms.ops.ones((2, 3, 4, 4))).shape
(2, 3, 4, 4)
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ... import ops
from ...cell import Cell
from ...ops.function._utils import _v
from ...ops.function.norm_func import batch_norm_core as _batch_norm
from ...ops.function.norm_func import group_norm_core as _group_norm
from ...ops.function.norm_func import layer_norm_core as _layer_norm
from .._checks import check_bool, data_format_of, is_int, positive_int
from .._init_util import make_param

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d"]


class _BatchNorm(Cell):
    """Batch normalisation over every axis but the channel axis.

    ``y = (x - mean) / sqrt(var + eps) * gamma + beta``. With batch statistics
    the variance is the biased one; the running variance is updated with the
    unbiased one: ``moving = momentum * moving + (1 - momentum) * batch``.
    """

    _ndims = (4,)
    _layout = "(N, C, H, W)"

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW", dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not is_int(num_features):
            raise TypeError(f"For '{name}', 'num_features' must be an int, but got "
                            f"{type(num_features).__name__} {num_features!r}.")
        if num_features < 1:
            raise ValueError(f"For '{name}', the 'num_features' must be at least 1, but got {num_features}.")
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or not 0 <= momentum <= 1:
            raise ValueError(f"For '{name}', the 'momentum' must be a number in range [0, 1], "
                             f"but got {momentum!r}.")
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or eps < 0:
            raise ValueError(f"For '{name}', 'eps' must be a non-negative float, but got {eps!r}.")
        if use_batch_statistics is not None and not isinstance(use_batch_statistics, bool):
            raise ValueError(f"For '{name}', the 'use_batch_statistics' must be a boolean value or None, "
                             f"but got {use_batch_statistics!r}.")
        affine = check_bool(affine, "affine", name)
        self.format = data_format_of(data_format, ("NCHW", "NHWC"), name)
        self.use_batch_statistics = use_batch_statistics
        self.num_features = int(num_features)
        self.eps = eps
        self.affine = affine
        self.gamma_init, self.beta_init = gamma_init, beta_init
        self.moving_mean_init, self.moving_var_init = moving_mean_init, moving_var_init
        # MindSpore keeps 1 - momentum (its BatchNorm op's momentum) and prints 1 - that.
        self.momentum = 1.0 - momentum
        c = (self.num_features,)
        self.moving_mean = make_param(moving_mean_init, c, dtype, "mean", requires_grad=False, what=name)
        self.moving_variance = make_param(moving_var_init, c, dtype, "variance", requires_grad=False, what=name)
        self.gamma = make_param(gamma_init, c, dtype, "gamma", requires_grad=affine, what=name)
        self.beta = make_param(beta_init, c, dtype, "beta", requires_grad=affine, what=name)

    def _check_input(self, x):
        shape = tuple(jnp.shape(x))
        axis = -1 if self.format == "NHWC" else 1
        if len(shape) not in self._ndims or shape[axis] != self.num_features:
            layout = self._layout.replace("C", str(self.num_features))
            raise ValueError(f"{self.cls_name}: expected an input of shape {layout} with "
                             f"num_features={self.num_features} channels, got {shape}")
        return shape

    def construct(self, x):
        shape = self._check_input(x)
        x = _v(x)
        axis = len(shape) - 1 if self.format == "NHWC" else 1
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if use_batch:
            n = int(np.prod([d for i, d in enumerate(shape) if i != axis]))
            if n < 2:
                raise ValueError(f"{self.cls_name}: batch statistics need more than one value per channel, "
                                 f"got an input of shape {shape} (MindSpore would give NaN running "
                                 "variance); use a larger batch or set_train(False)")
        y, mean, var = _batch_norm(x, self.moving_mean.value, self.moving_variance.value, self.gamma.value,
                                   self.beta.value, axis=axis, use_batch=bool(use_batch), eps=self.eps,
                                   momentum=self.momentum)
        if use_batch:
            ops.assign(self.moving_mean, mean)
            ops.assign(self.moving_variance, var)
        return y

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={1.0 - self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")


_BN_ARGS = """
    Args:
        num_features (int): channels C.
        eps (float): added to the variance; default ``1e-05``.
        momentum (float): weight of the old running value; default ``0.9``
            (``moving = momentum * moving + (1 - momentum) * batch``; the
            opposite of PyTorch's convention, the same as flax's).
        affine (bool): whether ``gamma`` and ``beta`` are trainable; default ``True``.
        gamma_init, beta_init: default ``'ones'``, ``'zeros'``.
        moving_mean_init, moving_var_init: default ``'zeros'``, ``'ones'``.
        use_batch_statistics (bool or None): default ``None``: batch statistics
            (and running-statistics updates) while training, the running
            statistics in predict mode. ``True``: always batch statistics, and
            the running statistics are updated even in predict mode. ``False``:
            always the running statistics, never updated.
        data_format (str): ``'NCHW'`` (default) or ``'NHWC'`` (channels last).
        dtype: the Parameters' dtype; default ``float32``.

    Parameters, in creation order (own name in brackets, which a stand-alone
    layer keeps; inside a parent they are named by attribute path, e.g.
    ``bn.moving_mean``): ``moving_mean`` (``mean``) and ``moving_variance``
    (``variance``), ``requires_grad=False``; ``gamma`` and ``beta``, all
    ``(num_features,)``.
"""


class BatchNorm1d(_BatchNorm):
    __doc__ = """Batch normalisation of an (N, C) or (N, C, L) input (MindSpore 2.10's ``nn.BatchNorm1d``).
""" + _BN_ARGS + """
    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> bn = nn.BatchNorm1d(2).set_train()
    >>> y = bn(ms.Tensor([[0., 1.], [2., 3.]]))
    >>> np.round(np.asarray(y), 3)
    array([[-1., -1.],
           [ 1.,  1.]], dtype=float32)
    >>> bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()   # 0.9*old + 0.1*batch (unbiased var)
    (array([0.1, 0.2], dtype=float32), array([1.1, 1.1], dtype=float32))
    """

    _ndims = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    __doc__ = """Batch normalisation of an (N, C, H, W) input (MindSpore 2.10's ``nn.BatchNorm2d``).
""" + _BN_ARGS + """
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.BatchNorm2d(3)
    BatchNorm2d(num_features=3, eps=1e-05, momentum=0.9, gamma=Parameter (name=gamma, shape=(3,), dtype=Float32, requires_grad=True), beta=Parameter (name=beta, shape=(3,), dtype=Float32, requires_grad=True), moving_mean=Parameter (name=mean, shape=(3,), dtype=Float32, requires_grad=False), moving_variance=Parameter (name=variance, shape=(3,), dtype=Float32, requires_grad=False))
    """

    _layout = "(N, C, H, W)"


class BatchNorm3d(Cell):
    __doc__ = """Batch normalisation of an (N, C, D, H, W) input (MindSpore 2.10's ``nn.BatchNorm3d``).

    As MindSpore's, it holds a ``BatchNorm2d`` named ``bn2d`` and runs it on the
    input reshaped to (N, C, D*H, W), so its Parameters are
    ``bn2d.moving_mean``, ``bn2d.moving_variance``, ``bn2d.gamma``, ``bn2d.beta``.
    Arguments as ``BatchNorm2d``'s, without ``data_format``; defaults (MindSpore 2.10's):
    ``eps=1e-05``, ``momentum=0.9``, ``affine=True``, ``gamma_init='ones'``, ``beta_init='zeros'``,
    ``moving_mean_init='zeros'``, ``moving_var_init='ones'``, ``use_batch_statistics=None``,
    ``dtype=Float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> bn = nn.BatchNorm3d(3)
    >>> [n for n, _ in bn.parameters_and_names()]
    ['bn2d.moving_mean', 'bn2d.moving_variance', 'bn2d.gamma', 'bn2d.beta']
    >>> bn(ms.ops.ones((2, 3, 2, 2, 2))).shape
    (2, 3, 2, 2, 2)
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, dtype=mstype.float32):
        super().__init__()
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                                moving_var_init, use_batch_statistics, data_format="NCHW", dtype=dtype)

    def construct(self, x):
        shape = tuple(jnp.shape(_v(x)))
        if len(shape) != 5:
            raise ValueError(f"For '{self.cls_name}', the in_shape must have 5 dims, but got {len(shape)}.")
        n, c, d, h, w = shape
        return self.bn2d(jnp.reshape(_v(x), (n, c, d * h, w))).reshape(shape)


class SyncBatchNorm(_BatchNorm):
    __doc__ = """Batch normalisation with statistics over the whole distributed batch (MindSpore 2.10).

    On JAX a batch split over devices is one sharded array: under
    ``cellkit.jit`` with the input sharded over a mesh axis (``jax.sharding``,
    ``cellkit.parallel``), the batch means are global means, XLA inserting
    the cross-device reductions, so the output and the running statistics
    are those of the whole batch, as SyncBatchNorm's over all devices. On one
    device it is ``BatchNorm`` of an (N, C, ...) input (2-D to 5-D).

    ``process_groups``: ``None`` (default, all devices) or ``0`` are accepted;
    a list of rank groups (statistics within sub-groups) cannot be expressed
    with a sharded array and is refused (docs/differences.md).
""" + _BN_ARGS.replace('''        data_format (str): \'NCHW\' (default) or \'NHWC\' (channels last).
''', "") + """
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.SyncBatchNorm(3).set_train()(ms.ops.ones((4, 3, 2, 2))).shape
    (4, 3, 2, 2)
    """

    _ndims = (2, 3, 4, 5)
    _layout = "(N, C, ...)"

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, process_groups=None,
                 dtype=mstype.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, dtype=dtype)
        if process_groups not in (None, 0):
            raise NotImplementedError(
                f"For '{self.cls_name}', 'process_groups' {process_groups!r} (statistics within groups of ranks) is "
                "not supported: on JAX the batch is one array sharded over a mesh and its statistics are always "
                "global; use process_groups=None, or shard separate batches over separate meshes.")
        self.process_groups = process_groups


class LayerNorm(Cell):
    """Layer normalisation (MindSpore 2.10's ``nn.LayerNorm``).

    Defaults (MindSpore 2.10's): ``eps=1e-05``, ``momentum=0.9``, ``affine=True``,
    ``gamma_init='ones'``, ``beta_init='zeros'``, ``moving_mean_init='zeros'``,
    ``moving_var_init='ones'``, ``use_batch_statistics=None``, ``dtype=Float32``.

    The statistics (biased variance) are taken over the axes from
    ``begin_norm_axis`` to the end; ``gamma`` and ``beta`` have shape
    ``normalized_shape`` and must equal the input's shape from
    ``begin_params_axis`` on. The axes are *not* derived from
    ``normalized_shape``: for a 2-D norm pass ``begin_norm_axis=-2,
    begin_params_axis=-2``.

    Args:
        normalized_shape (tuple or list): shape of ``gamma`` and ``beta``.
        begin_norm_axis (int): default ``-1``.
        begin_params_axis (int): default ``-1``.
        gamma_init, beta_init: default ``'ones'``, ``'zeros'``.
        epsilon (float): default ``1e-07`` (PyTorch uses 1e-5, flax 1e-6).
        dtype: the Parameters' dtype; default ``float32``.

    The repr reproduces MindSpore's, including its missing ``=`` after ``gamma``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> ln = nn.LayerNorm((3,))
    >>> ln(ms.Tensor([[1., 2., 3.]])).round(4)
    Array([[-1.2247,  0.    ,  1.2247]], dtype=float32)
    >>> ln
    LayerNorm(normalized_shape=(3,), begin_norm_axis=-1, begin_params_axis=-1, gammaParameter (name=gamma, shape=(3,), dtype=Float32, requires_grad=True), beta=Parameter (name=beta, shape=(3,), dtype=Float32, requires_grad=True))
    """

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
                 beta_init="zeros", epsilon=1e-7, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"For '{name}', the type of 'normalized_shape' must be tuple[int] or list[int], "
                            f"but got {normalized_shape!r} and the type is {type(normalized_shape).__name__}.")
        if not normalized_shape:
            raise ValueError(f"For '{name}', 'normalized_shape' must have at least one element, "
                             f"but got {normalized_shape!r}.")
        for arg, value in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if not is_int(value):
                raise TypeError(f"For '{name}', '{arg}' must be an int, but got {value!r}.")
        self.normalized_shape = normalized_shape
        self.begin_norm_axis = begin_norm_axis
        self.begin_params_axis = begin_params_axis
        self.epsilon = epsilon
        shape = tuple(positive_int(s, "normalized_shape item", name) for s in normalized_shape)
        self.gamma = make_param(gamma_init, shape, dtype, "gamma", what=name)
        self.beta = make_param(beta_init, shape, dtype, "beta", what=name)
        # MindSpore's attribute: subclasses (mindcv's ConvNextLayerNorm) call it in their construct.
        self.layer_norm = ops.LayerNorm(begin_norm_axis=begin_norm_axis, begin_params_axis=begin_params_axis,
                                        epsilon=epsilon)

    def construct(self, input_x):
        x = _v(input_x)
        shape = tuple(jnp.shape(x))
        nd = len(shape)
        name = self.cls_name
        for arg, axis in (("begin_norm_axis", self.begin_norm_axis), ("begin_params_axis", self.begin_params_axis)):
            if not -nd <= axis < nd:
                raise ValueError(f"{name}: {arg}={axis} is out of range for an input of rank {nd} "
                                 f"(shape {shape})")
        norm_axis = self.begin_norm_axis % nd
        params_axis = self.begin_params_axis % nd
        if shape[params_axis:] != tuple(self.gamma.shape):
            raise ValueError(f"{name}: gamma or beta shape must match input shape: gamma/beta have shape "
                             f"{tuple(self.gamma.shape)}, the input's shape from begin_params_axis="
                             f"{self.begin_params_axis} is {shape[params_axis:]} (input shape {shape})")
        return _layer_norm(x, self.gamma.value, self.beta.value, axis=norm_axis, eps=self.epsilon)

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma{self.gamma}, beta={self.beta}")


class GroupNorm(Cell):
    """Group normalisation of an (N, C, *) input (MindSpore 2.10's ``nn.GroupNorm``).

    The C channels are split into ``num_groups`` groups; each sample's group
    is normalised over its C/G channels and all spatial positions (biased
    variance), then scaled per channel by ``gamma`` and shifted by ``beta``.

    Args:
        num_groups (int): G; must divide ``num_channels``.
        num_channels (int): C.
        eps (float): a Python float; default ``1e-05``.
        affine (bool): whether ``gamma`` and ``beta`` are trainable; default ``True``.
        gamma_init, beta_init: default ``'ones'``, ``'zeros'``.
        dtype: the Parameters' dtype; default ``float32``.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> gn = nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(num_groups=2, num_channels=4)
    >>> y = gn(ms.Tensor(np.arange(8.).reshape(1, 4, 2), ms.float32))
    >>> np.asarray(y)[0].round(3)     # channels 0-1 and 2-3 each hold 4 values
    array([[-1.342, -0.447],
           [ 0.447,  1.342],
           [-1.342, -0.447],
           [ 0.447,  1.342]], dtype=float32)
    """

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.num_groups = positive_int(num_groups, "num_groups", name)
        self.num_channels = positive_int(num_channels, "num_channels", name)
        if num_channels % num_groups != 0:
            raise ValueError(f"For '{name}', the 'num_channels' must be divided by 'num_groups', "
                             f"but got 'num_channels': {num_channels}, 'num_groups': {num_groups}.")
        if not isinstance(eps, float):
            raise TypeError(f"For '{name}', the 'eps' must be a float, but got {type(eps).__name__} {eps!r}.")
        self.eps = eps
        self.affine = check_bool(affine, "affine", name)
        c = (self.num_channels,)
        self.gamma = make_param(gamma_init, c, dtype, "gamma", requires_grad=self.affine, what=name)
        self.beta = make_param(beta_init, c, dtype, "beta", requires_grad=self.affine, what=name)

    def construct(self, x):
        x = _v(x)
        shape = tuple(jnp.shape(x))
        if len(shape) < 2 or shape[1] != self.num_channels:
            raise ValueError(f"{self.cls_name}: expected an input of shape (N, {self.num_channels}, ...) "
                             f"with num_channels={self.num_channels}, got {shape}")
        return _group_norm(x, self.gamma.value, self.beta.value, groups=self.num_groups, eps=self.eps)

    def extend_repr(self):
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"


class _InstanceNorm(Cell):
    """Instance normalisation: each sample's each channel over its spatial positions (biased variance).

    Parameters as MindSpore's: ``moving_mean`` (``mean``), ``moving_variance``
    (``variance``), ``requires_grad=False``, kept so that checkpoints load;
    ``gamma``, ``beta`` (``requires_grad=affine``). The output uses the
    instance statistics in training and predict mode alike; the moving
    statistics are not updated (docs/differences.md).
    """

    _ndim = 4

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones", beta_init="zeros",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not is_int(num_features):
            raise TypeError(f"For '{name}', the type of 'num_features' must be int, but got "
                            f"{type(num_features).__name__}.")
        for arg, value in (("eps", eps), ("momentum", momentum)):
            if not isinstance(value, float):
                raise TypeError(f"For '{name}', the type of '{arg}' must be float, but got {type(value).__name__}.")
        if num_features < 1:
            raise ValueError(f"For '{name}', the 'num_features' must be at least 1, but got {num_features}.")
        if not 0 <= momentum <= 1:
            raise ValueError(f"For '{name}', the 'momentum' must be a number in range [0, 1], but got {momentum}.")
        affine = check_bool(affine, "affine", name)
        self.num_features, self.eps, self.momentum, self.affine = int(num_features), eps, momentum, affine
        c = (self.num_features,)
        self.moving_mean = make_param("zeros", c, dtype, "mean", requires_grad=False, what=name)
        self.moving_variance = make_param("ones", c, dtype, "variance", requires_grad=False, what=name)
        self.gamma = make_param(gamma_init, c, dtype, "gamma", requires_grad=affine, what=name)
        self.beta = make_param(beta_init, c, dtype, "beta", requires_grad=affine, what=name)

    def construct(self, x):
        x = _v(x)
        shape = tuple(jnp.shape(x))
        if len(shape) != self._ndim or shape[1] != self.num_features:
            raise ValueError(f"For '{self.cls_name}', the input must have {self._ndim} dims (N, "
                             f"{self.num_features}, ...), but got shape {shape}.")
        return _group_norm(x, self.gamma.value, self.beta.value, groups=self.num_features, eps=self.eps)

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma}, "
                f"beta={self.beta}, moving_mean={self.moving_mean}, moving_variance={self.moving_variance}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of an (N, C, L) input (MindSpore 2.10's ``nn.InstanceNorm1d``).

    Defaults (MindSpore 2.10's): ``eps=1e-05``, ``momentum=0.1``, ``affine=True``,
    ``gamma_init='ones'``, ``beta_init='zeros'``, ``dtype=Float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.InstanceNorm1d(2)(ms.Tensor([[[0., 2.], [1., 1.]]])).round(3).tolist()
    [[[-1.0, 1.0], [0.0, 0.0]]]
    """

    _ndim = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of an (N, C, H, W) input (MindSpore 2.10's ``nn.InstanceNorm2d``).

    Defaults (MindSpore 2.10's): ``eps=1e-05``, ``momentum=0.1``, ``affine=True``,
    ``gamma_init='ones'``, ``beta_init='zeros'``, ``dtype=Float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.InstanceNorm2d(3)(ms.ops.ones((2, 3, 4, 4))).shape
    (2, 3, 4, 4)
    """

    _ndim = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of an (N, C, D, H, W) input (MindSpore 2.10's ``nn.InstanceNorm3d``).

    Defaults (MindSpore 2.10's): ``eps=1e-05``, ``momentum=0.1``, ``affine=True``,
    ``gamma_init='ones'``, ``beta_init='zeros'``, ``dtype=Float32``.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> nn.InstanceNorm3d(3)(ms.ops.ones((2, 3, 2, 4, 4))).shape
    (2, 3, 2, 4, 4)
    """

    _ndim = 5
