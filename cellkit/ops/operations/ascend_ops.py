"""Primitives that exist only as Ascend kernels, with no documented meaning to compute elsewhere: making
one raises ``NotImplementedError`` saying what to use instead (``docs/differences.md`` lists them).

>>> from cellkit.ops import operations as P
>>> P.FusedAdaFactor()
Traceback (most recent call last):
...
NotImplementedError: P.FusedAdaFactor is a fused Ascend kernel (deprecated since MindSpore 2.8); use nn.AdaFactor, which updates the same state
"""

from __future__ import annotations

from ..primitive import install_primitives

__all__ = []

_REFUSED = {
    "ApplyRotaryPosEmb": "is an Ascend kernel whose layout (cos_format) MindSpore does not document; use "
                         "ops.rotary_position_embedding(x, cos, sin, mode) on the query and on the key",
    "MatmulDDS": "is an Ascend block-sparse attention kernel; use ops.matmul with a mask (dense attention) instead",
    "DSDMatmul": "is an Ascend block-sparse attention kernel; use ops.matmul with a mask (dense attention) instead",
    "FusedAdaFactor": "is a fused Ascend kernel (deprecated since MindSpore 2.8); use nn.AdaFactor, which "
                      "updates the same state",
}


def _refuse(name):
    def check(**_):
        raise NotImplementedError(f"P.{name} {_REFUSED[name]}")
    return check


def _never(*args, **kwargs):  # pragma: no cover - construction already refused
    raise NotImplementedError


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "ApplyRotaryPosEmb": (_never, {"cos_format": 0}, _refuse("ApplyRotaryPosEmb")),
    "MatmulDDS": (_never, {"bs": 1, "heads": 1}, _refuse("MatmulDDS")),
    "DSDMatmul": (_never, {}, _refuse("DSDMatmul")),
    "FusedAdaFactor": (_never, {"enable_scale_parameter": False, "enable_first_moment": False,
                                "enable_weight_decay": False}, _refuse("FusedAdaFactor")),
}
install_primitives(globals(), __all__, PRIMITIVES)
