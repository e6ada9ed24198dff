"""``load_param_into_net``: check every value against the net's Parameters, then assign them all."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ..cell import Cell
from ..parameter import Parameter
from .common import _FLOATS, _INTS, _dtype_name, _not_traced

__all__ = ["load_param_into_net"]

def _loadable(key, value):
    if isinstance(value, Parameter):
        return value.value
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        return value
    raise TypeError(f"load_param_into_net: parameter_dict['{key}'] must be a Parameter, a Tensor "
                    f"or a NumPy array (or a str, which is skipped), got {type(value).__name__}")


def _plan(param: Parameter, key: str, value, strict: bool):
    """The array to store in ``param`` from ``value``, or the reason it cannot be stored."""
    name = param.name
    src = f"'{key}' in parameter_dict" if key != name else "parameter_dict"
    want_shape = param.shape
    try:
        want = np.dtype(param.dtype)
    except TypeError:
        return None, f"'{name}' has dtype {param.dtype}, which cannot be loaded from a checkpoint"
    shape, got = tuple(np.shape(value)), np.dtype(value.dtype)
    if shape != want_shape:
        k = len(want_shape)
        if len(shape) > k and shape[:k] == want_shape and all(s == 1 for s in shape[k:]):
            value = value.reshape(want_shape)  # MindSpore drops trailing 1-dims silently
        else:
            return None, (f"'{name}' has shape {want_shape} in the net but shape {shape} in {src}")
    xp = np if isinstance(value, (np.ndarray, np.generic)) else jnp
    if got != want:
        if strict:
            return None, (f"'{name}' has dtype {_dtype_name(want)} in the net but {_dtype_name(got)} "
                          f"in {src}; strict_load=True does not convert dtypes")
        if {got, want} <= _FLOATS:
            with np.errstate(over="ignore", invalid="ignore"):
                cast = xp.asarray(value).astype(want)
                lost = bool(xp.any(xp.isfinite(value) & ~xp.isfinite(cast)))
            if lost:
                return None, (f"'{name}': values in {src} ({_dtype_name(got)}) overflow the net's "
                              f"{_dtype_name(want)}")
            value = cast
        elif {got, want} <= _INTS:
            info = np.iinfo(want)
            if np.size(value) and (int(xp.min(value)) < info.min or int(xp.max(value)) > info.max):
                return None, (f"'{name}': values in {src} ({_dtype_name(got)}) do not fit the net's "
                              f"{_dtype_name(want)}")
            value = xp.asarray(value).astype(want)
        else:
            return None, (f"'{name}' has dtype {_dtype_name(want)} in the net but {_dtype_name(got)} "
                          f"in {src}, and MindSpore converts only float to float and int to int")
    new = jnp.array(value) if xp is np else value
    old = param._value  # None while the Parameter is lazy: never make a value only to replace it
    if isinstance(old, jax.Array) and (old.committed or len(old.sharding.device_set) > 1):
        new = jax.device_put(new, old.sharding)
    return new, None


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Load ``parameter_dict`` into ``net``'s Parameters (by name); return what was not loaded.

    Returns ``(param_not_load, ckpt_not_load)``: the names of the net's
    Parameters that got no value, and the keys of ``parameter_dict`` that
    were not used, as MindSpore 2.10 returns them.

    Everything is checked before anything is assigned, so when this raises,
    the net is unchanged. Rules (MindSpore's unless said):

    * shapes must match (a value whose shape is the Parameter's plus
      trailing 1-dims is reshaped);
    * with ``strict_load=False`` dtypes are converted float to float and int
      to int; a conversion that overflows (a value out of the target's
      range) is refused. Any other dtype difference is refused;
    * with ``strict_load=False``, Parameters missing from the dict are also
      looked up under a common prefix (``backbone.fc.weight`` for
      ``fc.weight``); those keys still appear in ``ckpt_not_load``, and the
      Parameters still missing are warned about;
    * with ``strict_load=True`` no dtype is converted and no prefix is tried;
      Parameters missing from the dict are warned about and returned, as
      with ``strict_load=False`` (nothing raises for them);
    * ``str`` values (from ``append_dict``) are never loaded;
    * ``requires_grad`` of the net's Parameters is left as it is.

    Raises:
        RuntimeError: listing every Parameter that cannot be loaded (shape,
            or dtype); the net is unchanged.
        TypeError: ``net`` is not a Cell or ``parameter_dict`` not a dict of
            str -> Parameter/Tensor/str.

    >>> import numpy as np
    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> net = nn.Dense(2, 2)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")      # 'bias' is not in the dict: a warning
    ...     ms.load_param_into_net(net, {"weight": ms.Parameter(np.eye(2, dtype=np.float16)),
    ...                                  "step": ms.Tensor(3)})
    (['bias'], ['step'])
    >>> net.weight.dtype, net.weight.asnumpy()[0]
    (Float32, array([1., 0.], dtype=float32))
    >>> try:
    ...     ms.load_param_into_net(net, {"weight": ms.Tensor(np.ones((3, 2))), "bias": ms.Tensor(np.ones(2))})
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[1])
      'weight' has shape (2, 2) in the net but shape (3, 2) in parameter_dict
    """
    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net: net must be a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError(f"load_param_into_net: parameter_dict must be a dict, "
                        f"got {type(parameter_dict).__name__}")
    if remove_redundancy:
        raise NotImplementedError("load_param_into_net: remove_redundancy=True is not supported")
    _not_traced("load_param_into_net")
    strict = bool(strict_load)
    values = {}
    for key, value in parameter_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"load_param_into_net: parameter_dict keys must be str, got {key!r}")
        if not isinstance(value, str):
            values[key] = _loadable(key, value)

    params = net.parameters_dict()  # raises if two different Parameters share a name
    plan, problems, param_not_load, used = [], [], [], set()

    def take(param, key):
        new, problem = _plan(param, key, values[key], strict)
        if problem is not None:
            problems.append(problem)
        else:
            plan.append((param, new))

    for name, param in params.items():
        if name in values:
            take(param, name)
            used.add(name)
        else:
            param_not_load.append(name)

    if param_not_load and not strict:
        # MindSpore's fallback: a key that ends with a missing name gives a prefix;
        # every missing Parameter found under that prefix is loaded. Repeat.
        while param_not_load:
            prefix = next((key[:-len(name)] for name in param_not_load for key in values
                           if key != name and key.endswith(name)), None)
            if prefix is None:
                break
            found = [name for name in param_not_load if prefix + name in values]
            for name in found:
                take(params[name], prefix + name)
            param_not_load = [name for name in param_not_load if name not in found]

    if problems:
        raise RuntimeError(f"load_param_into_net: cannot load into {net.cls_name}; nothing was "
                           "loaded:\n  " + "\n  ".join(problems))
    for param, new in plan:
        # Checked above, so these plain stores cannot fail half-way.
        param._value = new
        param._init = None
    if param_not_load:
        warnings.warn(f"load_param_into_net: {len(param_not_load)} Parameter(s) of {net.cls_name} "
                      f"were not in parameter_dict and keep their values: {param_not_load}",
                      stacklevel=2)
    ckpt_not_load = [key for key in parameter_dict if key not in used]
    return param_not_load, ckpt_not_load
