"""Every public member of MindSpore 2.10's Cell, wrapper Cells, Model, callbacks and dataset objects.

``members.json`` (recorded by ``tests/fixtures/record/record_members.py``) lists, per object,
the names ``dir()`` gives under MindSpore. Each object here is built the way the recording built
MindSpore's (one line in :data:`BUILDERS`), and :func:`members_check.check_members` checks that
cellkit's has every name, or that :data:`REFUSED` gives the reason it has not (each refused name
also has a line in docs/differences.md). Objects another test file builds (the optimizers,
Parameter, ParameterTuple and Tensor: ``test_members_optim.py``) are skipped here.
"""

import numpy as np
import pytest

import cellkit as ms
import cellkit.dataset as ds
from cellkit import nn
from members_check import CELL_REFUSED, CELL_SIGNATURES, MEMBERS, check_members


def _net():
    return nn.Dense(3, 2)


def _loss_net():
    return nn.WithLossCell(_net(), nn.MSELoss())


def _momentum(net):
    return nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)


def _train_step():
    loss_net = _loss_net()
    return nn.TrainOneStepCell(loss_net, _momentum(loss_net))


def _loss_scale_step():
    loss_net = _loss_net()
    return nn.TrainOneStepWithLossScaleCell(loss_net, _momentum(loss_net), scale_sense=ms.Tensor(1024.0, ms.float32))


def _forward_value_and_grad():
    dense = _net()
    return nn.ForwardValueAndGrad(nn.WithLossCell(dense, nn.MSELoss()), weights=dense.trainable_params(),
                                  get_by_list=True)


def _model():
    dense = _net()
    return ms.train.Model(dense, nn.MSELoss(), _momentum(dense), metrics={"mae": nn.MAE()})


def _gen():
    for i in range(4):
        yield (np.full((2,), i, np.float32),)


def _slices():
    return ds.NumpySlicesDataset({"x": np.ones((4, 2), np.float32)})


# One line per object of members.json: how the recording built MindSpore's.
BUILDERS = {
    "nn.Cell(nn.Dense)": _net,
    "nn.WithLossCell": _loss_net,
    "nn.WithEvalCell": lambda: nn.WithEvalCell(_net(), nn.MSELoss()),
    "nn.WithGradCell": lambda: nn.WithGradCell(_net(), nn.MSELoss()),
    "nn.TrainOneStepCell": _train_step,
    "nn.TrainOneStepWithLossScaleCell": _loss_scale_step,
    "nn.ForwardValueAndGrad": _forward_value_and_grad,
    "train.Model": _model,
    "train.Callback": lambda: ms.train.Callback(),
    "train.RunContext": lambda: ms.train.RunContext({"epoch_num": 1}),
    "dataset.GeneratorDataset": lambda: ds.GeneratorDataset(_gen, ["x"]),
    "dataset.NumpySlicesDataset": _slices,
    "dataset.BatchDataset": lambda: _slices().batch(2),
    "dataset.MapDataset": lambda: _slices().map(operations=lambda x: x, input_columns=["x"]),
    "dataset.TupleIterator": lambda: _slices().create_tuple_iterator(),
    "dataset.DictIterator": lambda: _slices().create_dict_iterator(),
}

# Per object: {member: why cellkit's object has not got it, or refuses it}.
REFUSED = {key: dict(CELL_REFUSED) for key in BUILDERS if key.startswith("nn.")}
REFUSED["train.Model"] = {
    "infer_train_layout": "auto-parallel strategy search; raises NotImplementedError naming Parameter.sharding",
    "infer_predict_layout": "auto-parallel strategy search; raises NotImplementedError naming Parameter.sharding",
}

_INTERNAL = "MindSpore's C++ pipeline internals (IR tree building and parsing), called by nothing outside it"
DATASET_REFUSED = {
    **{name: _INTERNAL for name in ("create_ir_tree", "parse", "parse_tree", "post_parse", "pre_parse",
                                    "pre_process", "iterator_bootstrap", "copy_batch_size")},
    "prepare_multiprocessing": "starts MindSpore's worker processes; cellkit's map runs on grain's threads",
    "max_rowsize": "the shared-memory row size of MindSpore's worker processes; there are none here",
    "shuffle_flag": "MindSpore's internal shuffle mode code; is_shuffled() answers the question",
    "source_len": "MindSpore's cached source length; get_dataset_size() answers the question",
}
ITERATOR_REFUSED = {
    "ir_tree": "MindSpore's C++ pipeline tree; a cellkit pipeline is the dataset (Iterator.dataset)",
    "offload_model": "MindSpore's map-offload model (host to Ascend); nothing is offloaded here",
    "parallel_convert": "MindSpore's switch for converting rows to Tensors on worker threads",
    "serial_conversion_iteration": "MindSpore's internal row conversion loop",
}
for _key in BUILDERS:
    if _key.startswith("dataset."):
        REFUSED[_key] = {k: v for k, v in (ITERATOR_REFUSED if "Iterator" in _key else DATASET_REFUSED).items()
                         if k in MEMBERS[_key]["members"]}

# Per object: {method: why its parameters differ from MindSpore's}.
SIGNATURES = {key: dict(CELL_SIGNATURES) for key in BUILDERS if key.startswith("nn.")}

# Per object: {attribute: why its value's type differs from MindSpore's} (the attribute types are checked).
_SOURCE_TYPES = {
    "num_samples": "None for all rows (MindSpore: 0)",
    "num_shards": "None when not sharded (MindSpore: 1)",
    "shard_id": "None when not sharded (MindSpore: 0)",
}
TYPES = {key: {} for key in BUILDERS}
TYPES["dataset.GeneratorDataset"] = TYPES["dataset.NumpySlicesDataset"] = _SOURCE_TYPES
TYPES["dataset.BatchDataset"] = {"input_columns": "None when not given (MindSpore: [])",
                                 "output_columns": "None when not given (MindSpore: [])"}
TYPES["dataset.MapDataset"] = {"num_parallel_workers": "1 when not given (MindSpore: None)"}

OTHER_FILE = "built in test_members_optim.py (optimizers, Parameter, ParameterTuple, Tensor)"


@pytest.mark.parametrize("key", sorted(MEMBERS))
def test_every_member_is_there(key):
    if key not in BUILDERS:
        pytest.skip(OTHER_FILE)
    check_members(key, BUILDERS[key](), REFUSED.get(key), SIGNATURES.get(key), TYPES.get(key))


def test_every_refused_cell_member_raises_saying_what_to_use():
    net = _net()
    calls = {"get_func_graph_proto": (), "register_parameter_forward_hook": (print,),
             "register_saved_tensors_hooks": (print, print)}
    for name, reason in CELL_REFUSED.items():
        with pytest.raises(NotImplementedError, match=name):
            getattr(net, name)(*calls[name])
        assert reason


def test_the_check_reports_what_is_missing():
    class Bare:
        pass
    from members_check import missing_members
    problems = missing_members("train.RunContext", Bare())
    assert problems and all("missing" in p for p in problems)
    problems = missing_members("train.RunContext", Bare(), refused={"not_a_member": "a reason long enough"})
    assert any("not_a_member" in p for p in problems)
