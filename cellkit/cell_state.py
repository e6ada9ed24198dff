"""Buffers and state dicts: MindSpore's ``Cell.register_buffer``, ``buffers``, ``state_dict``,
``load_state_dict`` and their hooks (``Cell`` inherits :class:`StateDictMixin`).

A buffer is an array attribute that is part of the Cell's state but not a Parameter (running
statistics, masks, tables). It is stored as an ordinary attribute (a leaf of the Cell's pytree);
``_buffer_names`` (static) lists which attributes are buffers and ``_non_persistent_buffers_set``
which ones ``state_dict`` leaves out. Like any array attribute, a compiled function reads a buffer
as the constant it was at compile time (as MindSpore's GRAPH_MODE reads Tensor attributes);
``register_buffer``, ``load_state_dict`` and ``to`` change a buffer through :func:`set_buffer`,
which makes the next ``cellkit.jit`` call compile for the new value. State that changes every
step belongs in a Parameter (``requires_grad=False``), which ``jit`` passes in and writes back.

``state_dict()`` maps each Parameter's attribute path (and each persistent buffer's) to the
Parameter (or array) itself; ``load_state_dict`` copies values back, checking every shape, and
returns the keys it did not load, as MindSpore does:

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.SequentialCell([nn.Dense(2, 2)])
>>> net.register_buffer("steps", ms.Tensor([0], ms.int32))
>>> list(net.state_dict())
['steps', '0.weight', '0.bias']
>>> net.load_state_dict({"0.weight": ms.Tensor(np.ones((2, 2), np.float32))}, strict=False)
_IncompatibleKeys(missing_keys=['steps', '0.bias'], unexpected_keys=[])
>>> net[0].weight.asnumpy()
array([[1., 1.],
       [1., 1.]], dtype=float32)
"""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from .parameter import Parameter, ParameterTuple, bump_structure

