"""The refusal cases of cellkit's core (Cells, Parameters, jit, grad, initializers) and their helpers; see test_errors.py."""

import datetime

import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn, ops
from cellkit.common.initializer import (Dirac, HeUniform, Identity, Orthogonal, Sparse, VarianceScaling,
                                        XavierUniform, initializer)

class Block(nn.Cell):
    def __init__(self, widths=(3, 4, 2)):
        super().__init__()
        self.layers = nn.SequentialCell([nn.Dense(widths[0], widths[1]), nn.ReLU(), nn.Dense(widths[-2], widths[-1])])
        self.scale = ms.Parameter(ms.Tensor([1., 2.]), name="scale")
        self.count = ms.Parameter(ms.Tensor([0, 0], ms.int32), name="count", requires_grad=False)

    def construct(self, x):
        return self.layers(x) * self.scale


class Branchy(nn.Cell):
    """A construct with Python control flow on a value: cannot be traced."""

    def __init__(self):
        super().__init__()
        self.inner = Block()

    def construct(self, x):
        if x.sum() > 0:
            return self.inner(x)
        return x


X = np.ones((2, 3), np.float32)


def snapshot(obj):
    """Everything a refused action must leave alone."""
    if isinstance(obj, ms.Parameter):
        return ("Parameter", obj.name, obj.requires_grad, obj.shape, str(obj.dtype), np.array(obj.value))
    cells = [(path, type(c).__name__, c.training, tuple(k for k in c.__dict__ if not k.startswith("_ck_")))
             for path, c in obj.cells_and_names()]
    return ("Cell", cells, [(path, snapshot(p)) for path, p in obj.parameters_and_names()])


def _message(err) -> str:
    return "\n".join([str(err)] + list(getattr(err, "__notes__", [])))


def in_jit(body):
    """``body(net)`` inside a cellkit.jit function that then calls ``net``."""
    def action(net, keep):
        def step(x):
            body(net)
            return net(x)
        ms.jit(step)(X)
    return action


def setattr_in_jit(name, make):
    """``net.<name> = make()`` inside a cellkit.jit function that then calls ``net``."""
    return in_jit(lambda net: setattr(net, name, make()))


def set_item(index, value, param="scale"):
    def action(net, keep):
        getattr(net, param)[index] = value
    return action


def _train_step(net, make_loss):
    """A cellkit.jit step: loss, gradients of every trainable Parameter, SGD update."""
    params = net.trainable_params()
    grad_fn = ms.value_and_grad(lambda x, k: make_loss(net(x), k), None, params)

    @ms.jit
    def step(x, k, lr):
        loss, grads = grad_fn(x, k)
        for p, g in zip(params, grads):
            ops.assign(p, p - lr * g)
        return loss
    return step


def _debug(flag, make_loss):
    def action(net, keep):
        step = _train_step(net, make_loss)
        step(X, 1.0, 0.0)  # compiled before the check is turned on (with lr 0: nothing moves)
        ms.set_context(**{flag: True})
        try:
            step(X, -1.0 if flag == "debug_nans" else 0.0, 0.1)  # now the loss is NaN / inf
        finally:
            ms.set_context(**{flag: False})
    return action


def _changing_params():
    ps = iter([ms.Parameter(ms.Tensor(float(i)), name=f"p{i}") for i in range(12)])

    @ms.jit
    def f():
        return next(ps) * 1.0
    return f


def _bprop_cell(bprop, construct=lambda self, x: x * self.w):
    """A Cell named Custom with Parameter ``w``, the given ``construct`` and ``bprop``."""
    class Custom(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor([2., 3.]), name="w")

    Custom.construct, Custom.bprop, Custom._ck_bprop, Custom._cell_special = construct, bprop, True, True
    return Custom()


def _dup_names(net, keep):
    net.__dict__["twin"] = ms.Parameter(ms.Tensor([5.]), name="scale")  # bypasses the checks, as a copy would
    try:
        net.parameters_dict()
    finally:
        del net.__dict__["twin"]


