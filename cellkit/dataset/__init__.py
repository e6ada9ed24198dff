"""``cellkit.dataset``: MindSpore's data pipeline (``import mindspore.dataset as ds``) on grain.

>>> import numpy as np
>>> import cellkit.dataset as ds
>>> ds.config.set_seed(0)
>>> data = ds.NumpySlicesDataset((np.arange(6, dtype=np.float32), np.arange(6) % 2), column_names=["x", "y"])
>>> data = data.shuffle(4).batch(3, drop_remainder=True)
>>> [b["x"].shape for b in data.create_dict_iterator()]
[(3,), (3,)]
>>> isinstance(data, ds.BatchDataset), isinstance(data, ds.VisionBaseDataset)
(True, True)
"""

from ..startup import collector_paused, defer_submodule

defer_submodule("grain.checkpoint")   # (its Orbax handlers: 95 ms of grain's import, unused here)
with collector_paused():   # (grain's import, about 100,000 objects, without the collections it would trigger)
    from . import config, engine, text, transforms, vision
    from .engine import *  # noqa: F401,F403
    from .engine import zip  # noqa: A004

__all__ = ["config", "text", "transforms", "vision", *engine.__all__]
