"""``nn.utils`` (MindSpore's ``mindspore/nn/utils``): ``no_init_parameters``.

>>> import cellkit as ms
>>> from cellkit import nn
>>> with nn.no_init_parameters():
...     net = nn.Dense(3, 4)
>>> net.weight.has_init
True
"""

from __future__ import annotations

from contextlib import contextmanager

from ..parameter import Parameter

__all__ = ["no_init_parameters"]


@contextmanager
def no_init_parameters():
    """Build Cells without making their Parameters' initial values (MindSpore 2.10's ``nn.utils.no_init_parameters``).

    MindSpore marks the Parameters made inside the block ``init_param=False``, so that loading a
    checkpoint gives them their values without the random initialisation running first. In
    cellkit every Parameter made from an ``initializer`` (as the layers' defaults are) is already
    deferred: it holds its Initializer (``has_init`` is True) until it is first read, and
    ``load_checkpoint``/``load_param_into_net``/``set_data`` replace it without making the
    initial value. The block sets ``Parameter.init_param`` to False while it runs, as
    MindSpore's, and otherwise changes nothing; a Parameter made from a Tensor holds that
    value, in MindSpore too.

    >>> import cellkit as ms
    >>> from cellkit import nn
    >>> with nn.no_init_parameters():
    ...     net = nn.Conv2d(1, 2, 3)
    >>> net.weight.has_init, net.weight.shape
    (True, (2, 1, 3, 3))
    """
    previous = getattr(Parameter, "init_param", True)
    Parameter.init_param = False
    try:
        yield
    finally:
        Parameter.init_param = previous
