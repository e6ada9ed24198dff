"""``Optimizer``: MindSpore's optimizer base class, a Cell around an optax transformation.

An optimizer holds the Parameters it trains (``optimizer.parameters``, a
``ParameterTuple`` of the very same objects), a ``global_step`` Parameter, the
learning rate, and — for the built-in optimizers — an optax
``GradientTransformation`` (``optimizer.tx``) whose state lives in Parameters:
every leaf of the optax state is a Parameter of the optimizer
(``requires_grad=False``), named like MindSpore's where MindSpore has one
(``moment1.<param name>``, ``accum.<param name>``, ...). Every step counter of
the optax state is ``global_step``; the injected learning rate is computed
from ``learning_rate`` and ``global_step`` on each call.

``optimizer(grads)`` rebuilds the optax state from those Parameters, calls
``tx.update``, and writes the new weights and state back with ``ops.assign``,
so it updates everything in place both eagerly and inside ``cellkit.jit``
(also when the optimizer is reached through a closure), compiling once.

Common pipeline of ``construct(gradients)`` (``gradients`` in the order of
``optimizer.parameters``), as in MindSpore:

1. ``g = g / loss_scale`` (when ``loss_scale != 1``);
2. ``g = g + weight_decay * w`` for the decayed Parameters (coupled L2; the
   decoupled optimizers ``AdamWeightDecay`` and ``AdamW`` apply their decay in
   their own rule instead);
3. ``lr = get_lr()`` at the current ``global_step`` (0 at the first step), the
   optimizer's own update, ``global_step += 1``.

MindSpore multiplies ``weight_decay`` by ``loss_scale`` and adds it before
dividing; the result is the same.

Weight decay filter: without parameter groups, Parameters whose *name*
contains ``'beta'`` or ``'gamma'`` are not decayed (a substring test, as in
MindSpore: biases are decayed). With groups, a group is decayed iff its
``weight_decay`` (or the global one) is > 0, whatever the names.

Learning rates: a float or 0-d Tensor (stored in the Parameter
``learning_rate``; assign to it to change the rate), a list, tuple or 1-D
Tensor (the Parameter ``learning_rate`` holds the list and step ``t`` uses
``lr[t]``; stepping past its end raises ``IndexError`` eagerly, as in
MindSpore, and uses the last entry inside ``jit``), a Cell called with
``global_step`` (MindSpore's ``LearningRateSchedule``), or any callable of the
step such as an optax schedule.

Parameter groups: ``[{'params': [...], 'lr': ..., 'weight_decay': ...}, ...,
{'order_params': [...]}]``. A group without ``lr``/``weight_decay`` uses the
global value; a group ``lr`` is stored as ``learning_rate_group_<i>`` (``i`` the
index of the dict); ``order_params`` reorders ``optimizer.parameters`` (and the
gradients must come in that order). Groups become an ``optax.partition``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(3, 2)
>>> opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
>>> [name for name, _ in opt.parameters_and_names()]
['global_step', 'learning_rate', 'weight', 'bias', 'momentum', 'moments.weight', 'moments.bias']
>>> grads = (ms.ops.ones((2, 3)), ms.ops.ones((2,)))
>>> opt(grads)
(True, True)
>>> opt.global_step.asnumpy(), opt.moments[1].asnumpy()
(array([1], dtype=int32), array([1., 1.], dtype=float32))
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ... import host_ops, ops
from ...cell import Cell
from ...parameter import Parameter, ParameterTuple
from ...startup import lazy_module
from ...host_steps import HostFirst
from ...tensor import as_array
from ...tiered_jit import tiered_jit
from ._checks import is_number, value_of
from .lr_source import LearningRates
from .ms_members import MindSporeMembers, opt_init_args_register
from .param_groups import ParameterGroups, centralize

optax = lazy_module("optax")

__all__ = ["Optimizer", "add_momentum", "opt_init_args_register"]


def add_momentum(opt, momentum) -> None:
    """MindSpore's ``momentum`` Parameter (float32, constant) of Momentum and SGD."""
    opt.add_state("momentum", np.asarray(momentum, np.float32))   # (converted on the host: no compiled convert)


