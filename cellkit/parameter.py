"""``Parameter`` (a named, mutable array) and ``ParameterTuple``.

A Parameter holds one ``jax.Array``. Reading it asks the state engine's active
frame first (inside ``cellkit.jit``/``grad`` the frame maps it to a traced
value); outside any transform there is no frame and a read is a plain attribute
access. Every write (``set_data``, ``p[i] = v``, ``ops.assign``) goes through
:meth:`Parameter._write`, which the frame records, or which stores the value
directly when no frame is active.

>>> import numpy as np
>>> import cellkit as ms
>>> w = ms.Parameter(ms.Tensor(np.ones((2, 3)), ms.float32), name="w")
>>> w
Parameter (name=w, shape=(2, 3), dtype=Float32, requires_grad=True)
>>> w[0] = 5.
>>> w.asnumpy()[:, 0]
array([5., 1.], dtype=float32)
>>> (w * 2).sum()
Array(36., dtype=float32)
"""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import dtype as mstype
from .display import parameter_html
from .parameter_members import ParameterMembers
from .tensor import check_data, check_int_range, from_initializer, host_to_device, to_array

__all__ = ["Parameter", "ParameterTuple", "PARAMETER_NAME_DEFAULT"]

PARAMETER_NAME_DEFAULT = "Parameter"


class _Local(threading.local):
    # The state engine's innermost active frame on this thread (None: eager).
    frame = None
    # While cellkit.parallel.abstract() is active: called with each new Parameter.
    on_create = None


local = _Local()

# Bumped on every structural change (a Cell attribute set, a Parameter renamed,
# reshaped or its requires_grad flipped); caches keyed on structure compare it.
structure_epoch = [0]


def bump_structure() -> None:
    structure_epoch[0] += 1


# Value types that stand for data not made yet (cellkit.parallel registers its
# AbstractValue): a Parameter holding one can be flattened but not computed with.
abstract_types: tuple = ()


def _is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def commit(param: "Parameter", value) -> None:
    """Store ``value`` into ``param`` outside any frame, refusing tracer leaks."""
    if _is_tracer(value) and not _is_tracer(param._value):
        raise RuntimeError(
            f"Parameter '{param._name}': a traced value was assigned to it outside cellkit's "
            "transforms (e.g. inside plain jax.jit, jax.grad or jax.vmap). The update would be "
            "lost and the Parameter corrupted. Use cellkit.jit / cellkit.grad for functions that "
            "assign Parameters, or return the new value from the transformed function and assign "
            "it afterwards (or pass the Cell into the jax transform as an argument).")
    param._value = value


def _check_trace_static(param, what) -> None:
    """Refuse changing a Parameter's name or requires_grad while ``cellkit.jit`` traces:
    the change would happen once, at trace time, and not on later (compiled) calls."""
    frame = local.frame
    if frame is not None and getattr(frame, "staged", False) and not frame.owns(param):
        raise RuntimeError(
            f"Parameter '{param._name}': cannot change its {what} inside a traced function "
            "(cellkit.jit or GRAPH_MODE): the change would not be replayed on later calls. "
            "Change it outside the traced function.")


def _check_requires_grad(name, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"Parameter '{name}': requires_grad must be a bool (True or False), got "
                        f"{type(value).__name__} {value!r}")
    return bool(value)


def _bounds_error(param, position, value, axis, size):
    return IndexError(f"Parameter '{param._name}': index {value} (position {position}) is out of "
                      f"range for axis {axis} of size {size} (shape {param.shape}); valid indices "
                      f"are {-size}..{size - 1}")


