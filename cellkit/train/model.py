"""``Model``: MindSpore's high-level training and evaluation API, each step one compiled call.

``Model(network, loss_fn, optimizer, metrics)`` builds the training network as
MindSpore does (``TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)``,
through :func:`cellkit.amp.build_train_network` for ``amp_level`` and a loss-scale
manager) and runs every step as one :func:`cellkit.jit` call: compiled on the
first step, a cache hit afterwards.

A dataset is anything iterable yielding tuples of arrays (a list of
``(x, y)`` numpy tuples, a generator, a ``cellkit.dataset`` pipeline) or dicts
(their values in order); ``get_dataset_size()`` gives the steps per epoch when
present, else ``len()``, else the first epoch counts them. An object with
``create_tuple_iterator`` is iterated through it, as MindSpore's datasets are.

>>> import numpy as np
>>> import cellkit as ms
>>> from cellkit import nn, train
>>> ms.set_seed(1)
>>> x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
>>> data = [(x[i:i + 8], (x[i:i + 8] @ np.array([[1.0], [2.0], [-1.0]], np.float32))) for i in range(0, 32, 8)]
>>> net = nn.Dense(3, 1)
>>> model = train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1), metrics={"mae"})
>>> model.train(30, data)
>>> bool(model.eval(data)["mae"] < 0.05)
True
"""

from __future__ import annotations

import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ..cell import Cell
from .. import parallel_context
from ..engine import jit
from ..nn.wrap.cell_wrapper import WithLossCell
from ..parameter import Parameter
from . import callback
from .callback import CallbackManager, InternalCallbackParam, ProgressBar, RunContext
from .callback._progress_bar import interactive
from .metrics import Loss, Metric, get_metric_fn, get_metrics

__all__ = ["Model"]

_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")


def _call(network, *args):
    return network(*args)


