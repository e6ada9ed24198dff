"""``mindspore.nn.cell``: the module MindSpore defines ``Cell`` in (cellkit's is :mod:`cellkit.cell`)."""

from ..cell import Cell

__all__ = ["Cell"]