def _checked_index(param, index, shape):
    """``index`` with Parameters unwrapped and lists made arrays; IndexError for concrete integer
    indices outside ``shape`` (JAX clamps reads and drops writes there; MindSpore raises)."""
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(_unwrap(i) for i in items)
    items = tuple(np.asarray(i) if isinstance(i, list) else i for i in items)

    def dims(i):  # how many axes an index item consumes
        if i is None or i is Ellipsis or isinstance(i, bool):
            return 0
        if np.dtype(getattr(i, "dtype", "i")).kind == "b":  # a mask: one axis per dimension
            return getattr(i, "ndim", 0)
        return 1

    used = sum(dims(i) for i in items)
    if used > len(shape):
        raise IndexError(f"Parameter '{param._name}': too many indices: the Parameter has shape "
                         f"{tuple(shape)} ({len(shape)} axes) but {used} were indexed")
    if sum(i is Ellipsis for i in items) > 1:
        return items  # JAX says what is wrong
    axis = 0
    for pos, i in enumerate(items):
        if i is Ellipsis:
            axis += len(shape) - used
            continue
        n = dims(i)
        if n == 1 and not isinstance(i, slice) and not _is_tracer(i):
            size = shape[axis]
            if isinstance(i, (int, np.integer)):
                if not -size <= i < size:
                    raise _bounds_error(param, pos, int(i), axis, size)
            elif np.dtype(getattr(i, "dtype", "f")).kind in "iu" and np.size(i):
                arr = np.asarray(i)
                bad = arr[(arr < -size) | (arr >= size)]
                if bad.size:
                    raise _bounds_error(param, pos, int(bad.flat[0]), axis, size)
        axis += n
    return items if isinstance(index, tuple) else items[0]


def _unwrap(x):
    return x.value if isinstance(x, Parameter) else x


def _kind_ok(src, dst) -> bool:
    """May data of dtype ``src`` be stored into dtype ``dst`` without losing its kind?"""
    order = "biufc"
    s, d = np.dtype(src).kind, np.dtype(dst).kind
    if s not in order or d not in order:
        return np.dtype(src) == np.dtype(dst)
    if s == "u" and d == "i":
        return True
    return order.index(s) <= order.index(d)


