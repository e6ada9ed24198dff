"""``cellkit.train.callback``: MindSpore's training callbacks (``mindspore.train.callback``)."""

from . import (_callback, _checkpoint, _history, _lambda_callback, _loss_monitor, _lr_scheduler_callback, _plateau,
               _progress_bar, _summary_collector, _time_monitor, _unsupported)
from ._callback import Callback, CallbackManager, InternalCallbackParam, RunContext
from ._checkpoint import CheckpointConfig, CheckpointManager, ModelCheckpoint
from ._history import History
from ._lambda_callback import LambdaCallback
from ._loss_monitor import LossMonitor
from ._lr_scheduler_callback import LearningRateScheduler
from ._plateau import EarlyStopping, ReduceLROnPlateau
from ._progress_bar import ProgressBar
from ._summary_collector import SummaryCollector
from ._time_monitor import TimeMonitor
from ._unsupported import (BackupAndRestore, FlopsUtilizationCollector, OnRequestExit, SummaryLandscape,
                           TrainFaultTolerance)

__all__ = ["Callback", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "SummaryCollector", "CheckpointConfig",
           "RunContext", "LearningRateScheduler", "SummaryLandscape", "FlopsUtilizationCollector", "History",
           "LambdaCallback", "ReduceLROnPlateau", "EarlyStopping", "OnRequestExit", "BackupAndRestore",
           "TrainFaultTolerance", "ProgressBar", "InternalCallbackParam", "CallbackManager", "CheckpointManager"]
