"""``mindspore.train.SummaryRecord``: a placeholder so that code importing it loads.

MindSpore's summary files (its MindInsight event format) have no writer in cellkit yet;
constructing a :class:`SummaryRecord` raises ``NotImplementedError`` saying so. Code that
only imports the name (as mindcv's callbacks do) runs.

>>> from cellkit.train import SummaryRecord
>>> SummaryRecord("./summary")
Traceback (most recent call last):
...
NotImplementedError: mindspore.train.SummaryRecord: cellkit does not write MindSpore summary files yet; log scalars with a Callback (e.g. to TensorBoard through tensorboardX) instead
"""

__all__ = ["SummaryRecord"]


class SummaryRecord:
    """Placeholder for MindSpore's summary writer; see the module docstring."""

    def __init__(self, log_dir, *args, **kwargs):
        raise NotImplementedError(
            "mindspore.train.SummaryRecord: cellkit does not write MindSpore summary files yet; "
            "log scalars with a Callback (e.g. to TensorBoard through tensorboardX) instead")