class Parameter(ParameterMembers):
    """A named array that Cells, optimizers and the state engine update in place.

    Args:
        default_input: a ``jax.Array``/Tensor, NumPy array, Python int (→ Int32)
            or float (→ Float32), or the result of ``initializer(...)`` (lazy:
            shape and dtype are known, the value is made by :meth:`init_data`
            or on first use).
        name: the Parameter's name; a Cell names an unnamed Parameter after the
            attribute it is stored in, and prefixes it with the Cell's path.
        requires_grad: whether optimizers and ``cellkit.grad`` treat it as
            trainable.

    >>> import cellkit as ms
    >>> z = ms.Parameter(default_input=5, name='z', requires_grad=False)
    >>> print(z, "value:", z.asnumpy())
    Parameter (name=z, shape=(), dtype=Int32, requires_grad=False) value: 5
    """

    __slots__ = ("_value", "_name", "_requires_grad", "_init", "sharding", "__weakref__")

    def __init__(self, default_input=None, name=None, requires_grad=True,
                 layerwise_parallel=False, parallel_optimizer=True, *, sharding=None, **_ignored):
        self._init = None
        self._value = None
        self.sharding = sharding
        self._name = PARAMETER_NAME_DEFAULT if name is None else self._check_name(name)
        self._requires_grad = _check_requires_grad(self._name, requires_grad)
        data = default_input
        if isinstance(data, Parameter):
            data = data._get()
        if hasattr(data, "__cellkit_lazy__"):
            self._init = data  # a LazyInit from initializer(): materialised on first use
        elif data is None or isinstance(data, bool):
            raise TypeError(f"Parameter '{self._name}': default_input must be a Tensor, a NumPy "
                            f"array, an int, a float or initializer(...), got {data!r}")
        elif isinstance(data, int):
            self._value = to_array(data, mstype.int32, f"Parameter '{self._name}'")
        else:
            self._value = to_array(data, None, f"Parameter '{self._name}'")
        if local.on_create is not None:
            local.on_create(self)
        frame = local.frame
        if frame is not None:
            frame.adopt(self)

    # ----- identity and naming -------------------------------------------------

    @staticmethod
    def _check_name(name) -> str:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a Parameter's name must be a non-empty string, got {name!r}")
        return name

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, name) -> None:
        name = self._check_name(name)
        _check_trace_static(self, "name")
        self._name = name
        bump_structure()

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        value = _check_requires_grad(self._name, value)
        _check_trace_static(self, "requires_grad")
        self._requires_grad = value
        bump_structure()

    def __repr__(self) -> str:
        if not self._holds_array():
            # A leaf of another kind, e.g. in the tree jax.tree.map(jnp.shape, net) returns.
            return f"Parameter (name={self._name}, value={self._value!r}, requires_grad={self._requires_grad})"
        return (f"Parameter (name={self._name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self._requires_grad})")

    __str__ = __repr__

    def _repr_html_(self) -> str:
        return parameter_html(self)

    def _holds_array(self) -> bool:
        """Whether this Parameter holds an array (or is lazy), not some other pytree leaf.

        ``jax.tree.map(f, net)`` puts whatever ``f`` returns where the arrays were: a
        shape tuple, an int, None.
        """
        value = self._value
        if value is None:
            return self._init is not None
        return hasattr(value, "shape") and hasattr(value, "dtype")

    # ----- reading -------------------------------------------------------------

    def _get(self):
        """The stored value (materialising a lazy Parameter), ignoring frames."""
        value = self._value
        if value is None:
            self._materialize()
            value = self._value
        return value

    def _materialize(self) -> None:
        # An initializer must never see traced state, and must run eagerly even
        # when first needed in the middle of a trace.
        saved, local.frame = local.frame, None
        try:
            # eval_context: eager, even under a trace that wraps constants (jet's). Not
            # ensure_compile_time_eval: that would also fold the constants inside the
            # initializer's own jitted draws eagerly, one compilation each.
            with jax.core.eval_context():
                self._value = self._init.init_data()
        finally:
            local.frame = saved
        self._init = None

    def _read(self):
        """The current value, through the active frame; abstract values allowed."""
        frame = local.frame
        if frame is None:
            return self._get()
        return frame.read(self)

    @property
    def value(self):
        """The current value as a ``jax.Array`` (a traced value inside transforms)."""
        frame = local.frame
        if frame is None:
            value = self._value
            return self._get() if value is None else value
        return frame.read(self)

    def __cellkit_value__(self):
        return self.value

    __jax_array__ = __cellkit_value__

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value, dtype=dtype)

    @property
    def data(self) -> "Parameter":
        """The Parameter itself (MindSpore's ``Parameter.data``)."""
        return self

    @property
    def has_init(self) -> bool:
        """True while the Parameter is lazy (no value made yet)."""
        return self._value is None

    @property
    def shape(self) -> tuple:
        if self._value is None:
            return tuple(self._init.shape)
        return tuple(self._read().shape)

    @property
    def dtype(self):
        raw = self._init.dtype if self._value is None else self._read().dtype
        try:
            return mstype.get_dtype(raw)
        except TypeError:
            return raw  # e.g. a PRNG key array

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def asnumpy(self) -> np.ndarray:
        """A NumPy copy of the value."""
        return np.array(self.value)

    def __getattr__(self, name):
        # Array methods (sum, reshape, astype, T, ...) come from the value.
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return getattr(self.value, name)
        except AttributeError:
            raise AttributeError(f"'Parameter' object has no attribute '{name}'") from None

    def __getitem__(self, index):
        value = self.value
        return value[_checked_index(self, index, value.shape)]

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __complex__(self) -> complex:
        return complex(self.value)

    # ----- writing -------------------------------------------------------------

    def _coerce(self, data, *, allow_reshape=False, what="set_data"):
        """``data`` as an array of this Parameter's dtype, or a clear error."""
        label = f"Parameter '{self._name}'"
        if isinstance(data, Parameter):
            data = data.value
        old_dtype = np.dtype(self.dtype)
        if isinstance(data, (np.ndarray, np.generic)):
            data = host_to_device(np.array(data, copy=True))  # a copy: later changes must not leak in
        elif not isinstance(data, jax.Array):
            check_data(data, f"{label}: {what}")
            check_int_range(data, old_dtype, f"{label}: {what}")
            data = jnp.asarray(data)
        if not _kind_ok(data.dtype, old_dtype):
            raise TypeError(
                f"{label}: {what} got dtype {mstype.get_dtype(data.dtype)} but the Parameter "
                f"has dtype {self.dtype}; converting would lose data. Cast explicitly "
                f"(e.g. ops.cast(x, {self.dtype})) if that is what you want.")
        shape = tuple(data.shape)
        if shape != self.shape and not allow_reshape:
            raise ValueError(
                f"{label}: {what} got shape {shape} but the Parameter has shape {self.shape}; "
                "pass slice_shape=True to change its shape")
        if data.dtype != old_dtype or getattr(data, "weak_type", False):
            # A strong dtype: a weak-typed value (from a Python scalar) would make the
            # next compiled call see a different input type and retrace.
            data = jax.lax.convert_element_type(data, old_dtype)
        return data

    def _write(self, value) -> None:
        frame = local.frame
        if frame is None:
            commit(self, value)
        else:
            frame.write(self, value)

    def set_data(self, data, slice_shape=False) -> "Parameter":
        """Replace the value; returns the Parameter.

        The data is cast to the Parameter's dtype. A different shape is refused
        unless ``slice_shape=True``. On any error the old value is kept.

        >>> import numpy as np
        >>> import cellkit as ms
        >>> x = ms.Parameter(ms.Tensor(np.ones((1, 2)), ms.float32), name="x")
        >>> x.set_data(ms.Tensor(np.zeros((1, 2)), ms.float32)).asnumpy()
        array([[0., 0.]], dtype=float32)
        >>> x.set_data(ms.Tensor(np.ones((1, 4))), slice_shape=True).shape
        (1, 4)
        """
        if self._value is None and self._init is not None:
            self._get()
        new = self._coerce(data, allow_reshape=slice_shape)
        if tuple(new.shape) != self.shape:
            if local.frame is not None:
                raise ValueError(f"Parameter '{self._name}': its shape cannot change inside a "
                                 "traced function; call set_data(..., slice_shape=True) eagerly")
            commit(self, new)
            bump_structure()
            return self
        self._write(new)
        return self

    def assign_value(self, value) -> "Parameter":
        """Assign a value of the same shape (what ``ops.assign`` does); returns self."""
        self._write(self._coerce(value, what="assign"))
        return self

    def __setitem__(self, index, value) -> None:
        """``p[index] = value``: MindSpore's index assignment, in place; on any error the value is kept.

        An integer index out of range raises IndexError (JAX would drop the write).

        >>> import cellkit as ms
        >>> p = ms.Parameter(ms.Tensor([1., 2., 3.]), name="p")
        >>> p[[0, 2]] = 0.
        >>> p.asnumpy()
        array([0., 2., 0.], dtype=float32)
        >>> p[5] = 1.
        Traceback (most recent call last):
        ...
        IndexError: Parameter 'p': index 5 (position 0) is out of range for axis 0 of size 3 (shape (3,)); valid indices are -3..2
        """
        current = self.value
        label = f"Parameter '{self._name}'[...] ="
        if not isinstance(value, (jax.Array, np.ndarray, np.generic, Parameter)):
            check_data(value, label)
            check_int_range(value, current.dtype, label)
        value = _unwrap(value)
        if not _kind_ok(jnp.result_type(value), current.dtype):
            raise TypeError(f"Parameter '{self._name}': cannot store {jnp.result_type(value)} "
                            f"values into a {self.dtype} Parameter without losing data")
        self._write(current.at[_checked_index(self, index, current.shape)].set(value))

    def init_data(self, layout=None, set_sliced=False) -> "Parameter":
        """Make the value of a lazy Parameter now; returns the Parameter."""
        self._get()
        return self

    def clone(self, init="same") -> "Parameter":
        """A new Parameter with the same name, requires_grad and value.

        ``init`` other than ``'same'`` (an initializer name or Initializer)
        makes a fresh value of the same shape and dtype.

        >>> import cellkit as ms
        >>> p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
        >>> q = p.clone()
        >>> q[0] = 9.
        >>> p.asnumpy(), q.name
        (array([1., 2.], dtype=float32), 'p')
        """
        new = object.__new__(Parameter)
        new._name, new._requires_grad, new.sharding = self._name, self._requires_grad, self.sharding
        new._init = None
        if isinstance(init, str) and init == "same":
            # jax.Arrays are immutable: sharing one is safe, a write replaces it.
            new._value = self._value
            new._init = self._init
        else:
            new._value = from_initializer(init, self.shape, self.dtype)
        return new

    def copy(self) -> "Parameter":
        """Same as ``clone()``."""
        return self.clone()


