"""Assignment into Tensors and in-place methods against MindSpore 2.10 (fixture family ``assign``).

The cases are MindSpore code (``tests/fixtures/record/assign_cases.py``) run here unchanged with
``ms`` = cellkit: eagerly through ``rewrite_function`` (PyNative) and under ``cellkit.jit``
(GRAPH_MODE). An in-place method is compared with MindSpore's out-of-place form of it
(``<name>/functional``), or its graph-mode result where that form failed on MindSpore's CPU
kernels; MindSpore 2.10's PyNative in-place kernels on CPU leave the tensor unchanged.
"""

import sys
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit.rewrite import rewrite_function
from ms_fixtures import load

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fixtures" / "record"))
import assign_cases  # noqa: E402

assign_cases.ms = ms
FIX = load("assign")
CASES = {name: (fn, inputs, graph) for name, fn, inputs, graph in assign_cases.CASES}
# NumPy's meaning where MindSpore's CPU kernels recorded neither the in-place nor the out-of-place form.
NUMPY = {
    "m_div_floor": lambda x: np.floor_divide(x, 2.0),
    "m_scatter_add": lambda x, i, s: _np_scatter_add(x, i, s),
}


def _np_scatter_add(x, i, s):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            out[r, i[r, c]] += s[r, c]
    return out


def tensors(inputs):
    return [jnp.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v for v in inputs]


def expected(name):
    for key in (f"{name}/functional", f"{name}/pynative"):
        if key in FIX and "output" in FIX[key]:
            if key.endswith("pynative") and name.startswith("m_"):
                continue  # PyNative in-place kernels on CPU do not write
            return FIX[key]
    if f"{name}/graph" in FIX and "output" in FIX[f"{name}/graph"]:
        return FIX[f"{name}/graph"]
    if name in NUMPY:
        return {"output": NUMPY[name](*CASES[name][1])}
    return FIX[f"{name}/pynative"]


def check(got, want, where):
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, f"{where}: shape {got.shape} != MindSpore's {want.shape}"
    assert got.dtype == jax.dtypes.canonicalize_dtype(want.dtype), f"{where}: {got.dtype} != {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=where)


DETERMINISTIC = [n for n in CASES if n not in assign_cases.RANDOM and n != "aliasing"]


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_eager(name):
    fn, inputs, _ = CASES[name]
    want = expected(name)
    f = rewrite_function(fn)
    if "error" in want:
        with pytest.raises(getattr(__builtins__, want["error"], Exception) if isinstance(__builtins__, dict)
                           else getattr(__import__("builtins"), want["error"])):
            f(*tensors(inputs))
        return
    check(f(*tensors(inputs)), want["output"], f"{name} eager")


@pytest.mark.parametrize("name", [n for n in DETERMINISTIC if CASES[n][2]])
def test_jit(name):
    fn, inputs, _ = CASES[name]
    graph = FIX.get(f"{name}/graph", {})
    want = graph if "output" in graph and not name.startswith("m_") else expected(name)
    check(ms.jit(fn)(*tensors(inputs)), want["output"], f"{name} jit")


@pytest.mark.parametrize("name", sorted(assign_cases.RANDOM))
def test_random_methods(name):
    fn, inputs, _ = CASES[name]
    ms.set_seed(1)
    for f in (rewrite_function(fn), ms.jit(fn)):
        x = tensors(inputs)[0]
        out = f(x)
        assert out.shape == x.shape and out.dtype == x.dtype
        lo, hi = assign_cases.RANDOM[name] or (None, None)
        if lo is not None:
            assert float(out.min()) >= lo
        if hi is not None:
            assert float(out.max()) <= hi
        assert not np.array_equal(np.asarray(out), np.asarray(x))


def test_aliasing_differs_from_mindspore():
    """``y = x; x[0] = 9``: MindSpore's y sees the write (a shared buffer); on cellkit y keeps the old array."""
    fn, inputs, _ = CASES["aliasing"]
    assert FIX["aliasing/pynative"]["output"].tolist() == [9, 2, 3]
    assert rewrite_function(fn)(*tensors(inputs)).tolist() == [1, 2, 3]


def test_mask_values_needs_concrete_mask_under_jit():
    fn, inputs, _ = CASES["mask_values"]
    with pytest.raises(TypeError, match="concrete mask"):
        ms.jit(fn)(*tensors(inputs))


def test_grad_through_assignment():
    _, fn, inputs = assign_cases.GRAD_CASES[0]
    want = FIX["grad_target/pynative"]["output"]
    for g in (ms.grad(fn, grad_position=(0, 1)), ms.jit(ms.grad(fn, grad_position=(0, 1)))):
        dx, dv = g(*tensors(inputs))
        check(dx, want[0], "grad x")
        check(dv, want[1], "grad v")
    check(rewrite_function(fn)(*tensors(inputs)), FIX["grad_target/value"]["output"], "value")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_cells(mode):
    Derivative, Buffer = assign_cases.make_cells()
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    try:
        check(Derivative(2)(jnp.asarray(assign_cases.F23)), FIX[f"cell_derivative/{mode}"]["output"], "Derivative")
        net = Buffer()
        out = net(jnp.asarray(assign_cases.F3))
        graph_out, _, graph_p = FIX["cell_buffer/graph"]["output"]
        buf = FIX[f"cell_buffer/{mode}"]["output"][1]
        # MindSpore's PyNative p.add_ on CPU does not write, so out and p compare with graph mode's
        check(out, graph_out, "Buffer output")
        check(net.p.value, graph_p, "Buffer Parameter")
        check(net.buf, buf, "Buffer attribute")
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("name", [n for n in DETERMINISTIC if n.startswith("m_")])
def test_parameter_in_place(name):
    """The same methods on a Parameter change it in place (and return it), eagerly and under jit."""
    fn, inputs, _ = CASES[name]
    want = expected(name)["output"]
    args = tensors(inputs)
    for run in (fn, ms.jit(fn)):
        p = ms.Parameter(args[0], name="p")
        out = run(p, *args[1:])
        check(p.value, want, f"{name} Parameter")
        if run is fn:
            assert out is p
