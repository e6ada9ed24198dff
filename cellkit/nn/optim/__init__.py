"""``cellkit.nn.optim``: optimizers as Cells over optax transformations, their state in Parameters.

>>> import cellkit as ms
>>> from cellkit import nn
>>> net = nn.Dense(2, 1)
>>> opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)
>>> type(opt.tx).__name__, [p.name for p in opt.moment1]
('GradientTransformationExtraArgs', ['moment1.weight', 'moment1.bias'])
"""

from .optimizer import Optimizer
from .sgd import SGD
from .momentum import Momentum
from .adam import Adam, AdamW, AdamWeightDecay
from .rmsprop import RMSProp
from .adagrad import Adagrad, ProximalAdagrad, Adadelta, FTRL
from .adamax import AdaMax, LazyAdam, Lamb
from .rprop import Rprop, ASGD
from .adafactor import AdaFactor
from .lars import LARS
from .offload import AdamOffload, AdaSumByGradWrapCell, AdaSumByDeltaWeightWrapCell, thor

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "AdamW", "RMSProp", "Adagrad",
           "ProximalAdagrad", "Adadelta", "FTRL", "AdaMax", "LazyAdam", "Lamb", "Rprop", "ASGD", "AdaFactor", "LARS", "AdamOffload",
           "AdaSumByGradWrapCell", "AdaSumByDeltaWeightWrapCell", "thor"]