def _make_binop(name):
    def op(self, other):
        return getattr(self.value, name)(_unwrap(other))
    op.__name__ = name
    return op


def _make_unop(name):
    def op(self):
        return getattr(self.value, name)()
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
              "and", "or", "xor", "lshift", "rshift"):
    setattr(Parameter, f"__{_name}__", _make_binop(f"__{_name}__"))
    setattr(Parameter, f"__r{_name}__", _make_binop(f"__r{_name}__"))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Parameter, f"__{_name}__", _make_binop(f"__{_name}__"))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(Parameter, f"__{_name}__", _make_unop(f"__{_name}__"))
# Elementwise __eq__ (as for arrays) must not make Parameters unhashable.
Parameter.__hash__ = object.__hash__


def _flatten_parameter(p):
    return (p._read(),), (p._name, p._requires_grad, p.sharding)


def _unflatten_parameter(aux, children):
    p = object.__new__(Parameter)
    p._name, p._requires_grad, p.sharding = aux
    p._value = children[0]
    p._init = None
    return p


jax.tree_util.register_pytree_with_keys(
    Parameter,
    lambda p: (((jax.tree_util.GetAttrKey("value"), p._read()),), (p._name, p._requires_grad, p.sharding)),
    _unflatten_parameter,
    _flatten_parameter,
)


