"""``cellkit.nn.layer``: MindSpore's layers, one family per module (as ``mindspore.nn.layer``)."""

from . import (activation, attention, basic, basic_ops, channel, combined, container, conv, conv_nd, dense, embedding,
           embedding_lookup, image, image_quality, math_ops, normalization, padding, pooling, pooling_lp, pooling_nd,
           rnn_cells, rnns, timedistributed, transformer)
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .basic import *  # noqa: F401,F403
from .basic_ops import *  # noqa: F401,F403
from .channel import *  # noqa: F401,F403
from .combined import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .conv_nd import *  # noqa: F401,F403
from .dense import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403
from .embedding_lookup import *  # noqa: F401,F403
from .image import *  # noqa: F401,F403
from .image_quality import *  # noqa: F401,F403
from .math_ops import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .pooling_lp import *  # noqa: F401,F403
from .pooling_nd import *  # noqa: F401,F403
from .rnn_cells import *  # noqa: F401,F403
from .rnns import *  # noqa: F401,F403
from .timedistributed import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403

__all__ = [*activation.__all__, *attention.__all__, *basic.__all__, *basic_ops.__all__, *channel.__all__,
           *combined.__all__, *container.__all__, *conv.__all__, *conv_nd.__all__, *dense.__all__, *embedding.__all__,
           *embedding_lookup.__all__, *image.__all__, *image_quality.__all__, *math_ops.__all__,
           *normalization.__all__, *padding.__all__, *pooling.__all__, *pooling_lp.__all__, *pooling_nd.__all__,
           *rnn_cells.__all__, *rnns.__all__, *timedistributed.__all__, *transformer.__all__]
