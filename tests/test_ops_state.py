"""State ops on Parameters (assign_add, scatter_*, index_add and their Primitives) against MindSpore 2.10
(fixture ``ops_array_state``), eagerly and written back under ``cellkit.jit``."""

import builtins

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P
from ms_fixtures import load
from ops_cases import assert_matches, to_cellkit

CASES = load("ops_array_state")


def _op(case):
    if "ctor" in case:
        return getattr(P, case["op"])(*to_cellkit(case["ctor"]))
    return getattr(ops, case["op"])


def _run(case, jitted):
    init, *args = to_cellkit(case["inputs"])
    kwargs = to_cellkit(case.get("kwargs", {}))
    p = ms.Parameter(init, name="p")
    fn = _op(case)
    if not jitted:
        return p, fn(p, *args, **kwargs)
    arrays = [i for i, a in enumerate(args) if isinstance(a, jax.Array)]

    def call(*xs):  # the arrays are traced inputs; ints (axes) stay Python values
        full = list(args)
        for i, x in zip(arrays, xs):
            full[i] = x
        return fn(p, *full, **kwargs)
    return p, ms.jit(call)(*[args[i] for i in arrays])


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_state_op_matches_mindspore(name, jitted):
    case = CASES[name]
    if "error" in case:
        with pytest.raises(getattr(builtins, case["error"])):
            _run(case, jitted)
        return
    p, out = _run(case, jitted)
    assert_matches({"out": out, "param": p.value}, case["output"], name)


def test_state_ops_refuse_a_tensor_and_lossy_updates():
    with pytest.raises(TypeError, match="must be a Parameter"):
        ops.assign_add(ms.Tensor([1.]), ms.Tensor([1.]))
    with pytest.raises(TypeError, match="scatter_add on Parameter 'w'"):
        ops.scatter_add(ms.Parameter(ms.Tensor([1, 2], ms.int32), name="w"), ms.Tensor([0]), ms.Tensor([1.5]))
    p = ms.Parameter(ms.Tensor([1., 2.]), name="w")
    with pytest.raises(ValueError):
        ops.scatter_update(p, ms.Tensor([0]), ms.Tensor([[1., 2.]]))
    np.testing.assert_array_equal(p.asnumpy(), [1., 2.])  # a refused update leaves the value


def test_counter_in_jit_advances_each_call_and_grads_see_the_update():
    step = ms.Parameter(ms.Tensor(0, ms.int32), name="step")
    w = ms.Parameter(ms.Tensor([1., 2.]), name="w")

    @ms.jit
    def train_step(x):
        ops.assign_add(step, ms.Tensor(1, ms.int32))
        ops.scatter_nd_add(w, ms.Tensor([[0]]), ms.Tensor([1.]))
        return (w * x).sum()

    for expected in (1, 2, 3):
        train_step(ms.Tensor([1., 1.]))
        assert int(step.value) == expected
    np.testing.assert_array_equal(w.asnumpy(), [4., 2.])


def test_zero_clears_a_parameter_in_place_and_in_jit():
    p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
    ms.jit(lambda: ops.zero_(p))()
    np.testing.assert_array_equal(p.asnumpy(), [0., 0.])
    np.testing.assert_array_equal(ops.zero_(ms.Tensor([3, 4])), [0, 0])