class _WithEvalCell(Cell):
    """``(loss, outputs, label)`` of ``network(data)`` (MindSpore's ``nn.WithEvalCell``)."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            # MindSpore's mixed_precision_cast: only floating tensors become float32 (labels may be ints).
            label = label.astype(np.float32) if jnp.issubdtype(label.dtype, jnp.floating) else label
            outputs = outputs.astype(np.float32)
        return self._loss_fn(outputs, label), outputs, label


class _Dataset:
    """Steps over a dataset: tuples of arrays per element, the size when it is known."""

    def __init__(self, dataset, what):
        if dataset is None or not (hasattr(dataset, "__iter__") or hasattr(dataset, "create_tuple_iterator")):
            raise TypeError(f"Model: '{what}' must be iterable (a list of (data, label) tuples, a generator or a "
                            f"dataset), but got {type(dataset).__name__}.")
        self.dataset = dataset
        self.what = what
        self.size = self._size()
        self.one_shot = hasattr(dataset, "__next__") and iter(dataset) is dataset
        self.epochs = 0

    def _size(self):
        ds = self.dataset
        if hasattr(ds, "get_dataset_size"):
            return int(ds.get_dataset_size())
        if hasattr(ds, "__len__"):
            return len(ds)
        return None

    def __iter__(self):
        ds = self.dataset
        self.epochs += 1
        if self.one_shot and self.epochs > 1:
            # a generator is consumed by the first epoch: nothing left
            return iter(())
        it = ds.create_tuple_iterator(num_epochs=1) if hasattr(ds, "create_tuple_iterator") else iter(ds)
        return (self._element(e) for e in it)

    @staticmethod
    def _element(e):
        if isinstance(e, tuple):
            return e
        if isinstance(e, list):
            return tuple(e)
        if isinstance(e, dict):
            return tuple(e.values())
        return (e,)

    def reset(self):
        if hasattr(self.dataset, "reset"):
            self.dataset.reset()


class Model:
    """High-level training, evaluation and prediction around a network.

    Args:
        network (Cell): the network (returning the loss itself when ``loss_fn`` is None).
        loss_fn (Cell): the loss; None when ``network`` computes it.
        optimizer (Optimizer): the optimizer; None for evaluation or prediction only.
        metrics (set or dict): metric names (``{"accuracy"}``, see :func:`cellkit.train.names`) or
            ``{name: Metric}`` for :meth:`eval` and :meth:`fit`.
        eval_network (Cell): the evaluation network (default: ``(loss, outputs, label)`` built from
            ``network`` and ``loss_fn``).
        eval_indexes (list): with ``eval_network``, the positions of loss, outputs and label.
        amp_level (str): "O0" (default), "O1", "O2", "O3" or "auto": see :func:`cellkit.amp.build_train_network`.
        boost_level (str): accepted for compatibility; only "O0" (MindSpore's boost algorithms
            are not provided).
        loss_scale_manager: a :class:`FixedLossScaleManager` or :class:`DynamicLossScaleManager`.
        keep_batchnorm_fp32 (bool): keep BatchNorm in float32 under "O2"/"O3" (default by level).
    """

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", boost_level="O0", **kwargs):
        if not isinstance(network, Cell):
            raise TypeError(f"For 'Model', the argument 'network' must be a Cell, but got {type(network).__name__}.")
        for arg in kwargs:
            if arg not in _KWARGS:
                raise ValueError("The argument in 'kwargs' should be 'loss_scale_manager' or 'keep_batchnorm_fp32' or "
                                 f"'boost_config_dict' or 'acc_level', but got '{arg}'.")
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._loss_scale_manager = kwargs.get("loss_scale_manager")
        self._loss_scale_manager_set = "loss_scale_manager" in kwargs
        self._keep_bn_fp32 = kwargs.get("keep_batchnorm_fp32")
        self._amp_level = amp_level
        self._boost_level = kwargs.get("acc_level", boost_level)
        if self._boost_level not in ("O0", "O1", "O2"):
            raise ValueError(f"For 'Model', 'boost_level' must be 'O0', 'O1' or 'O2', but got {self._boost_level!r}.")
        if self._boost_level != "O0":
            warnings.warn("Model: boost_level has no effect in cellkit (MindSpore's boost algorithms are not "
                          "provided); training runs as with 'O0'.", stacklevel=2)
        self._eval_network = eval_network
        self._eval_indexes = None
        self._parallel_mode = parallel_context.get_auto_parallel_context("parallel_mode")
        self._device_number = parallel_context.get_auto_parallel_context("device_num")
        self._metrics = metrics
        if optimizer is None and amp_level != "O0":
            raise ValueError("Auto mixed precision will not work because 'optimizer' is None.Please set "
                             "amp_level='O0' to disable auto mixed precision or set 'optimizer' not be None to use "
                             "auto mixed precision.")
        self._step = jit(_call)
        self._train_network = self._build_train_network()
        self._build_eval_network(metrics, eval_network, eval_indexes)
        self._predict_network = network
        self._current_epoch_num = 0
        self._current_step_num = 0
        self.epoch_iter = 0
        self._backbone_is_train = True
        self.batch_num = -1

    # ----- building ------------------------------------------------------------------

    def _build_train_network(self):
        network = self._network
        if self._loss_scale_manager is not None and self._optimizer is None:
            raise ValueError("The argument 'optimizer' can not be None when set 'loss_scale_manager'.")
        if self._optimizer:
            from ..amp import build_train_network
            config = {}
            if self._loss_scale_manager_set:
                config["loss_scale_manager"] = self._loss_scale_manager
            if self._keep_bn_fp32 is not None:
                config["keep_batchnorm_fp32"] = self._keep_bn_fp32
            return build_train_network(network, self._optimizer, self._loss_fn, level=self._amp_level,
                                       boost_level=self._boost_level, **config)
        if self._loss_fn:
            return WithLossCell(network, self._loss_fn)
        return network

    def _build_eval_network(self, metrics, eval_network, eval_indexes):
        self._metric_fns = get_metrics(metrics)
        if not self._metric_fns:
            return
        if eval_network is not None:
            if eval_indexes is not None and not (isinstance(eval_indexes, list) and len(eval_indexes) == 3):
                raise ValueError("The argument 'eval_indexes' must be a list or None. If 'eval_indexes' is a list, "
                                 f"length of it must be three. But got 'eval_indexes' {eval_indexes}")
            self._eval_network = eval_network
            self._eval_indexes = eval_indexes
            return
        if self._loss_fn is None:
            raise ValueError("If `metrics` is set, `eval_network` must not be None. Do not set `metrics` if you "
                             "don't want an evaluation.\nFor the simple scenarios with one data, one label and one "
                             "logits, `eval_network` is optional, and then you can set `eval_network` or `loss_fn`.")
        self._eval_network = _WithEvalCell(self._network, self._loss_fn, self._amp_level in ("O2", "O3", "auto"))
        self._eval_indexes = [0, 1, 2]

    @property
    def train_network(self):
        """The network one training step calls."""
        return self._train_network

    @property
    def predict_network(self):
        """The network :meth:`predict` calls."""
        return self._predict_network

    @property
    def eval_network(self):
        """The network :meth:`eval` calls."""
        return self._eval_network

    # ----- metrics ------------------------------------------------------------------

    def _clear_metrics(self):
        for metric in self._metric_fns.values():
            metric.clear()

    def _update_metrics(self, outputs):
        if isinstance(outputs, (jax.Array, np.ndarray, Parameter)):
            outputs = (outputs,)
        if not isinstance(outputs, tuple):
            raise ValueError(f"The argument 'outputs' should be tuple, but got {type(outputs)}.")
        if self._eval_indexes is not None and len(outputs) < 3:
            raise ValueError(f"The length of 'outputs' must be >= 3, but got {len(outputs)}")
        for metric in self._metric_fns.values():
            if self._eval_indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[self._eval_indexes[0]])
            else:
                metric.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])

    def _get_metrics(self):
        return {key: value.eval() for key, value in self._metric_fns.items()}

    # ----- loops --------------------------------------------------------------------

    def _check_network_mode(self, network, is_train):
        if self._backbone_is_train != is_train or network.training != is_train:
            network.set_train(is_train)
            self._backbone_is_train = is_train
        return network

    @staticmethod
    def _transform_callbacks(callbacks):
        if callbacks is None:
            return []
        if isinstance(callbacks, list):
            return list(callbacks)
        return [callbacks]

    @staticmethod
    def _check_epochs(epoch, initial_epoch, owner):
        for name, value, low in (("epoch", epoch, 1), ("initial_epoch", initial_epoch, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"For '{owner}', '{name}' must be an int >= {low}, but got {value!r}.")
        if initial_epoch >= epoch:
            raise ValueError(f"For '{owner}', the parameter 'epoch' must bigger than parameter 'initial_epoch', but "
                             f"got the parameter 'epoch' is {epoch}, 'initial_epoch' is {initial_epoch}.")

    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Train ``epoch - initial_epoch`` epochs over ``train_dataset``, calling ``callbacks``.

        ``dataset_sink_mode`` is accepted and runs the same way (every step is one compiled call
        already); ``sink_size`` must be -1 or positive. ``initial_epoch`` resumes numbering after
        a checkpoint: epochs ``initial_epoch + 1 .. epoch`` run.
        """
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch, "Model.train")

    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None, dataset_sink_mode=False,
            valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """:meth:`train`, evaluating on ``valid_dataset`` every ``valid_frequency`` epochs (an int, or
        a list of epoch numbers); the results go to the callbacks as ``cb_params.metrics`` and
        ``cb_params.eval_results`` (with ``eval_loss``)."""
        if not isinstance(valid_frequency, (int, list)) or isinstance(valid_frequency, bool):
            raise TypeError("For 'Model.fit', the type of 'valid_frequency' must be a list or an integer, but got "
                            f"type {type(valid_frequency)}.")
        if valid_dataset is not None and not self._metric_fns:
            raise ValueError("For 'Model.fit', if valid_dataset is not None, the model argument 'metrics' can not be"
                             "None or empty, you should set the argument 'metrics' for model.")
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch, "Model.fit",
                    valid=(valid_dataset, valid_frequency))

    def _train(self, epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch, owner,
               valid=(None, 1)):
        if not isinstance(dataset_sink_mode, bool):
            raise TypeError(f"For '{owner}', 'dataset_sink_mode' must be bool, but got {type(dataset_sink_mode)}.")
        if isinstance(sink_size, bool) or not isinstance(sink_size, int):
            raise TypeError(f"For '{owner}', 'sink_size' must be int, but got {type(sink_size)}.")
        self._check_epochs(epoch, initial_epoch, owner)
        data = _Dataset(train_dataset, "train_dataset")
        if data.size == 0:
            raise ValueError("There is no valid data in dataset, please check dataset file firstly.")
        if sink_size < -1 or sink_size == 0:
            raise ValueError(f"For '{owner}', The argument 'sink_size' must be -1 or positive, but got {sink_size}.")
        cb_params = InternalCallbackParam()
        cb_params.cur_step_num = 0
        cb_params.train_network = self._train_network
        cb_params.epoch_num = epoch - initial_epoch
        cb_params.batch_num = data.size if data.size is not None else sys.maxsize
        self.batch_num = cb_params.batch_num
        cb_params.mode = "train"
        cb_params.loss_fn = self._loss_fn
        cb_params.optimizer = self._optimizer
        cb_params.parallel_mode = self._parallel_mode
        cb_params.device_number = self._device_number
        cb_params.train_dataset = train_dataset
        cb_params.list_callback = self._transform_callbacks(callbacks)
        if interactive() and not any(isinstance(cb, ProgressBar) for cb in cb_params.list_callback):
            cb_params.list_callback.append(ProgressBar())
        cb_params.train_dataset_element = None
        cb_params.network = self._network
        cb_params.last_save_ckpt_step = None
        cb_params.latest_ckpt_file = None
        cb_params.loss_scale_mananger = self._loss_scale_manager
        cb_params.initial_step = None
        with CallbackManager(cb_params.list_callback) as list_callback:
            self._train_process(epoch, data, list_callback, cb_params, initial_epoch, valid)

    def _train_process(self, epoch, data, list_callback, cb_params, initial_epoch, valid):
        cb_params.dataset_sink_mode = False
        run_context = RunContext(cb_params)
        list_callback.on_train_begin(run_context)
        network, step = self._train_network, self._step
        drop_overflow = self._loss_scale_manager is not None and self._loss_scale_manager.get_drop_overflow_update()
        for i in range(initial_epoch, epoch):
            cb_params.cur_epoch_num = i + 1
            self._current_epoch_num = i + 1
            self._current_step_num = 0
            list_callback.on_train_epoch_begin(run_context)
            steps = 0
            for element in data:
                if self._loss_fn and len(element) != 2:
                    raise ValueError("When 'loss_fn' is not None, 'train_dataset' should return two elements, but got "
                                     f"{len(element)}, please check the number of elements returned by "
                                     "'train_dataset'")
                steps += 1
                cb_params.cur_step_num += 1
                self._current_step_num = steps
                cb_params.train_dataset_element = element
                list_callback.on_train_step_begin(run_context)
                self._check_network_mode(network, True)
                # In data-parallel mode the batch is split over the devices (parallel_context).
                outputs = step(network, *parallel_context.shard_batch(*element))
                cb_params.net_outputs = outputs
                if drop_overflow:
                    self._loss_scale_manager.update_loss_scale(bool(np.all(np.asarray(outputs[1]))))
                list_callback.on_train_step_end(run_context)
                if run_context.get_stop_requested():
                    break
            if steps == 0:
                raise ValueError(f"Model: 'train_dataset' gave no data in epoch {i + 1}"
                                 + (" (a generator is used up by the first epoch: pass a list or a re-iterable "
                                    "dataset to train more than one epoch)" if data.one_shot and data.epochs > 1
                                    else ""))
            if cb_params.batch_num == sys.maxsize:
                cb_params.batch_num = self.batch_num = steps
            self._eval_during_train(valid, cb_params, list_callback)
            data.reset()
            list_callback.on_train_epoch_end(run_context)
            cb_params.pop("metrics", None)
            cb_params.pop("eval_results", None)
            if run_context.get_stop_requested():
                break
        list_callback.on_train_end(run_context)

    def _eval_during_train(self, valid, cb_params, list_callback):
        valid_dataset, frequency = valid
        if valid_dataset is None:
            return
        n = cb_params.cur_epoch_num
        if not (n % frequency == 0 if isinstance(frequency, int) else n in frequency):
            return
        saved = {k: cb_params[k] for k in ("cur_step_num", "batch_num", "dataset_sink_mode", "net_outputs")}
        # as MindSpore: of the library's own callbacks only TimeMonitor sees the evaluation
        eval_callbacks = [cb for cb in list_callback._callbacks
                          if type(cb).__name__ not in callback.__all__ or isinstance(cb, callback.TimeMonitor)]
        data = _Dataset(valid_dataset, "valid_dataset")
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = data.size if data.size is not None else sys.maxsize
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        self._clear_metrics()
        with CallbackManager(eval_callbacks) as eval_list:
            self._eval_process(data, eval_list, cb_params, add_eval_loss=True)
        cb_params.mode = "train"
        cb_params.update(saved)

    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        """Evaluate the metrics over ``valid_dataset``: ``{name: value}``."""
        if not isinstance(dataset_sink_mode, bool):
            raise TypeError(f"For 'Model.eval', 'dataset_sink_mode' must be bool, but got {type(dataset_sink_mode)}.")
        if not self._metric_fns:
            raise ValueError("For Model.eval, the model argument 'metrics' can not be None or empty, you should set "
                             "the argument 'metrics' for model.")
        data = _Dataset(valid_dataset, "valid_dataset")
        cb_params = InternalCallbackParam()
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = data.size if data.size is not None else sys.maxsize
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        cb_params.list_callback = self._transform_callbacks(callbacks)
        cb_params.network = self._network
        self._clear_metrics()
        with CallbackManager(cb_params.list_callback) as list_callback:
            return self._eval_process(data, list_callback, cb_params)

    def _eval_process(self, data, list_callback, cb_params, add_eval_loss=False):
        run_context = RunContext(cb_params)
        cb_params.dataset_sink_mode = False
        list_callback.on_eval_begin(run_context)
        list_callback.on_eval_epoch_begin(run_context)
        network, step = self._eval_network, self._step
        eval_loss = None
        for element in data:
            cb_params.cur_step_num += 1
            cb_params.eval_dataset_element = element
            list_callback.on_eval_step_begin(run_context)
            self._check_network_mode(network, False)
            outputs = step(network, *element)
            cb_params.net_outputs = outputs
            list_callback.on_eval_step_end(run_context)
            self._update_metrics(outputs)
            if add_eval_loss:  # as MindSpore: a fresh Loss each step, so 'eval_loss' is the last batch's
                eval_loss = get_metric_fn("loss")
                eval_loss.update(outputs[self._eval_indexes[0]])
            if run_context.get_stop_requested():
                break
        list_callback.on_eval_epoch_end(run_context)
        data.reset()
        metrics = self._get_metrics()
        cb_params.metrics = metrics
        if eval_loss is not None:
            cb_params.eval_results = dict(metrics)
            cb_params.eval_results["eval_loss"] = eval_loss.eval()
        list_callback.on_eval_end(run_context)
        return metrics

    def predict(self, *predict_data, backend=None, config=None):
        """``predict_network(*predict_data)`` in predict mode, compiled."""
        if backend not in (None, "ms"):
            raise ValueError(f"For 'Model.predict', only the default backend exists in cellkit, but got {backend!r}.")
        self._check_network_mode(self._predict_network, False)
        return self._step(self._predict_network, *predict_data)

    # ----- ahead of time -------------------------------------------------------------

    enable_hcce = False  # Ascend's HCCE collective library: off (XLA's collectives run)
    enable_tre = False  # Ascend's training-resilience feature: off

    def build(self, train_dataset=None, valid_dataset=None, sink_size=-1, epoch=1, sink_mode=True):
        """Trace and compile the training step (for ``train_dataset``'s first batch) and the evaluation
        step (for ``valid_dataset``'s) ahead of ``train``/``eval``. Nothing is run or updated."""
        if valid_dataset is not None and not self._metric_fns:
            raise RuntimeError("If define `valid_dataset`, metric fn can not be None or empty, you should set the "
                               "argument 'metrics' for model.")
        for dataset, network, is_train in ((train_dataset, self._train_network, True),
                                           (valid_dataset, self._eval_network, False)):
            if dataset is None:
                continue
            element = next(iter(_Dataset(dataset, "train_dataset" if is_train else "valid_dataset")), None)
            if element is None:
                raise ValueError("Model.build: the dataset gives no batch to compile for")
            self._check_network_mode(network, is_train)
            self._step.lower(network, *element).compile()

    def infer_train_layout(self, train_dataset, dataset_sink_mode=True, sink_size=-1):
        """MindSpore's auto-parallel strategy search: refused (see the message)."""
        raise NotImplementedError(
            "Model.infer_train_layout: cellkit runs no auto-parallel strategy search; each Parameter's layout is "
            "its jax.sharding (Parameter.sharding, set with Cell.shard or cellkit.parallel.shard)")

    def infer_predict_layout(self, *predict_data, skip_backend_compile=False):
        """MindSpore's auto-parallel strategy search for prediction: refused (see the message)."""
        raise NotImplementedError(
            "Model.infer_predict_layout: cellkit runs no auto-parallel strategy search; each Parameter's layout "
            "is its jax.sharding (Parameter.sharding, set with Cell.shard or cellkit.parallel.shard)")
