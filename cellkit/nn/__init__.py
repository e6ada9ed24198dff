"""``cellkit.nn``: the Cell base class, layers and containers.

Layers follow MindSpore 2.10's constructors, defaults, Parameter names,
shapes and reprs, so MindSpore code and checkpoints carry over.

>>> from cellkit import nn
>>> nn.SequentialCell([nn.Dense(2, 3), nn.ReLU()])
SequentialCell(
  (0): Dense(input_channels=2, output_channels=3, has_bias=True)
  (1): ReLU()
)
>>> nn.Dens
Traceback (most recent call last):
...
AttributeError: module 'cellkit.nn' has no attribute 'Dens'; did you mean 'Dense'...?
"""

from ..cell import Cell
from . import cell, dynamic_lr, grad, layer, learning_rate_schedule, loss, optim, utils, wrap
from .layer import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .optim import *  # noqa: F401,F403
from .wrap import *  # noqa: F401,F403
from .learning_rate_schedule import *  # noqa: F401,F403
from .dynamic_lr import *  # noqa: F401,F403
from .grad import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403

__all__ = ["Cell", *layer.__all__, *loss.__all__, *optim.__all__, *wrap.__all__,
           *learning_rate_schedule.__all__, *dynamic_lr.__all__, *grad.__all__, *utils.__all__]

def __getattr__(name):
    # MindSpore's nn also exports the metrics (train sits above nn: imported on first use)
    from ..train import metrics
    if name in metrics.__all__:
        return getattr(metrics, name)
    from ..suggest import did_you_mean
    public = [n for n in globals() if not n.startswith("_")]
    raise AttributeError(f"module 'cellkit.nn' has no attribute {name!r}{did_you_mean(name, public)}")
