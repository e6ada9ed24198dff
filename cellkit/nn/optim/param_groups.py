"""Parameter groups and weight decay of an ``Optimizer``: parsing ``params``, the decay filter, ``decay_weight``.

``params`` is a list of Parameters or of group dicts (``'params'``, ``'lr'``,
``'weight_decay'``, ``'grad_centralization'``, or one ``{'order_params': [...]}``);
see :mod:`cellkit.nn.optim.optimizer` for how groups are turned into an
``optax.partition``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> a = ms.Parameter(ms.Tensor([1.0]), name="a")
>>> b = ms.Parameter(ms.Tensor([1.0]), name="b")
>>> opt = nn.SGD([{'params': [a], 'weight_decay': 0.1}, {'params': [b]}], learning_rate=0.1)
>>> opt.get_weight_decay(), opt.decay_flags
((0.1, 0.0), (True, False))
"""

from __future__ import annotations

import jax.numpy as jnp

from ...cell import Cell
from ...parameter import Parameter
from ._checks import is_number, value_of

__all__ = ["ParameterGroups", "GROUP_KEYS", "centralize"]

GROUP_KEYS = ("params", "lr", "weight_decay", "order_params", "grad_centralization")


def centralize(g):
    """MindSpore's gradient centralization: ``g - mean(g over all axes but the first)``, for gradients
    of 2 or more dimensions whose second dimension is a multiple of 16 (others are returned as they are).

    >>> import jax.numpy as jnp
    >>> centralize(jnp.arange(32, dtype=jnp.float32).reshape(2, 16))[0, :3]
    Array([-7.5, -6.5, -5.5], dtype=float32)
    >>> centralize(jnp.ones((2, 3))).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    if g.ndim < 2 or g.shape[1] % 16 != 0:
        return g
    return g - jnp.mean(g, axis=tuple(range(1, g.ndim)), keepdims=True)


class ParameterGroups:
    """The ``Optimizer`` methods that read ``params`` and apply weight decay (a base class of ``Optimizer``)."""

    def _check_weight_decay(self, weight_decay) -> float:
        if isinstance(weight_decay, Cell):
            raise TypeError(f"For '{self.cls_name}', a Cell (dynamic) weight_decay is not supported; pass a float.")
        if not is_number(weight_decay):
            raise TypeError(f"For '{self.cls_name}', the argument 'weight_decay' must be int or float, but got "
                            f"{type(weight_decay).__name__}.")
        if weight_decay < 0:
            raise ValueError(f"For '{self.cls_name}', the 'weight_decay' must be float and must >= 0, but got "
                             f"'{weight_decay}'.")
        return float(weight_decay)

    def _parse_parameters(self, parameters):
        """(ordered Parameter list, [(dict index, group dict)] or None)."""
        name = self.cls_name
        if isinstance(parameters, (Parameter, dict)) or parameters is None:
            raise TypeError(f"For '{name}', 'params' must be a list of Parameters or of group dicts, got "
                            f"{type(parameters).__name__}.")
        try:
            items = list(parameters)
        except TypeError:
            raise TypeError(f"For '{name}', 'params' must be a list of Parameters or of group dicts, got "
                            f"{type(parameters).__name__}.") from None
        if not items:
            raise ValueError(f"For '{name}', the argument 'params' must not be empty.")
        if all(isinstance(x, Parameter) for x in items):
            self._check_unique(items)
            return items, None
        if not all(isinstance(x, dict) for x in items):
            raise TypeError(f"For '{name}', all elements of 'params' must be Parameters, or all must be group "
                            "dicts.")
        groups, params, order = [], [], None
        for gi, d in enumerate(items):
            bad = [k for k in d if k not in GROUP_KEYS]
            if bad:
                raise KeyError(f"For '{name}', the keys of a parameter group must be among {list(GROUP_KEYS)}, "
                               f"but got {bad}.")
            if "order_params" in d:
                if len(d) > 1:
                    raise ValueError(f"For '{name}', the 'order_params' dict must have no other key, but got "
                                     f"{list(d)}.")
                order = list(d["order_params"])
                continue
            if not isinstance(d.get("grad_centralization", False), bool):
                raise TypeError(f"For '{name}', the 'gradients_centralization' must be bool type, but got "
                                f"{type(d['grad_centralization'])}.")
            group = list(d.get("params", ()))
            if not group:
                raise ValueError(f"For '{name}', parameter group {gi} has no 'params'.")
            for j, p in enumerate(group):
                if not isinstance(p, Parameter):
                    raise TypeError(f"For '{name}', element {j} of group {gi}'s 'params' is a "
                                    f"{type(p).__name__}, expected a Parameter.")
            groups.append((gi, dict(d, params=group)))
            params += group
        self._check_unique(params)
        if order is not None:
            if len(order) != len(params) or {id(p) for p in order} != {id(p) for p in params}:
                raise ValueError(f"For '{name}', 'order_params' must list exactly the Parameters of the groups "
                                 f"({len(params)}), but got {len(order)} that differ.")
            params = order
            self.__dict__["_ck_ordered"] = True
        return params, groups

    def _check_unique(self, params) -> None:
        seen = set()
        for p in params:
            if id(p) in seen:
                raise RuntimeError(f"For '{self.cls_name}', the {p.name} parameter already exists, it does not "
                                   "support repeated setting; pass each Parameter once.")
            seen.add(id(p))

    def get_weight_decay(self):
        """The weight decay applied to the loss-scaled gradients, ``weight_decay * loss_scale``, as in
        MindSpore: a float, or with groups a tuple with one entry per Parameter.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
        >>> nn.SGD([w], weight_decay=0.01).get_weight_decay()
        0.01
        >>> nn.SGD([w], weight_decay=0.01, loss_scale=4.0).get_weight_decay()
        0.04
        """
        if self.loss_scale == 1.0:
            return self.weight_decay
        if self.is_group:
            return tuple(w * self.loss_scale for w in self.weight_decay)
        return self.weight_decay * self.loss_scale

    # ----- helpers for hand-written construct methods (MindSpore's API) ------------------

    def decay_weight(self, gradients):
        """``g + weight_decay * loss_scale * w`` for the decayed Parameters (grads are loss-scaled).

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
        >>> nn.SGD([w], weight_decay=0.5).decay_weight((ms.Tensor([0.0, 0.0]),))
        (Array([0.5, 1. ], dtype=float32),)
        """
        wds = self.weight_decay if self.is_group else (self.weight_decay,) * len(self.parameters)
        return tuple(value_of(g) + wd * self.loss_scale * p.value if flag and wd > 0 else value_of(g)
                     for g, p, wd, flag in zip(gradients, self.parameters, wds, self.decay_flags))


    def gradients_centralization(self, gradients):
        """The gradients with MindSpore's centralization applied where the groups ask for it
        (``'grad_centralization': True``); see :func:`centralize`.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.ops.ones((2, 16)), name="w")
        >>> opt = nn.SGD([{'params': [w], 'grad_centralization': True}])
        >>> g = ms.ops.arange(32.0).reshape(2, 16)
        >>> opt.gradients_centralization((g,))[0][0, :2]
        Array([-7.5, -6.5], dtype=float32)
        """
        if not self.is_group:
            return gradients
        return tuple(centralize(value_of(g)) if flag else g for g, flag in zip(gradients, self._gc_flags))