class Optimizer(MindSporeMembers, ParameterGroups, LearningRates, Cell):
    """Base class of optimizers: Parameters, learning rate, weight decay, groups, ``global_step``.

    Args:
        learning_rate: float, 0-d or 1-D Tensor, list/tuple, Cell or callable of
            the step (see the module docstring).
        parameters: a list of Parameters, or a list of group dicts.
        weight_decay: float >= 0 (coupled L2 for SGD, Momentum, Adam, RMSProp).
        loss_scale: float > 0; gradients are divided by it.

    Built-in optimizers call :meth:`init_optax` at the end of ``__init__`` and
    define :meth:`update_rule`; the inherited ``construct`` then runs the optax
    update. A subclass may instead write its own ``construct``, as in
    MindSpore, with ``get_lr``, ``decay_weight`` and ``scale_grad``:

    >>> import cellkit as ms
    >>> from cellkit import nn, ops
    >>> class PlainSGD(nn.Optimizer):
    ...     def __init__(self, params, learning_rate):
    ...         super().__init__(learning_rate, params)
    ...     def construct(self, gradients):
    ...         lr = self.get_lr()
    ...         for p, g in zip(self.parameters, gradients):
    ...             ops.assign(p, p - lr * g)
    ...         ops.assign(self.global_step, self.global_step + 1)
    ...         return True
    >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
    >>> opt = PlainSGD([w], 0.5)
    >>> _ = ms.jit(lambda g: opt(g))((ms.Tensor([1.0, 1.0]),))
    >>> w.asnumpy(), opt.global_step.asnumpy()
    (array([0.5, 1.5], dtype=float32), array([1], dtype=int32))
    """

    # optax state field -> MindSpore prefix of the per-parameter state Parameters.
    _slot_names: dict = {}
    # True when update_rule applies the weight decay itself (decoupled decay).
    _decoupled_weight_decay = False
    # optax state fields holding one scalar per Parameter (stored per Parameter all the same).
    _scalar_slots: frozenset = frozenset()
    # False where MindSpore's optimizer does not divide the gradients by loss_scale (AdaFactor).
    _scales_gradients = True
    # Set by a wrapper (LARS) that applies the weight decay and loss scaling itself.
    _decay_and_scale_outside = False

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        name = self.cls_name
        if isinstance(loss_scale, bool) or not is_number(loss_scale) or not loss_scale > 0:
            raise ValueError(f"For '{name}', the 'loss_scale' must be float and must > 0, but got {loss_scale!r}.")
        self.loss_scale = float(loss_scale)
        global_wd = self._check_weight_decay(weight_decay)
        params, group_dicts = self._parse_parameters(parameters)
        self.global_step = Parameter(np.zeros((1,), np.int32), name="global_step", requires_grad=False)

        # Learning-rate sources: index 0 is the global one (MindSpore builds it even when
        # every group has its own), then one per group dict with an 'lr'.
        sources = [self._build_lr(learning_rate, "learning_rate")]
        gc_of = {}
        if group_dicts is None:
            groups = [(tuple(range(len(params))), 0, global_wd, None)]
        else:
            groups = []
            index = {id(p): i for i, p in enumerate(params)}
            for gi, d in group_dicts:
                lr_index = 0
                if "lr" in d:
                    sources.append(self._build_lr(d["lr"], f"learning_rate_group_{gi}"))
                    lr_index = len(sources) - 1
                wd = self._check_weight_decay(d["weight_decay"]) if "weight_decay" in d else global_wd
                groups.append((tuple(sorted(index[id(p)] for p in d["params"])), lr_index, wd, gi))
                gc_of.update((id(p), bool(d.get("grad_centralization", False))) for p in d["params"])
        self.is_group = group_dicts is not None
        self.is_group_lr = len(sources) > 1

        n = len(params)
        lr_of = [0] * n
        wd_of = [global_wd] * n
        group_of = [0] * n
        for g, (members, lr_index, wd, _) in enumerate(groups):
            for i in members:
                lr_of[i], wd_of[i], group_of[i] = lr_index, wd, g
        if self.is_group:
            self.decay_flags = tuple(w > 0 for w in wd_of)
            self.weight_decay = tuple(wd_of)
        else:
            self.decay_flags = tuple("beta" not in p.name and "gamma" not in p.name for p in params)
            self.weight_decay = global_wd
        if self.is_group_lr:
            per_param = [sources[k] for k in lr_of]
            self.learning_rate = (ParameterTuple(per_param) if all(isinstance(s, Parameter) for s in per_param)
                                  else tuple(per_param))
        else:
            self.learning_rate = sources[0]
        self.parameters = ParameterTuple(params)
        kinds = tuple(self._lr_kind(s) for s in sources)
        # Static description of each group: (member indices, lr source kind, first member, weight decay).
        self._groups = tuple((members, kinds[lr_index], members[0] if members else 0, wd)
                             for members, lr_index, wd, _ in groups)
        self._group_of = tuple(group_of)
        # Gradient centralization (groups only): one flag per Parameter; a group's members share it.
        self._gc_flags = tuple(gc_of.get(id(p), False) for p in params)
        self._init_ms_members()
        self._init_kernels()
        self._companions = ()
        self.tx = None

    def add_state(self, attr, value, per_param=False, rule=None) -> None:
        """Keep a state Parameter that MindSpore's optimizer has and the optax update does not need.

        So that checkpoints carry the same names both ways: ``value`` is the
        initial value (with ``per_param``, a function of each Parameter, giving a
        ``ParameterTuple`` named ``<attr>.<param name>``); ``rule(old, w_old,
        w_new)`` (None: constant) gives its value after each step (``w_old``
        and ``w_new`` are the Parameter's value before and after, or None when
        not ``per_param``). Call it before :meth:`init_optax`, where MindSpore
        creates the Parameter before its moments.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
        >>> opt = nn.Adam([w], 0.1)
        >>> _ = opt((ms.Tensor([1.0]),)); _ = opt((ms.Tensor([1.0]),))
        >>> round(float(opt.beta1_power.value), 6)
        0.81
        """
        if per_param:
            setattr(self, attr, ParameterTuple(Parameter(jnp.asarray(value(p.value)), name=f"{attr}.{p.name}",
                                                         requires_grad=False) for p in self.parameters))
        else:
            setattr(self, attr, Parameter(as_array(value), name=attr, requires_grad=False))   # (no compiled copy)
        if rule is not None:
            self._companions = self._companions + ((attr, per_param, rule),)

    def scale_grad(self, gradients):
        """``g / loss_scale`` for every gradient.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0]), name="w")
        >>> nn.SGD([w], loss_scale=4.0).scale_grad((ms.Tensor([2.0]),))
        (Array([0.5], dtype=float32),)
        """
        if self.loss_scale == 1.0:
            return tuple(value_of(g) for g in gradients)
        return tuple(value_of(g) / self.loss_scale for g in gradients)

    # ----- the optax transformation ---------------------------------------------------

    def update_rule(self, learning_rate, weight_decay, decay_mask) -> optax.GradientTransformation:
        """The optimizer's own optax transformation for one parameter group.

        ``learning_rate`` is the injected (traced) rate; ``weight_decay`` and
        ``decay_mask`` (None: every Parameter of the group; else a tuple of bools
        over all Parameters) matter only to decoupled optimizers. The base
        class adds the loss scaling and the coupled weight decay in front of it.
        ``_slot_names`` maps the optax state fields to Parameter name prefixes:

        >>> import optax
        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> class Lion(nn.Optimizer):
        ...     _slot_names = {"mu": "exp_avg"}
        ...     def __init__(self, params, learning_rate=1e-4):
        ...         super().__init__(learning_rate, params)
        ...         self.init_optax()
        ...     def update_rule(self, learning_rate, weight_decay, decay_mask):
        ...         return optax.chain(optax.scale_by_lion(), optax.scale_by_learning_rate(learning_rate))
        >>> w = ms.Parameter(ms.Tensor([1.0, -1.0]), name="w")
        >>> opt = Lion([w], 0.5)
        >>> _ = opt((ms.Tensor([3.0, -0.1]),))
        >>> w.asnumpy(), [p.name for p in opt.exp_avg]
        (array([ 0.5, -0.5], dtype=float32), ['exp_avg.w'])
        """
        raise NotImplementedError(f"{self.cls_name} must define update_rule (or its own construct)")

    def _group_transformation(self, weight_decay, decay_mask, gc=False):
        def factory(learning_rate):
            parts = []
            outside = self._decay_and_scale_outside
            if self.loss_scale != 1.0 and self._scales_gradients and not outside:
                parts.append(optax.scale(1.0 / self.loss_scale))
            if not self._decoupled_weight_decay and weight_decay > 0 and not outside:
                parts.append(optax.add_decayed_weights(weight_decay, decay_mask))
            if gc:
                parts.append(optax.stateless(lambda updates, params: jax.tree.map(centralize, updates)))
            parts.append(self.update_rule(learning_rate, 0.0 if outside else weight_decay, decay_mask))
            return optax.chain(*parts)
        return optax.inject_hyperparams(factory, hyperparam_dtype=jnp.float32)(learning_rate=0.0)

    def _build_tx(self):
        """(the optax transformation of all groups, the group label of each Parameter or None)."""
        if len(self._groups) == 1:
            # One group: the decay mask is the name filter (or all True with groups).
            wd = self._groups[0][3] if any(self.decay_flags) else 0.0
            mask = None if all(self.decay_flags) else self.decay_flags
            members = self._groups[0][0]
            tx = self._group_transformation(wd, mask, bool(members) and self._gc_flags[members[0]])
            labels = None
        else:
            # Several groups: an optax.partition; within a group every Parameter is decayed or none.
            transforms = {f"group_{g}": self._group_transformation(
                              group[3], None, bool(group[0]) and self._gc_flags[group[0][0]])
                          for g, group in enumerate(self._groups)}
            labels = tuple(f"group_{g}" for g in self._group_of)
            tx = optax.partition(transforms, labels)
        return tx, labels

    def _rebuild_tx(self) -> None:
        """Build ``tx`` again after a change that adds or removes only stateless parts (LARS taking over
        the weight decay and loss scaling); the state Parameters stay as they are."""
        if self.tx is None:
            return
        tx, _ = self._build_tx()
        treedef = jax.tree_util.tree_structure(tx.init(tuple(p.value for p in self.parameters)))
        if treedef.num_leaves != self._state_treedef.num_leaves:
            raise RuntimeError(f"{self.cls_name}: rebuilding the optax transformation changed its state")
        self.tx, self._state_treedef = tx, treedef
        self._update_fn = _update_function(tx, treedef)

    def init_optax(self) -> None:
        """Build ``self.tx`` and store its initial state as Parameters (call at the end of ``__init__``).

        Each optax state leaf becomes a Parameter: per-parameter leaves go into a
        ``ParameterTuple`` attribute named by ``_slot_names`` (``<prefix>.<param
        name>``, or a format such as ``'mu_{}'``: attribute ``mu``, names
        ``mu_<param name>``), step counters are ``global_step`` and the injected learning
        rate is recomputed on each call; anything else goes to ``optax_state``.
        See :meth:`update_rule` for an example.
        """
        tx, labels = self._build_tx()
        values = tuple(p.value for p in self.parameters)
        state = _init_state(tx, values)
        flat, treedef = jax.tree_util.tree_flatten_with_path(state)
        specs, slots, extras = [], {}, []
        for path, leaf in flat:
            specs.append(self._classify(path, leaf, labels, slots, extras))
        for prefix, by_index in slots.items():
            if prefix in self.__dict__:
                raise RuntimeError(f"{self.cls_name}: optimizer state prefix '{prefix}' clashes with an attribute")
            indices = sorted(by_index)
            setattr(self, prefix, ParameterTuple(by_index[i] for i in indices))
            position = {i: k for k, i in enumerate(indices)}
            specs = [("slot", prefix, position[s[2]]) if s[0] == "slot_raw" and s[1] == prefix else s
                     for s in specs]
        if extras:
            self.optax_state = ParameterTuple(extras)
        self.tx = tx
        self._state_treedef = treedef
        # The update itself is a pure function of values, compiled once (eager calls then cost
        # one dispatch, after the first few, which a small model's run on the host: host_steps;
        # inside cellkit.jit it is inlined into the caller's computation).
        self._update_fn = _update_function(tx, treedef)
        self._state_spec = tuple(specs)

    def _classify(self, path, leaf, labels, slots, extras):
        """How one optax state leaf is stored: ('step',), ('lr', g), slot or extra Parameter."""
        keys = [getattr(k, "name", None) if isinstance(k, jax.tree_util.GetAttrKey) else
                getattr(k, "key", None) if isinstance(k, jax.tree_util.DictKey) else
                getattr(k, "idx", None) for k in path]
        group = 0
        if labels is not None and keys and keys[0] == "inner_states":
            group = int(str(keys[1]).split("_")[1])
        leaf = jnp.asarray(leaf)
        attrs = [k for k, raw in zip(keys, path) if isinstance(raw, jax.tree_util.GetAttrKey)]
        if attrs and attrs[-1] == "count" and isinstance(path[-1], jax.tree_util.GetAttrKey) \
                and leaf.shape == () and jnp.issubdtype(leaf.dtype, jnp.integer):
            return ("step",)
        if "hyperparams" in attrs and keys[-1] == "learning_rate":
            return ("lr", group)
        if (len(path) >= 2 and isinstance(path[-1], jax.tree_util.SequenceKey)
                and isinstance(path[-2], jax.tree_util.GetAttrKey)):
            i = path[-1].idx
            field = path[-2].name
            param = self.parameters[i]
            if leaf.shape == param.shape or field in self._scalar_slots:
                prefix = self._slot_names.get(field, field)
                # 'attr=prefix': the attribute and the Parameter names differ (MindSpore's AdamWeightDecay keeps
                # 'adam_m.<param>' in 'moments1'); a name format (ASGD: 'mu_{}') or a prefix ('moment1.<param>').
                attr, _, prefix = prefix.rpartition("=")
                attr, name = ((attr or prefix.split("{")[0].rstrip("_."), prefix.format(param.name)) if "{}" in prefix
                              else (attr or prefix, f"{prefix}.{param.name}"))
                by_index = slots.setdefault(attr, {})
                if i in by_index:
                    raise RuntimeError(f"{self.cls_name}: two optax state leaves for '{param.name}' map to "
                                       f"'{attr}'; give them distinct names in _slot_names")
                by_index[i] = Parameter(leaf, name=name, requires_grad=False)
                return ("slot_raw", attr, i)
        label = ".".join(str(k) for k in keys)
        extras.append(Parameter(leaf, name=f"optax_state.{label}", requires_grad=False))
        return ("extra", len(extras) - 1)

    def _state_leaves(self, step, lrs):
        leaves = []
        for spec in self._state_spec:
            kind = spec[0]
            if kind == "step":
                leaves.append(step)
            elif kind == "lr":
                leaves.append(lrs[spec[1]])
            elif kind == "slot":
                leaves.append(getattr(self, spec[1])[spec[2]].value)
            else:
                leaves.append(self.optax_state[spec[1]].value)
        return leaves

    @property
    def opt_state(self):
        """The current optax state, rebuilt from the state Parameters (read-only view).

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> w = ms.Parameter(ms.Tensor([1.0, 2.0]), name="w")
        >>> opt = nn.Adam([w], 0.1)
        >>> _ = opt((ms.Tensor([0.1, -0.2]),))
        >>> state = opt.opt_state
        >>> state.count, state.hyperparams['learning_rate']
        (Array(1, dtype=int32), Array(0.1, dtype=float32))
        >>> adam_state = state.inner_state[0][0]
        >>> adam_state.mu[0] is opt.moment1[0].value
        True
        """
        if self.tx is None:
            raise AttributeError(f"{self.cls_name} has no optax transformation")
        step = jnp.reshape(self.global_step.value, ())
        lrs = [self._group_lr(g, step) for g in range(len(self._groups))]
        return jax.tree_util.tree_unflatten(self._state_treedef, self._state_leaves(step, lrs))

    def _check_gradients(self, gradients):
        name = self.cls_name
        if isinstance(gradients, (jax.Array, np.ndarray, Parameter)) or not isinstance(gradients, (tuple, list)):
            raise TypeError(f"For '{name}', the gradients must be a tuple with one Tensor per Parameter, got "
                            f"{type(gradients).__name__}.")
        if len(gradients) != len(self.parameters):
            raise ValueError(f"For '{name}', got {len(gradients)} gradients for {len(self.parameters)} "
                             "Parameters; pass them in the order of optimizer.parameters.")
        grads = []
        for g, p in zip(gradients, self.parameters):
            g = jnp.asarray(value_of(g))
            if tuple(g.shape) != p.shape:
                raise ValueError(f"For '{name}', the gradient of Parameter '{p.name}' has shape "
                                 f"{tuple(g.shape)}, expected {p.shape}.")
            grads.append(g)
        return tuple(grads)

    def construct(self, gradients):
        if self.tx is None:
            raise NotImplementedError(f"{self.cls_name} must define construct() (or call init_optax())")
        grads = self._check_gradients(gradients)
        params = tuple(p.value for p in self.parameters)
        step = jnp.reshape(self.global_step.value, ())
        lrs = [self._group_lr(g, step) for g in range(len(self._groups))]
        new_params, new_leaves = self._update_fn(grads, params, self._state_leaves(step, lrs))
        for p, v in zip(self.parameters, new_params):
            ops.assign(p, v)
        step_written = False
        for spec, v in zip(self._state_spec, new_leaves):
            kind = spec[0]
            if kind == "slot":
                ops.assign(getattr(self, spec[1])[spec[2]], v)
            elif kind == "extra":
                ops.assign(self.optax_state[spec[1]], v)
            elif kind == "step" and not step_written:
                ops.assign(self.global_step, jnp.reshape(v, (1,)).astype(jnp.int32))
                step_written = True
        for attr, per_param, rule in self._companions:
            target = getattr(self, attr)
            if per_param:
                for t, old, new in zip(target, params, new_params):
                    ops.assign(t, rule(t.value, old, new))
            else:
                ops.assign(target, rule(target.value, None, None))
        return tuple(True for _ in params)