class ParameterTuple(tuple):
    """A tuple of Parameters that can be cloned under a new name prefix.

    >>> import cellkit as ms
    >>> x = ms.Parameter(ms.Tensor([1., 2.]), name="x")
    >>> y = ms.Parameter(ms.Tensor([3.]), name="y")
    >>> ms.ParameterTuple((x, y)).clone("copy")
    (Parameter (name=copy.x, shape=(2,), dtype=Float32, requires_grad=True), Parameter (name=copy.y, shape=(1,), dtype=Float32, requires_grad=True))
    """

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for i, p in enumerate(items):
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple: element {i} is a {type(p).__name__}, "
                                "expected a Parameter")
        seen = {}
        for p in items:
            if seen.setdefault(p.name, p) is not p:
                raise ValueError(f"ParameterTuple: two different Parameters are both named '{p.name}'; "
                                 "give them unique names")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init="same") -> "ParameterTuple":
        """Clone every Parameter, naming each ``prefix + '.' + name``."""
        if not isinstance(prefix, str) or not prefix:
            raise ValueError(f"ParameterTuple.clone: prefix must be a non-empty string, got {prefix!r}")
        clones = []
        for p in self:
            c = p.clone(init)
            c._name = f"{prefix}.{p._name}"
            clones.append(c)
        return ParameterTuple(clones)


jax.tree_util.register_pytree_node(
    ParameterTuple, lambda t: (tuple(t), None), lambda _, c: tuple.__new__(ParameterTuple, c))
