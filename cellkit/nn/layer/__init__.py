"""``cellkit.nn.layer``: MindSpore's layers, one family per module (as ``mindspore.nn.layer``)."""

from . import (activation, attention, basic, container, conv, conv_nd, embedding, image, normalization, padding,
               pooling, pooling_nd, rnn_cells, rnns, transformer)
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .basic import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .conv_nd import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403
from .image import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .pooling_nd import *  # noqa: F401,F403
from .rnn_cells import *  # noqa: F401,F403
from .rnns import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403

__all__ = [*activation.__all__, *attention.__all__, *basic.__all__, *container.__all__, *conv.__all__, *conv_nd.__all__,
           *embedding.__all__, *image.__all__, *normalization.__all__, *padding.__all__, *pooling.__all__, *pooling_nd.__all__,
           *rnn_cells.__all__, *rnns.__all__, *transformer.__all__]
