"""``cellkit.train.summary``: MindSpore's ``SummaryRecord`` (``from mindspore.train import
SummaryRecord``), writing TensorBoard event files with the ``tensorboardX`` package."""

from . import summary_record
from .summary_record import SummaryRecord

__all__ = ["SummaryRecord", "summary_record"]