def _graph_mode_call(net, keep):
    ms.set_context(mode=ms.GRAPH_MODE)
    net(np.ones((2, 5), np.float32))


TRACED = "inside a traced function"

CASES = [
    # ----- Tensor construction -------------------------------------------------------------
    ("tensor-str", lambda net, keep: ms.Tensor("1.5"), TypeError,
     r"Tensor: cannot convert the data \(str '1.5'\).*expected a number, a \(nested\) list"),
    ("tensor-bytes", lambda net, keep: ms.Tensor(b"12"), TypeError, r"cannot convert the data \(bytes"),
    ("tensor-object-array", lambda net, keep: ms.Tensor(np.array([1, "a"], dtype=object)), TypeError,
     r"NumPy array of dtype object, which is not numeric"),
    ("tensor-str-array", lambda net, keep: ms.Tensor(np.array(["a", "b"])), TypeError,
     r"NumPy array of dtype <U1, which is not numeric"),
    ("tensor-datetime", lambda net, keep: ms.Tensor(datetime.datetime(2024, 1, 1)), TypeError,
     r"cannot convert the data \(datetime"),
    ("tensor-datetime64", lambda net, keep: ms.Tensor(np.array(["2024-01-01"], "datetime64[D]")), TypeError,
     r"dtype datetime64\[D\], which is not numeric"),
    ("tensor-dict", lambda net, keep: ms.Tensor({"a": 1}), TypeError, r"cannot convert the data \(dict"),
    ("tensor-none-element", lambda net, keep: ms.Tensor([1.0, None]), TypeError,
     r"cannot convert element \[1\] \(NoneType None\)"),
    ("tensor-ragged", lambda net, keep: ms.Tensor([[1, 2], [3]]), ValueError,
     r"nested list is ragged: element \[0\] has shape \(2,\) but element \[1\] has shape \(1,\)"),
    ("tensor-ragged-deep", lambda net, keep: ms.Tensor([[[1], [2]], [[3], [4, 5]]]), ValueError,
     r"ragged: element \[1\]\[0\] has shape \(1,\) but element \[1\]\[1\] has shape \(2,\)"),
    ("tensor-none", lambda net, keep: ms.Tensor(None), TypeError, r"Tensor\(\) needs input_data"),
    ("tensor-init-no-shape", lambda net, keep: ms.Tensor(init="ones"), ValueError, r"Tensor: init, dtype and shape must all be given"),
    ("tensor-int-overflow", lambda net, keep: ms.Tensor([2 ** 40], ms.int32), OverflowError,
     r"Python int 1099511627776 does not fit Int32"),
    ("dtype-unknown", lambda net, keep: ms.dtype.get_dtype("nope"), TypeError, r"'nope' is not a dtype cellkit knows"),

    # ----- Parameter construction --------------------------------------------------------------
    ("param-none", lambda net, keep: ms.Parameter(None, name="p"), TypeError,
     r"Parameter 'p': default_input must be a Tensor, .* got None"),
    ("param-bool", lambda net, keep: ms.Parameter(True, name="p"), TypeError, r"Parameter 'p': default_input"),
    ("param-str", lambda net, keep: ms.Parameter("abc", name="p"), TypeError,
     r"Parameter 'p': cannot convert the data \(str 'abc'\)"),
    ("param-ragged", lambda net, keep: ms.Parameter([[1., 2.], [3.]], name="p"), ValueError,
     r"Parameter 'p': the nested list is ragged"),
    ("param-object-array", lambda net, keep: ms.Parameter(np.array([None]), name="p"), TypeError,
     r"Parameter 'p': the data is a NumPy array of dtype object"),
    ("param-requires-grad-str", lambda net, keep: ms.Parameter(ms.Tensor(1.), name="p", requires_grad="False"),
     TypeError, r"Parameter 'p': requires_grad must be a bool \(True or False\), got str 'False'"),
    ("param-name-empty", lambda net, keep: ms.Parameter(ms.Tensor(1.), name=""), ValueError,
     r"a Parameter's name must be a non-empty string, got ''"),
    ("param-unknown-initializer", lambda net, keep: ms.Parameter(initializer("xavier_unifrom", (2, 2)), name="p"),
     ValueError, r"unknown initializer 'xavier_unifrom'; did you mean 'xavier_uniform'"),
    ("parameter-tuple-element", lambda net, keep: ms.ParameterTuple((net.scale, 3)), TypeError,
     r"ParameterTuple: element 1 is a int, expected a Parameter"),
    ("parameter-tuple-clone-prefix", lambda net, keep: ms.ParameterTuple((net.scale,)).clone(""), ValueError,
     r"ParameterTuple.clone: prefix must be a non-empty string"),

    # ----- Parameter writes ---------------------------------------------------------------------
    ("set-data-shape", lambda net, keep: net.scale.set_data(ms.Tensor([1., 2., 3.])), ValueError,
     r"Parameter 'scale': set_data got shape \(3,\) but the Parameter has shape \(2,\); pass slice_shape=True"),
    ("set-data-lossy-dtype", lambda net, keep: net.count.set_data(ms.Tensor([1.5, 2.5])), TypeError,
     r"Parameter 'count': set_data got dtype Float32 but the Parameter has dtype Int32; .*ops.cast"),
    ("set-data-overflow", lambda net, keep: net.count.set_data([2 ** 40, 0]), OverflowError,
     r"Parameter 'count': set_data: Python int 1099511627776 does not fit Int32"),
    ("set-data-str", lambda net, keep: net.scale.set_data("1.5"), TypeError,
     r"Parameter 'scale': set_data: cannot convert the data \(str"),
    ("set-data-ragged", lambda net, keep: net.scale.set_data([[1.], [2., 3.]]), ValueError,
     r"Parameter 'scale': set_data: the nested list is ragged"),
    ("set-data-none", lambda net, keep: net.scale.set_data(None), TypeError,
     r"Parameter 'scale': set_data: cannot convert the data \(NoneType"),
    ("assign-shape", lambda net, keep: ops.assign(net.scale, ms.Tensor([1., 2., 3.])), ValueError,
     r"Parameter 'scale': assign got shape \(3,\)"),
    ("assign-lossy-dtype", lambda net, keep: ops.assign(net.count, ms.Tensor([0.5, 1.5])), TypeError,
     r"Parameter 'count'.*Float32.*Int32"),
    ("assign-python-float-into-int", lambda net, keep: ops.assign(net.count, 1.5), TypeError,
     r"Parameter 'count'.*float"),
    ("assign-not-a-parameter", lambda net, keep: ops.assign(ms.Tensor([1.]), ms.Tensor([2.])), TypeError,
     r"assign: variable must be a Parameter, got ArrayImpl"),
    ("assign-value-shape", lambda net, keep: net.scale.assign_value(ms.Tensor(np.ones((2, 2)))), ValueError,
     r"Parameter 'scale': assign got shape \(2, 2\)"),
    ("setitem-out-of-range", set_item(5, 1.), IndexError,
     r"Parameter 'scale': index 5 \(position 0\) is out of range for axis 0 of size 2 \(shape \(2,\)\)"),
    ("setitem-negative-out-of-range", set_item(-3, 1.), IndexError, r"Parameter 'scale': index -3 .* valid indices are -2\.\.1"),
    ("setitem-list-out-of-range", set_item([0, 7], 0.), IndexError, r"Parameter 'scale': index 7"),
    ("setitem-array-out-of-range", set_item(np.array([1, -9]), 0.), IndexError, r"Parameter 'scale': index -9"),
    ("setitem-second-axis", lambda net, keep: net.layers[0].weight.__setitem__((0, 3), 1.), IndexError,
     r"Parameter 'layers.0.weight': index 3 \(position 1\) is out of range for axis 1 of size 3 \(shape \(4, 3\)\)"),
    ("setitem-after-ellipsis", lambda net, keep: net.layers[0].weight.__setitem__((Ellipsis, 5), 1.), IndexError,
     r"Parameter 'layers.0.weight': index 5 \(position 1\) is out of range for axis 1"),
    ("setitem-too-many-indices", set_item((0, 0), 1.), IndexError,
     r"Parameter 'scale': too many indices: the Parameter has shape \(2,\) \(1 axes\) but 2 were indexed"),
    ("setitem-lossy-dtype", set_item(0, 1.5, "count"), TypeError,
     r"Parameter 'count': cannot store float(32|64) values into a Int32 Parameter"),
    ("setitem-overflow", set_item(0, 2 ** 40, "count"), OverflowError, r"Parameter 'count'\[\.\.\.\] =: Python int"),
    ("setitem-str", set_item(0, "x"), TypeError, r"Parameter 'scale'\[\.\.\.\] =: cannot convert the data \(str"),
    ("getitem-out-of-range", lambda net, keep: net.scale[2], IndexError, r"Parameter 'scale': index 2"),
    ("requires-grad-not-bool", lambda net, keep: setattr(net.scale, "requires_grad", "no"), TypeError,
     r"Parameter 'scale': requires_grad must be a bool \(True or False\), got str 'no'"),
    ("requires-grad-int", lambda net, keep: setattr(net.scale, "requires_grad", 0), TypeError,
     r"Parameter 'scale': requires_grad must be a bool"),
    ("rename-empty", lambda net, keep: setattr(net.scale, "name", ""), ValueError, r"non-empty string, got ''"),
    ("no-such-attribute", lambda net, keep: net.scale.nope, AttributeError, r"'Parameter' object has no attribute 'nope'"),

    # ----- tracers stored outside cellkit's transforms -------------------------------------------
    ("tracer-set-data-in-jax-jit", lambda net, keep: jax.jit(lambda x: net.scale.set_data(x) and 0)(jnp.ones(2)),
     RuntimeError, r"Parameter 'scale': a traced value was assigned to it outside cellkit's transforms.*"
                   r"Use cellkit.jit.*return the new value"),
    ("tracer-slice-shape-in-jax-jit",
     lambda net, keep: jax.jit(lambda x: net.scale.set_data(x, slice_shape=True) and 0)(jnp.ones(3)),
     RuntimeError, r"Parameter 'scale': a traced value was assigned"),
    ("tracer-setitem-in-jax-grad", lambda net, keep: jax.grad(lambda v: (net.scale.__setitem__(0, v), v)[1])(1.),
     RuntimeError, r"Parameter 'scale': a traced value was assigned"),
    ("tracer-assign-in-jax-vmap", lambda net, keep: jax.vmap(lambda v: (ops.assign(net.scale, v), v)[1])(jnp.ones((3, 2), jnp.float32)),
     RuntimeError, r"Parameter 'scale': a traced value was assigned"),

    # ----- Cell attributes: the slot is checked before anything is renamed -----------------------
    ("cell-parameter-over-subcell", lambda net, keep: setattr(net, "layers", keep(ms.Parameter(ms.Tensor([1.])))),
     KeyError, r"Block: cannot store a Parameter as 'layers': attribute 'layers' already exists and is a "
               r"SequentialCell, not a Parameter"),
    ("cell-subcell-over-parameter", lambda net, keep: setattr(net, "scale", keep(nn.Dense(2, 2))),
     KeyError, r"Block: cannot store a sub-Cell as 'scale': attribute 'scale' already exists and is a Parameter"),
    ("cell-parameter-over-method", lambda net, keep: setattr(net, "construct", keep(ms.Parameter(ms.Tensor([1.])))),
     KeyError, r"Block: cannot store a Parameter as 'construct': 'construct' is a method or property of Block"),
    ("cell-subcell-over-method", lambda net, keep: setattr(net, "set_train", keep(nn.Dense(2, 2))),
     KeyError, r"cannot store a sub-Cell as 'set_train': 'set_train' is a method"),
    ("cell-subcell-over-property", lambda net, keep: setattr(net, "cls_name", keep(nn.Dense(2, 2))),
     KeyError, r"'cls_name' is a method or property"),
    ("cell-subcell-over-flag", lambda net, keep: setattr(net, "training", keep(nn.Dense(2, 2))),
     KeyError, r"attribute 'training' already exists and is a bool, not a sub-Cell"),
    ("cell-reserved-name", lambda net, keep: setattr(net, "_ck_state", keep(ms.Parameter(ms.Tensor([1.])))),
     KeyError, r"names starting with '_ck_' are reserved"),
    ("cell-number-over-parameter", lambda net, keep: setattr(net, "scale", 3), TypeError,
     r"Block: 'scale' is a Parameter; assign a Parameter or a Tensor to it, not a int"),
    ("cell-number-over-subcell", lambda net, keep: setattr(net, "layers", 3), TypeError,
     r"Block: 'layers' is a sub-Cell; assign a Cell to it, not a int"),
    ("cell-duplicate-names-in-tuple",
     lambda net, keep: setattr(net, "extra", ms.ParameterTuple((ms.Parameter(ms.Tensor(1.), name="n"),
                                                                ms.Parameter(ms.Tensor(2.), name="n")))),
     ValueError, r"ParameterTuple: two different Parameters are both named 'n'"),
    ("cell-duplicate-names-in-tree", _dup_names, ValueError,
     r"Block: two different Parameters are both named 'scale' \(one at 'twin'\)"),
    ("insert-param-dotted-name", lambda net, keep: net.insert_param_to_cell("a.b", keep(ms.Parameter(ms.Tensor(1.)))),
     KeyError, r"Block.insert_param_to_cell: param_name 'a.b' must not contain '.'"),
    ("insert-param-empty-name", lambda net, keep: net.insert_param_to_cell("", ms.Parameter(ms.Tensor(1.))),
     KeyError, r"param_name must be a non-empty string"),
    ("insert-param-not-a-parameter", lambda net, keep: net.insert_param_to_cell("t", ms.Tensor([1.])),
     TypeError, r"Block.insert_param_to_cell: 't' must be a Parameter, got ArrayImpl"),
    ("insert-param-over-subcell", lambda net, keep: net.insert_param_to_cell("layers", keep(ms.Parameter(ms.Tensor(1.)))),
     KeyError, r"cannot store a Parameter as 'layers'"),
    ("insert-child-dotted-name", lambda net, keep: net.insert_child_to_cell("a.b", keep(nn.Dense(2, 2))),
     KeyError, r"Block.insert_child_to_cell: child_name must be a non-empty string without '.'"),
    ("insert-child-not-a-cell", lambda net, keep: net.insert_child_to_cell("k", 3),
     TypeError, r"Block.insert_child_to_cell: 'k' must be a Cell, got int"),
    ("insert-child-over-parameter", lambda net, keep: net.insert_child_to_cell("count", keep(nn.Dense(2, 2))),
     KeyError, r"cannot store a sub-Cell as 'count'"),

    # ----- calling a Cell ---------------------------------------------------------------------------
    ("call-too-many-inputs", lambda net, keep: net(X, X), TypeError,
     r"Block was called with 2 positional input\(s\), but its construct\(x\) does not take them: too many"),
    ("call-missing-input", lambda net, keep: net(), TypeError,
     r"Block was called with 0 positional input\(s\).*missing a required argument: 'x'"),
    ("call-unknown-keyword", lambda net, keep: net(X, y=1), TypeError, r"and keywords \['y'\]"),
    ("call-inner-layer-arity", lambda net, keep: net.layers[0](X, X), TypeError,
     r"Dense was called with 2 positional input\(s\)"),
    ("call-wrong-shape", lambda net, keep: net(np.ones((2, 5), np.float32)), ValueError,
     r"Dense: expected an input whose last dimension is 3 \(in_channels\), got shape \(2, 5\)(.|\n)*"
     r"in Cell layers\.0 \(Dense\(input_channels=3, output_channels=4, has_bias=True\)\) of Block$"),
    ("call-wrong-shape-deeper", lambda net, keep: Block((3, 4, 5, 2))(X), ValueError,
     r"last dimension is 5(.|\n)*in Cell layers\.2 \(Dense\(input_channels=5, output_channels=2"),
    ("call-wrong-shape-in-jit", lambda net, keep: ms.jit(lambda x: net(x))(np.ones((2, 5), np.float32)), ValueError,
     r"in Cell layers\.0 \(Dense\(input_channels=3"),
    ("call-wrong-shape-graph-mode", _graph_mode_call, ValueError, r"in Cell layers\.0 \(Dense"),
    ("call-trace-error-under-outer-jit", lambda net, keep: jax.jit(ms.jit(lambda x: Branchy()(x)))(X),
     TypeError, r"Python control flow on a traced value at .*error_cases.py:\d+ \(if .*\).*ops.select"),
    ("call-base-cell", lambda net, keep: nn.Cell()(1), NotImplementedError, r"Cell must define construct\(\)"),
    ("call-container", lambda net, keep: nn.CellList([nn.ReLU()])(X), NotImplementedError,
     r"CellList is not callable; call the Cells it holds"),

    # ----- changing structure inside cellkit.jit ------------------------------------------------------
    ("jit-add-parameter", setattr_in_jit("extra", lambda: ms.Parameter(ms.Tensor([1.]), name="extra")),
     RuntimeError, rf"Block: cannot set attribute 'extra' {TRACED} \(cellkit.jit"),
    ("jit-add-subcell", setattr_in_jit("head", lambda: nn.Dense(2, 2)), RuntimeError,
     rf"Block: cannot set attribute 'head' {TRACED}"),
    ("jit-replace-subcell", setattr_in_jit("layers", lambda: nn.SequentialCell([nn.Dense(3, 2)])), RuntimeError,
     rf"cannot set attribute 'layers' {TRACED}"),
    ("jit-set-plain-attribute", setattr_in_jit("tag", lambda: "x"), RuntimeError, rf"cannot set attribute 'tag' {TRACED}"),
    ("jit-delete-parameter", in_jit(lambda net: delattr(net, "scale")), RuntimeError,
     rf"cannot set attribute 'scale' {TRACED}"),
    ("jit-insert-param", in_jit(lambda net: net.insert_param_to_cell("z", ms.Parameter(ms.Tensor(1.)))),
     RuntimeError, rf"cannot set attribute 'z' {TRACED}"),
    ("jit-insert-child", in_jit(lambda net: net.insert_child_to_cell("z", nn.ReLU())), RuntimeError,
     rf"cannot set attribute 'z' {TRACED}"),
    ("jit-container-append", in_jit(lambda net: net.layers.append(nn.ReLU())), RuntimeError,
     rf"SequentialCell: cannot change the Cells of a SequentialCell {TRACED}"),
    ("jit-container-delete", in_jit(lambda net: net.layers.__delitem__(1)), RuntimeError,
     rf"cannot change the Cells of a SequentialCell {TRACED}"),
    ("jit-set-train", in_jit(lambda net: net.set_train()), RuntimeError, rf"cannot set attribute 'training' {TRACED}"),
    ("jit-rename-parameter", in_jit(lambda net: setattr(net.scale, "name", "renamed")), RuntimeError,
     rf"Parameter 'scale': cannot change its name {TRACED}"),
    ("jit-requires-grad", in_jit(lambda net: setattr(net.scale, "requires_grad", False)), RuntimeError,
     rf"Parameter 'scale': cannot change its requires_grad {TRACED}"),
    ("jit-shape-change", in_jit(lambda net: net.scale.set_data(ms.Tensor([1., 2., 3.]), slice_shape=True)),
     ValueError, rf"Parameter 'scale': its shape cannot change {TRACED}"),
    ("jit-parameters-keep-changing", lambda net, keep: _changing_params()(), RuntimeError,
     r"cellkit.jit\(f\): the set of Parameters the function uses keeps changing"),

    # ----- grad and bprop ---------------------------------------------------------------------------
    ("grad-nothing-to-differentiate", lambda net, keep: ms.grad(lambda x: x, None, None), ValueError,
     r"grad: grad_position and weights cannot both be None"),
    ("grad-weights-not-parameters", lambda net, keep: ms.grad(lambda x: x, 0, 3), TypeError,
     r"grad: weights must be a Parameter, a list/tuple/ParameterTuple of Parameters or None, got int"),
    ("grad-weights-element", lambda net, keep: ms.grad(lambda x: x, 0, [net.scale, 3]), TypeError,
     r"grad: weights\[1\] is a int, expected a Parameter"),
    ("grad-position-type", lambda net, keep: ms.grad(lambda x: x, "0"), TypeError,
     r"grad: grad_position must be an int, a tuple of ints or None, got '0'"),
    ("grad-position-empty", lambda net, keep: ms.grad(lambda x: x, ()), TypeError,
     r"grad: grad_position must be a non-empty tuple of ints"),
    ("grad-position-out-of-range", lambda net, keep: ms.grad(lambda x: net(x).sum(), 3)(X), IndexError,
     r"grad: grad_position 3 is out of range for 1 positional inputs of <lambda>"),
    ("grad-has-aux-not-tuple", lambda net, keep: ms.grad(lambda x: net(x).sum(), 0, has_aux=True)(X), ValueError,
     r"grad\(has_aux=True\): the function must return a tuple \(output, aux, \.\.\.\)"),
    ("bprop-foreign-gradient",
     lambda net, keep: ms.grad(lambda x: _bprop_cell(lambda self, x, out, dout: ((dout,), {net.scale: dout}))(x).sum())(
         jnp.ones(2)), ValueError, r"Custom.bprop returned a gradient for Parameter \(name=scale.*not a Parameter of this Cell"),
    ("bprop-gradient-shape",
     lambda net, keep: ms.grad(lambda x: _bprop_cell(lambda self, x, out, dout: ((dout,), {self.w: jnp.ones(3)}))(x).sum())(
         jnp.ones(2)), ValueError, r"Custom.bprop: gradient for Parameter 'w' has shape \(3,\), expected \(2,\)"),
    ("bprop-assigns-foreign-parameter",
     lambda net, keep: _bprop_cell(lambda self, x, out, dout: (dout,),
                                   lambda self, x: (ops.assign(net.scale, x), x * self.w)[1])(jnp.ones(2, jnp.float32)),
     RuntimeError, r"Custom has a custom bprop and assigned Parameter 'scale', which it does not own"),

    # ----- NaN / inf under the opt-in debug checks ----------------------------------------------------
    ("debug-nans-loss", _debug("debug_nans", lambda out, k: jnp.sqrt(k) * (out ** 2).sum()), FloatingPointError,
     r"(?i)nan"),
    ("debug-infs-loss", _debug("debug_infs", lambda out, k: jnp.log(k) + (out ** 2).sum()), FloatingPointError,
     r"(?i)inf"),

    # ----- initializers, op names, settings ---------------------------------------------------------------
    ("initializer-unknown", lambda net, keep: initializer("nope", (2,)), ValueError,
     r"unknown initializer 'nope'; .*known names: dirac, .*zeros; or pass an Initializer"),
    ("initializer-typo", lambda net, keep: initializer("XavierUnifrom", (2, 2)), ValueError,
     r"did you mean 'xavieruniform'"),
    ("initializer-typo-in-layer", lambda net, keep: nn.Dense(2, 2, weight_init="he_unifrom"), ValueError,
     r"unknown initializer 'he_unifrom'; did you mean 'he_uniform'"),
    ("initializer-bool", lambda net, keep: initializer(True, (2,)), TypeError, r"init must be a str, .* got a bool"),
    ("initializer-no-shape", lambda net, keep: initializer("ones"), ValueError, r"a shape is needed unless init is a tensor"),
    ("initializer-bad-shape", lambda net, keep: initializer("ones", "ab"), TypeError,
     r"shape must be an int or a sequence of ints, got 'ab'"),
    ("initializer-tensor-shape", lambda net, keep: initializer(ms.Tensor([1., 2.]), (3,)), ValueError,
     r"the given tensor has shape \(2,\) but shape \(3,\) was asked for"),
    ("initializer-fans-1d", lambda net, keep: XavierUniform()((3,)), ValueError,
     r"fan in/out need an array of at least 2 dimensions, got shape \(3,\)"),
    ("initializer-he-mode", lambda net, keep: HeUniform(mode="fan")((2, 2)), ValueError, r"mode must be 'fan_in' or 'fan_out'"),
    ("initializer-nonlinearity", lambda net, keep: HeUniform(nonlinearity="swish")((2, 2)), ValueError,
     r"unknown nonlinearity 'swish'"),
    ("initializer-orthogonal-1d", lambda net, keep: Orthogonal()((3,)), ValueError, r"Orthogonal needs at least 2 dimensions"),
    ("initializer-identity-3d", lambda net, keep: Identity()((2, 2, 2)), ValueError, r"Identity needs a 2-D shape"),
    ("initializer-dirac-shape", lambda net, keep: Dirac(groups=2)((3, 1, 3)), ValueError,
     r"Dirac needs a 3-5-D shape whose dim 0 divides by groups=2"),
    ("initializer-variance-scaling", lambda net, keep: VarianceScaling(distribution="cauchy")((2, 2)), ValueError,
     r"VarianceScaling: bad mode 'fan_in' or distribution 'cauchy'"),
    ("initializer-sparse-3d", lambda net, keep: Sparse(0.5)((2, 2, 2)), ValueError, r"Sparse needs a 2-D shape"),
    ("ops-unknown", lambda net, keep: ops.matmull, AttributeError,
     r"cellkit.ops has no op 'matmull'; did you mean 'matmul'"),
    ("ops-unknown-no-match", lambda net, keep: ops.qqqqq, AttributeError, r"no op 'qqqqq'; see docs/ops.md"),
    ("nn-unknown", lambda net, keep: nn.Dens, AttributeError, r"'cellkit.nn' has no attribute 'Dens'; did you mean 'Dense'"),
    ("activation-unknown", lambda net, keep: nn.Dense(2, 2, activation="rleu"), KeyError,
     r"unknown activation 'rleu'; did you mean 'relu'"),
    ("context-mode", lambda net, keep: ms.set_context(mode=5), ValueError, r"mode must be GRAPH_MODE \(0\) or PYNATIVE_MODE"),
    ("context-unknown-key", lambda net, keep: ms.get_context("debug_nan"), ValueError,
     r"unknown key 'debug_nan'; did you mean 'debug_nans'"),
    ("seed-negative", lambda net, keep: ms.set_seed(-1), ValueError, r"set_seed: seed must be a non-negative int, got -1"),
]


F32 = np.ones((2, 3), np.float32)
I32 = np.zeros((2,), np.int32)
MHA = nn.MultiheadAttention(4, 2)
Q = np.ones((3, 2, 4), np.float32)  # (L, N, E)
