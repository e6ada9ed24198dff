"""Other Primitives (MindSpore's ``ops/operations/other_ops.py`` and its debug ops): state updates on
Parameters, data-flow helpers, printing and dumping.

>>> import cellkit as ms
>>> from cellkit.ops import operations as P
>>> p = ms.Parameter(ms.Tensor([1., 2.]), name="p")
>>> P.AssignAdd()(p, ms.Tensor([1., 1.]))
Array([2., 3.], dtype=float32)
"""

from __future__ import annotations

from .. import function as F
from ..function.other_func import Custom, Morph
from ..primitive import install_primitives

__all__ = ["Custom", "Morph"]


def _scatter(op):
    def call(input_x, indices, updates, *, use_locking):
        return op(input_x, indices, updates)
    call.__name__ = op.__name__
    return call


def _index_add(x, indices, y, *, axis, use_lock, check_index_bound):
    return F.index_add(x, indices, y, axis)


def _print(*inputs):
    F.print_(*inputs)


def _tensor_dump(file, x, *, input_output):
    F.tensordump(file, x, input_output)


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Assign": (F.assign, {}),
    "AssignAdd": (F.assign_add, {}),
    "AssignSub": (F.assign_sub, {}),
    "ScatterUpdate": (_scatter(F.scatter_update), {"use_locking": True}),
    "ScatterNdUpdate": (_scatter(F.scatter_nd_update), {"use_locking": True}),
    "ScatterAdd": (_scatter(F.scatter_add), {"use_locking": False}),
    "ScatterSub": (_scatter(F.scatter_sub), {"use_locking": False}),
    "ScatterMul": (_scatter(F.scatter_mul), {"use_locking": False}),
    "ScatterDiv": (_scatter(F.scatter_div), {"use_locking": False}),
    "ScatterMax": (_scatter(F.scatter_max), {"use_locking": False}),
    "ScatterMin": (_scatter(F.scatter_min), {"use_locking": False}),
    "ScatterNdAdd": (_scatter(F.scatter_nd_add), {"use_locking": False}),
    "ScatterNdSub": (_scatter(F.scatter_nd_sub), {"use_locking": False}),
    "ScatterNdMul": (_scatter(F.scatter_nd_mul), {"use_locking": False}),
    "ScatterNdDiv": (_scatter(F.scatter_nd_div), {"use_locking": False}),
    "ScatterNdMax": (_scatter(F.scatter_nd_max), {"use_locking": False}),
    "ScatterNdMin": (_scatter(F.scatter_nd_min), {"use_locking": False}),
    "IndexAdd": (_index_add, {"axis": None, "use_lock": True, "check_index_bound": True}),
    "Depend": (F.depend, {}),
    "Identity": (F.identity, {}),
    "StopGradient": (F.stop_gradient, {}),
    "Print": (_print, {}),
    "TensorDump": (_tensor_dump, {"input_output": "out"}),
    "MoveTo": (F.move_to, {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
