"""``cellkit.train.metrics``: MindSpore's evaluation metrics (numpy, on the host).

>>> from cellkit import train
>>> train.names()[:4]
['F1', 'acc', 'accuracy', 'auc']
>>> type(train.get_metric_fn("acc")).__name__
'Accuracy'
"""

from . import (bleu_score, classification, confusion_matrix, curve, metric, occlusion_sensitivity, regression,
               surface_distance)
from .bleu_score import *  # noqa: F401,F403
from .classification import *  # noqa: F401,F403
from .confusion_matrix import *  # noqa: F401,F403
from .curve import *  # noqa: F401,F403
from .metric import Metric, rearrange_inputs
from .occlusion_sensitivity import *  # noqa: F401,F403
from .regression import *  # noqa: F401,F403
from .surface_distance import *  # noqa: F401,F403

__all__ = ["names", "get_metric_fn", "get_metrics", "Metric", "rearrange_inputs", *classification.__all__, *regression.__all__,
           *curve.__all__, *confusion_matrix.__all__, *surface_distance.__all__, *bleu_score.__all__,
           *occlusion_sensitivity.__all__]

__factory__ = {
    "accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall, "F1": F1, "dice": Dice,
    "roc": ROC, "auc": auc, "bleu_score": BleuScore, "cosine_similarity": CosineSimilarity,
    "occlusion_sensitivity": OcclusionSensitivity, "topk": TopKCategoricalAccuracy,
    "hausdorff_distance": HausdorffDistance, "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy, "mae": MAE, "mse": MSE, "loss": Loss,
    "mean_surface_distance": MeanSurfaceDistance, "root_mean_square_distance": RootMeanSquareDistance,
    "perplexity": Perplexity, "confusion_matrix": ConfusionMatrix, "confusion_matrix_metric": ConfusionMatrixMetric,
}


def names():
    """The names :func:`get_metric_fn` knows, sorted."""
    return sorted(__factory__.keys())


def get_metric_fn(name, *args, **kwargs):
    """A metric by name (see :func:`names`), built with ``args``/``kwargs``."""
    if name not in __factory__:
        raise KeyError(f"Unknown Metric:{name}")
    return __factory__[name](*args, **kwargs)


def get_metrics(metrics):
    """Metrics by name (MindSpore 2.10's ``get_metrics``): ``None``, a dict ``name -> Metric`` or a set of names.

    >>> from cellkit import nn
    >>> sorted(nn.get_metrics({'acc', 'mae'}).items())[0][0], type(nn.get_metrics({'acc'})['acc']).__name__
    ('acc', 'Accuracy')
    """
    if metrics is None:
        return metrics
    if isinstance(metrics, dict):
        for name, metric in metrics.items():
            if not isinstance(name, str) or not isinstance(metric, Metric):
                raise TypeError("For 'get_metrics', if 'metrics' is dict, the key in 'metrics' must be string and "
                                f"value in 'metrics' must be Metric, but got key:{type(name)}, value:{type(metric)}.")
        return metrics
    if isinstance(metrics, set):
        return {name: get_metric_fn(name) for name in metrics}
    raise TypeError(f"For 'get_metrics', the argument 'metrics' must be None, dict or set, but got {metrics}")