__all__ = ["StateDictMixin", "set_buffer"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it expected and did not find, and the keys it did not expect."""

    __slots__ = ()

    def __repr__(self):
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class _DictHandle:
    """What ``register_*state_dict*_hook`` returns: ``remove()`` takes the hook off."""

    _next = [0]

    def __init__(self, hooks):
        self._hooks = hooks
        _DictHandle._next[0] += 1
        self.handle_id = _DictHandle._next[0]

    def remove(self) -> None:
        self._hooks.pop(self.handle_id, None)


def set_buffer(cell, name, value) -> None:
    """Store a buffer's new value. A compiled function reads a Cell's array attributes as the
    constants they were when it was compiled, so the change also moves the Cell's static
    ``_buffer_version``: the next ``cellkit.jit`` call compiles for the new value."""
    d = cell.__dict__
    d[name] = value
    d["_buffer_version"] = d.get("_buffer_version", 0) + 1
    bump_structure()


def _is_tensor(value) -> bool:
    return isinstance(value, (jax.Array, np.ndarray, Parameter))


class StateDictMixin:
    """Buffers, ``state_dict``/``load_state_dict`` and their hooks (see the module docstring)."""

    # ----- buffers ---------------------------------------------------------------------------

    @property
    def _buffers(self) -> "OrderedDict":
        d = self.__dict__
        return OrderedDict((k, d.get(k)) for k in d.get("_buffer_names", ()) if k in d)

    @property
    def _non_persistent_buffers_set(self) -> frozenset:
        return self.__dict__.get("_non_persistent_buffers", frozenset())

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add the array ``tensor`` (or None) as buffer ``name``: an attribute that ``buffers()``
        lists and, when ``persistent``, ``state_dict()`` includes."""
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string.But got this type: {type(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        d = self.__dict__
        names = d.get("_buffer_names", ())
        if hasattr(self, name) and name not in names:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and (not _is_tensor(tensor) or isinstance(tensor, Parameter)):
            raise TypeError(f"cannot assign '{type(tensor)}' object to buffer '{name}' "
                            "(Tensor or None required; a Parameter is stored with insert_param_to_cell)")
        self._check_mutable(name, tensor, f"register buffer '{name}'")
        set_buffer(self, name, None if tensor is None else jnp.asarray(tensor))
        if name not in names:
            d["_buffer_names"] = names + (name,)
        hidden = self._non_persistent_buffers_set
        d["_non_persistent_buffers"] = hidden - {name} if persistent else hidden | {name}
        bump_structure()

    def get_buffer(self, target: str):
        """The buffer at the dotted path ``target`` ('block.running_mean')."""
        cell_path, _, buffer_name = target.rpartition(".")
        cell = self.get_sub_cell(cell_path)
        if not hasattr(cell, buffer_name):
            raise AttributeError(f"{type(cell).__name__} has no attribute `{buffer_name}`")
        if buffer_name not in cell._buffers:
            raise AttributeError(f"`{buffer_name}` is not a buffer")
        return getattr(cell, buffer_name)

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(path, buffer)`` for the buffers of this Cell (and its sub-Cells when ``recurse``)."""
        seen = set()
        cells = self.cells_and_names(name_prefix=prefix) if recurse else [(prefix, self)]
        for cell_prefix, cell in cells:
            for name, buf in cell._buffers.items():
                if buf is None or id(buf) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(buf))
                yield (f"{cell_prefix}.{name}" if cell_prefix else name), buf

    def buffers(self, recurse: bool = True):
        """Yield the buffers of this Cell (and its sub-Cells when ``recurse``)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # ----- state dict ------------------------------------------------------------------------

    def _hook_dict(self, kind) -> dict:
        return self.__dict__.setdefault(f"_ck_{kind}", OrderedDict())

    def register_state_dict_pre_hook(self, hook):
        """``hook(cell, prefix, keep_vars)`` runs before ``state_dict`` collects this Cell."""
        hooks = self._hook_dict("state_dict_pre_hooks")
        handle = _DictHandle(hooks)
        hooks[handle.handle_id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """``hook(cell, state_dict, prefix, local_metadata)`` runs after; it may change the dict in place."""
        hooks = self._hook_dict("state_dict_hooks")
        handle = _DictHandle(hooks)
        hooks[handle.handle_id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(cell, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` runs before this Cell's values are loaded."""
        hooks = self._hook_dict("load_state_dict_pre_hooks")
        handle = _DictHandle(hooks)
        hooks[handle.handle_id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """``hook(cell, incompatible_keys)`` runs after; it may change the key lists in place."""
        hooks = self._hook_dict("load_state_dict_post_hooks")
        handle = _DictHandle(hooks)
        hooks[handle.handle_id] = hook
        return handle

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to keep extra state under '<prefix>_extra_state'."""
        raise RuntimeError("Reached a code path in Cell.get_extra_state() that should never be called.")

    def set_extra_state(self, state) -> None:
        """Override (with ``get_extra_state``) to restore the extra state ``load_state_dict`` finds."""
        raise RuntimeError("Reached a code path in Cell.set_extra_state() that should never be called.")

    def _local_state(self):
        """``{attribute name: Parameter or buffer}`` of this Cell's own state (None values left out)."""
        out = OrderedDict()
        for key, value in self.__dict__.items():
            if isinstance(value, Parameter):
                out[key] = value
            elif isinstance(value, ParameterTuple):
                out.update((p.name, p) for p in value)
        hidden = self._non_persistent_buffers_set
        out.update((k, v) for k, v in self._buffers.items() if v is not None and k not in hidden)
        return out

    def _has_extra_state(self, method) -> bool:
        return getattr(type(self), method) is not getattr(StateDictMixin, method)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, value in self._local_state().items():
            destination[prefix + name] = value
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """``OrderedDict`` attribute path -> Parameter (or persistent buffer) of this Cell and its sub-Cells."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead.", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is not None and not isinstance(destination, dict):
            raise TypeError(f"The type of destination must be OrderedDict, but got {type(destination)}")
        if not isinstance(prefix, str):
            raise TypeError(f"The type of prefix must be string, but got {type(prefix)}")
        if not isinstance(keep_vars, bool):
            raise TypeError(f"The type of keep_vars must be bool, but got {type(keep_vars)}")
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self._hook_dict("state_dict_pre_hooks").values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, cell in self._cells.items():
            cell.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in list(self._hook_dict("state_dict_hooks").values()):
            if hook(self, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in list(self._hook_dict("load_state_dict_pre_hooks").values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = self._local_state()
        for name, current in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not _is_tensor(value):
                error_msgs.append(f'While copying the parameter named "{key}", expected Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(current.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} "
                                  f"from checkpoint, the shape in current model is {tuple(current.shape)}.")
                continue
            try:
                if isinstance(current, Parameter):
                    current.assign_value(jnp.asarray(np.asarray(value)).astype(current.value.dtype))
                else:
                    self._check_mutable(name, None, f"load buffer '{name}'")
                    set_buffer(self, name, jnp.asarray(np.asarray(value)).astype(current.dtype))
            except Exception as ex:  # noqa: BLE001 - reported together, as MindSpore does
                error_msgs.append(f'While copy the parameter named "{key}", whose shape in the model are '
                                  f"{tuple(current.shape)} and whose shape in the checkpoint are "
                                  f"{tuple(value.shape)}, an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            cells = self._cells
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if (len(head) > 1 and head[0] not in cells) or (len(head) == 1 and head[0] not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True):
        """Copy the values of ``state_dict`` (as ``state_dict()`` names them) into this Cell's
        Parameters and buffers; returns ``(missing_keys, unexpected_keys)``. With ``strict``, any
        missing or unexpected key raises RuntimeError; a shape mismatch always does."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(cell, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            cell._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                       unexpected_keys, error_msgs)
            for name, child in cell._cells.items():
                child_prefix = prefix + name + "."
                load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in list(cell._hook_dict("load_state_dict_post_hooks").values()):
                if hook(cell, incompatible) is not None:
                    raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                       "expected to return new values; change incompatible_keys in place.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

