"""``vjp``, ``jvp``, ``jacfwd``, ``jacrev``, ``hessian``, ``hvp`` and ``GradOperation`` over stateful functions and Cells.

Each transform runs the function through :func:`pure`: a stateful call becomes a
pure function of the values of the Parameters it differentiates (bound in a
nested :class:`~cellkit.engine.frame.Frame`) and of its inputs, returning its
output and the values it assigned. JAX transforms that pure function; the
assigned values come out as auxiliary outputs and are applied to the enclosing
frame afterwards (or stored, at the top), exactly as ``grad`` does. Parameters
the function reads but does not differentiate fall through to the enclosing
frame, so every transform composes with the others and with ``cellkit.jit``.

>>> import cellkit as ms
>>> from cellkit import ops
>>> w = ms.Parameter(ms.Tensor([1., 2.]), name="w")
>>> out, vjp_fn = ops.vjp(lambda x: x * w, ms.Tensor([3., 4.]), weights=[w])
>>> vjp_fn(ms.Tensor([1., 1.]))
((Array([1., 2.], dtype=float32),), (Array([3., 4.], dtype=float32),))
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ..parameter import local
from ..rewrite import rewrite_function
from .capture import Transformed
from .frame import _apply_writes, _run_in_frame, _to_values
from .frame import _Rediscover
from .grad_function import GradFunction, _positions, _weights_tuple
from .int_inputs import cast_back, cast_like, is_int, no_float0, out_dtypes, to_float, weak, zeros_of

__all__ = ["vjp", "jvp", "jacfwd", "jacrev", "hessian", "hvp", "GradOperation", "pure", "forward"]


def pure(fn, params, args, positions, kwargs=None):
    """``(f, written, parent)``: ``f(pvals, xs) -> (out, assigned values)`` runs ``fn(*args)`` with
    ``args[positions]`` replaced by ``xs`` in a frame that binds ``params`` to ``pvals``;
    ``written`` lists the Parameters ``f`` assigned (filled when it runs), ``parent`` is the
    enclosing frame, to which :func:`finish` applies those values."""
    parent = local.frame
    staged = parent.staged if parent is not None else False
    written = []
    kwargs = kwargs or {}
    fn = rewrite_function(fn)

    def f(pvals, xs):
        out, frame = _run_in_frame(parent, staged, params, pvals, fn, args, positions, xs, kwargs)
        writes = frame.writes()
        written[:] = [p for p, _ in writes]
        return out, [v for _, v in writes]

    return f, written, parent


def finish(parent, written, values) -> None:
    """Apply the values a transformed call assigned (``pure``'s ``written``) to the enclosing frame."""
    _apply_writes(parent, list(zip(written, values)))


def _name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _split_aux(out, has_aux, who):
    if not has_aux:
        return out, None
    if not isinstance(out, tuple) or len(out) < 2:
        raise ValueError(f"{who}(has_aux=True): the function must return a tuple (output, aux, ...), "
                         f"got {type(out).__name__}")
    return out[0], (out[1] if len(out) == 2 else tuple(out[1:]))


def _like(v, x, what, i):
    """Tangent/cotangent ``v`` cast to the dtype of ``x``; its shape must match."""
    v = jnp.asarray(_to_values(v))
    if jnp.shape(v) != jnp.shape(x):
        raise ValueError(f"{what}[{i}] has shape {jnp.shape(v)} but the value it belongs to has shape "
                         f"{jnp.shape(x)}; they must match")
    return v.astype(jnp.result_type(x))


def vjp(fn, *inputs, weights=None, has_aux=False):
    """``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``), MindSpore's ``ops.vjp``.

    ``vjp_fn(v)`` returns the gradients of ``<v, fn(*inputs)>`` for every input
    (a tuple), and, when ``weights`` are given, ``(input gradients, weight
    gradients)``. Parameters ``fn`` assigns are written back when ``vjp`` runs.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> out, f = ops.vjp(lambda x, y: x ** 3 + y, ms.Tensor([1., 2.]), ms.Tensor([0., 1.]))
    >>> f(ms.Tensor([1., 1.]))
    (Array([ 3., 12.], dtype=float32), Array([1., 1.], dtype=float32))
    """
    params, single = _weights_tuple(weights)
    params = params or ()
    xs = [_to_values(a) for a in inputs]
    ints = [k for k, x in enumerate(xs) if is_int(x)]
    try:
        main, raw, aux, held = _vjp_pure(fn, inputs, xs, params, has_aux, ints, ())
    except _Rediscover:
        raise
    except Exception:  # noqa: BLE001 - the function needs its integer inputs as integers
        if not ints:
            raise
        main, raw, aux, held = _vjp_pure(fn, inputs, xs, params, has_aux, (), ints)
    shown_main, shown_aux = main, aux
    if ints and not held:
        dtypes = _original_dtypes(fn, xs, has_aux)
        shown_main, shown_aux = cast_like(main, dtypes[0]), cast_like(aux, dtypes[1])

    def vjp_fn(*v):
        v = v[0] if len(v) == 1 else v
        v = tuple(v) if isinstance(main, tuple) and isinstance(v, list) else v
        try:
            leaves, tree = jax.tree_util.tree_flatten(main)
            vl = tree.flatten_up_to(_to_values(v))
        except (ValueError, TypeError) as err:
            raise ValueError(f"vjp_fn: the vector must have the structure of the output of "
                             f"{_name(fn)}, {jax.tree_util.tree_map(jnp.shape, main)}") from err
        v = tree.unflatten([_like(a, m, "vjp_fn's vector", i) for i, (a, m) in enumerate(zip(vl, leaves))])
        gw, gx = raw(v)
        it = iter(gx)
        gx = tuple(zeros_of(x) if k in held else (cast_back(next(it), x.dtype) if k in ints else next(it))
                   for k, x in enumerate(xs))
        gx = tuple(no_float0(list(gx), list(xs)))  # a Python int input: zeros, never float0
        if weights is None:
            return gx
        gw = [g if p.requires_grad else jnp.zeros_like(g) for p, g in zip(params, gw)]
        return gx, (gw[0] if single else tuple(gw))

    return (shown_main, vjp_fn, shown_aux) if has_aux else (shown_main, vjp_fn)


def _vjp_pure(fn, inputs, xs, params, has_aux, ints, held):
    """``jax.vjp`` of ``fn``: integer inputs at ``ints`` as floats, those at ``held`` not differentiated."""
    positions = [k for k in range(len(xs)) if k not in held]
    dxs = [to_float(xs[k]) if k in ints else xs[k] for k in positions]
    f, written, parent = pure(fn, params, inputs, positions)

    def g(pvals, dxs):
        dxs = [weak(x) if k in ints else x for k, x in zip(positions, dxs)]
        out, wv = f(pvals, dxs)
        main, aux = _split_aux(out, has_aux, "vjp")
        return main, (aux, wv)

    main, raw, (aux, wv) = jax.vjp(g, [p.value for p in params], dxs, has_aux=True)
    finish(parent, written, wv)
    return main, raw, aux, held


def _original_dtypes(fn, xs, has_aux):
    """The dtypes of ``fn(*xs)``'s output (and aux) with its integer inputs as they are."""
    f, _, _ = pure(fn, (), xs, ())

    def run():
        return _split_aux(f([], [])[0], has_aux, "vjp")

    return out_dtypes(run)


def _as_tuple(x):
    return (tuple(x), False) if isinstance(x, (tuple, list)) else ((x,), True)


def jvp(fn, inputs, v, has_aux=False):
    """``(output, jvp)`` (``(output, jvp, aux)`` with ``has_aux``), MindSpore's ``ops.jvp``: forward mode.

    ``inputs`` and ``v`` are a Tensor or a tuple of Tensors of the same shapes.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.jvp(lambda x: x * x, ms.Tensor([1., 2.]), ms.Tensor([1., 1.]))
    (Array([1., 4.], dtype=float32), Array([2., 4.], dtype=float32))
    """
    xs, _ = _as_tuple(inputs)
    vs, _ = _as_tuple(v)
    if len(xs) != len(vs):
        raise ValueError(f"jvp: {len(xs)} input(s) but {len(vs)} tangent(s) in v; give one per input")
    xs = [_to_values(x) for x in xs]
    vs = [_like(t, x, "v", i) for i, (t, x) in enumerate(zip(vs, xs))]

    def run(g, dxs, positions, ints):
        dvs = [to_float(vs[k]) if k in ints else vs[k] for k in positions]
        return jax.jvp(g, (dxs,), (dvs,), has_aux=True)

    (main, tangent, (aux, wv)), done, dtypes = forward(fn, xs, has_aux, "jvp", run)
    done(wv)
    if dtypes is not None:
        main, tangent, aux = cast_like(main, dtypes[0]), cast_like(tangent, dtypes[0]), cast_like(aux, dtypes[1])
    return (main, tangent, aux) if has_aux else (main, tangent)


def forward(fn, xs, has_aux, who, run):
    """A forward-mode transform of ``fn`` over the values ``xs``, with MindSpore's rule for integers.

    ``run(g, dxs, positions, ints)`` applies the JAX transform to ``g(dxs) -> (main, (aux,
    writes))``, where ``dxs`` are the differentiated inputs (those at ``positions``; integer ones,
    at ``ints``, as floats). Returns ``(run's result, done, dtypes)``: ``done(writes)`` applies the
    writes; ``dtypes`` are the output and aux dtypes to cast back to where integers were made
    floats (else None). A function that needs its integers as integers runs with them held."""
    ints = [k for k, x in enumerate(xs) if is_int(x)]

    def attempt(ints, held):
        positions = [k for k in range(len(xs)) if k not in held]
        f, written, parent = pure(fn, (), xs, positions)

        def g(dxs):
            dxs = [weak(x) if k in ints else x for k, x in zip(positions, dxs)]
            out, wv = f([], dxs)
            main, aux = _split_aux(out, has_aux, who)
            return main, (aux, wv)

        dxs = [to_float(xs[k]) if k in ints else xs[k] for k in positions]
        result = run(g, dxs, positions, ints)
        return result, (lambda wv: finish(parent, written, wv))

    try:
        result, done = attempt(ints, ())
    except _Rediscover:
        raise
    except Exception:  # noqa: BLE001 - the function needs its integer inputs as integers
        if not ints:
            raise
        result, done = attempt((), ints)
        return result, done, None
    return result, done, (_original_dtypes(fn, xs, has_aux) if ints else None)


class _Jacobian(Transformed):
    """What ``jacfwd``/``jacrev`` return: call it like ``fn``."""

    def __init__(self, fn, grad_position, has_aux, mode):
        self.fn = rewrite_function(fn)
        self.positions = _positions(grad_position)
        if self.positions is None:
            raise TypeError(f"{mode}: grad_position must be an int or a tuple of ints, got None")
        self.single = isinstance(grad_position, int)
        self.has_aux = has_aux
        self.mode = mode
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        positions = self.positions
        for i in positions:
            if not -len(args) <= i < len(args):
                raise IndexError(f"{self.mode}: grad_position {i} is out of range for {len(args)} "
                                 f"positional inputs of {_name(self.fn)}")
        f, written, parent = pure(self.fn, (), args, positions, kwargs)
        has_aux, mode = self.has_aux, self.mode

        def g(*xs):
            out, wv = f([], list(xs))
            main, aux = _split_aux(out, has_aux, mode)
            return main, (aux, wv)

        transform = jax.jacfwd if mode == "jacfwd" else jax.jacrev
        argnums = 0 if self.single else tuple(range(len(positions)))
        jac, (aux, wv) = transform(g, argnums=argnums, has_aux=True)(*[_to_values(args[i]) for i in positions])
        finish(parent, written, wv)
        return (jac, aux) if has_aux else jac


def jacfwd(fn, grad_position=0, has_aux=False):
    """The Jacobian of ``fn`` by forward mode, MindSpore's ``ops.jacfwd``.

    For one output and an int ``grad_position`` the result is one array of
    shape ``output.shape + input.shape``; a tuple of positions gives a tuple
    per output, and a tuple of outputs a tuple of those (JAX's layout).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.jacfwd(lambda x: x * x)(ms.Tensor([1., 2.]))
    Array([[2., 0.],
           [0., 4.]], dtype=float32)
    """
    return _Jacobian(fn, grad_position, has_aux, "jacfwd")


def jacrev(fn, grad_position=0, has_aux=False):
    """The Jacobian of ``fn`` by reverse mode, MindSpore's ``ops.jacrev``; laid out as :func:`jacfwd`.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.jacrev(lambda x, y: x * y, grad_position=1)(ms.Tensor([1., 2.]), ms.Tensor([3., 4.]))
    Array([[1., 0.],
           [0., 2.]], dtype=float32)
    """
    return _Jacobian(fn, grad_position, has_aux, "jacrev")


def hessian(fn, grad_position=0, has_aux=False):
    """The Hessian of a scalar ``fn`` (``jacfwd`` over ``jacrev``); a cellkit addition (MindSpore has none).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.hessian(lambda x: (x ** 3).sum())(ms.Tensor([1., 2.]))
    Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
    """
    return _Jacobian(_Jacobian(fn, grad_position, has_aux, "jacrev"), grad_position, has_aux, "jacfwd")


def hvp(fn, inputs, v, weights=None):
    """Hessian-vector product of a scalar ``fn``, forward over reverse; a cellkit addition.

    Without ``weights``: the Hessian with respect to ``inputs`` (a Tensor or a
    tuple) times ``v`` (shaped as ``inputs``). With ``weights`` (a Parameter or
    a list of them, e.g. ``net.trainable_params()``): the Hessian with respect to
    the weights times ``v`` (one tangent per weight), at ``fn(*inputs)``. The
    Hessian itself is never built.

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> w = ms.Parameter(ms.Tensor([1., 2.]), name="w")
    >>> ops.hvp(lambda x: ((w * x) ** 2).sum(), ms.Tensor([3., 1.]), [ms.Tensor([1., 0.])], weights=[w])
    (Array([18.,  0.], dtype=float32),)
    """
    xs, single = _as_tuple(inputs)
    if weights is None:
        positions = 0 if single else tuple(range(len(xs)))
        return jvp(GradFunction(fn, positions, None, False, False), xs, v)[1]
    params, single_w = _weights_tuple(weights)
    vs = list(v) if isinstance(v, (tuple, list)) else [v]
    if len(vs) != len(params):
        raise ValueError(f"hvp: {len(params)} weight(s) but {len(vs)} tangent(s) in v; give one per weight")
    vs = [_like(t, p.value, "v", i) for i, (t, p) in enumerate(zip(vs, params))]
    g = GradFunction(fn, None, params, False, False)
    f, written, parent = pure(g, params, xs, ())

    def run(pvals):
        out, wv = f(pvals, [])
        return out, wv

    _, tangent, wv = jax.jvp(run, ([p.value for p in params],), (vs,), has_aux=True)
    finish(parent, written, wv)
    return tangent[0] if single_w else tuple(tangent)


class GradOperation:
    """MindSpore's ``ops.GradOperation(get_all, get_by_list, sens_param)``: ``GradOperation(...)(fn, weights)``.

    * default: the gradient with respect to the first input;
    * ``get_all``: a tuple with the gradient of every input;
    * ``get_by_list``: a tuple with the gradient of each of ``weights``;
    * both: ``(input gradients, weight gradients)``;
    * ``sens_param``: the last input is the output's gradient (else all ones).

    >>> import cellkit as ms
    >>> from cellkit import ops
    >>> ops.GradOperation(get_all=True)(lambda x, y: (x * y).sum())(ms.Tensor([1., 2.]), ms.Tensor([3., 4.]))
    (Array([3., 4.], dtype=float32), Array([1., 2.], dtype=float32))
    """

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(value, bool):
                raise TypeError(f"GradOperation: {name} must be a bool, got {type(value).__name__}")
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise TypeError("GradOperation(get_by_list=True): give the weights, e.g. "
                            "GradOperation(get_by_list=True)(net, net.trainable_params())")
        op = self
        holder = GradFunction(fn, 0 if not op.get_by_list or op.get_all else None,
                              weights if op.get_by_list else None, False, False)

        @functools.wraps(fn)
        def grad_fn(*args, **kwargs):
            sens = None
            if op.sens_param:
                if not args:
                    raise TypeError("GradOperation(sens_param=True): pass the sensitivity as the last input")
                args, sens = args[:-1], args[-1]
            if op.get_all:
                positions = tuple(range(len(args)))
            elif op.get_by_list:
                positions = ()
            else:
                if not args:
                    raise TypeError(f"GradOperation: {_name(fn)} has no input to differentiate; "
                                    "use get_by_list=True with weights")
                positions = (0,)
            _, gx, gw, _ = holder._differentiate(args, kwargs, positions, sens)
            if op.get_all and op.get_by_list:
                return tuple(gx), tuple(gw)
            if op.get_all:
                return tuple(gx)
            if op.get_by_list:
                return tuple(gw)
            return gx[0] if gx else ()

        return grad_fn