def _update_function(tx, treedef):
    """The update as one compiled function of values, whose first eager calls on a small model run on the
    host (cellkit.host_steps)."""
    return HostFirst(tiered_jit(functools.partial(_optax_step, tx, treedef)))


def _optax_step(tx, treedef, grads, params, leaves):
    """One optax update on values: (new params, new state leaves, each cast to its old dtype)."""
    state = jax.tree_util.tree_unflatten(treedef, leaves)
    updates, new_state = tx.update(grads, state, params)
    new_params = optax.apply_updates(params, updates)
    new_leaves = [jnp.asarray(v).astype(jnp.asarray(old).dtype)
                  for v, old in zip(treedef.flatten_up_to(new_state), leaves)]
    return new_params, new_leaves


def _init_state(tx, values):
    """``tx.init(values)``; eagerly with NumPy where host_ops can run it (zeros, copies and converted
    hyperparameters: the usual state), else as one compiled executable (not one per leaf and shape)."""
    if any(isinstance(v, jax.core.Tracer) for v in values):
        return tx.init(values)
    if host_ops.ready() and host_ops.local(values):
        try:
            container = type(values)
            with jax.disable_jit():   # (jnp's jitted functions traced inline: cellkit.host_steps says why)
                plan = host_ops.plan(lambda *vs: tx.init(container(vs)), list(values), limit=None)
            if isinstance(plan, host_ops.Plan):
                return host_ops.run(plan, list(values))
        except Exception:   # noqa: BLE001 - not traceable as a function of the values: compiled below
            pass
    try:
        return tiered_jit(tx.init)(values)
    except Exception:   # noqa: BLE001 - a state jit cannot build (host values, Python objects): as before
        return tx.init(values)
