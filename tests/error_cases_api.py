"""The refusal cases of the layers, containers, losses, optimizers, wrappers, checkpoints and
sharding that the other test files do not reach; see test_errors.py."""


import jax
import jax.numpy as jnp
import numpy as np

import cellkit as ms
from cellkit import nn, ops

from error_cases import F32, I32, MHA, Q

def _cell_dict_update(arg):
    return lambda net, keep: nn.CellDict().update(arg)


def _pad_over_attribute(net, keep):
    d = nn.CellDict()
    d["keys"] = nn.ReLU()  # 'keys' is a method of CellDict


def _optimizer(**kw):
    return lambda net, keep: nn.Momentum(kw.pop("params", net.trainable_params()), kw.pop("learning_rate", 0.1),
                                         kw.pop("momentum", 0.9), **kw)


def _shard_onto_another_mesh(net, keep):
    from jax.sharding import NamedSharding, PartitionSpec
    from cellkit import parallel
    dense = nn.Dense(2, 2)
    dense.weight.sharding = NamedSharding(parallel.make_mesh((1,), ("a",)), PartitionSpec())
    keep(dense).shard(parallel.make_mesh((1,), ("b",)))


def _ckpt(name="net.safetensors"):
    import tempfile
    return f"{tempfile.mkdtemp()}/{name}"


# Layer, container, loss, optimizer, wrapper, checkpoint and sharding checks the other test files do not reach.
CASES = [
    ("save-traced-value", lambda net, keep: jax.jit(lambda x: ms.save_checkpoint([{"name": "x", "data": x}], _ckpt()) or x)(
        jnp.ones(2)), TypeError, r"save_checkpoint: .*is a traced value; save outside traced functions"),
    ("save-unsupported-dtype", lambda net, keep: ms.save_checkpoint({"x": jnp.ones(2, jnp.int4)}, _ckpt()), TypeError,
     r"save_checkpoint: .*has dtype int4, which cellkit cannot store"),
    ("save-append-dict-type", lambda net, keep: ms.save_checkpoint(net, _ckpt(), append_dict=3), TypeError,
     r"save_checkpoint: append_dict must be a dict, got int"),
    ("save-append-dict-overflow", lambda net, keep: ms.save_checkpoint(net, _ckpt(), append_dict={"k": 2 ** 70}), OverflowError,
     r"save_checkpoint: .*does not fit Int64"),
    ("save-file-name-type", lambda net, keep: ms.save_checkpoint(net, 3), TypeError,
     r"save_checkpoint: ckpt_file_name must be a str or path, got int"),
    ("save-choice-func", lambda net, keep: ms.save_checkpoint(net, _ckpt(), choice_func=3), TypeError,
     r"save_checkpoint: choice_func must be callable, got int"),
    ("load-format", lambda net, keep: ms.load_checkpoint(_ckpt(), format="pickle"), ValueError,
     r"load_checkpoint: format must be 'ckpt' or 'safetensors', got 'pickle'"),
    ("load-choice-func", lambda net, keep: ms.load_checkpoint(_ckpt(), choice_func=3), TypeError,
     r"load_checkpoint: choice_func must be callable, got int"),
    ("load-param-remove-redundancy", lambda net, keep: ms.load_param_into_net(net, {}, remove_redundancy=True),
     NotImplementedError, r"load_param_into_net: remove_redundancy=True is not supported"),
    ("shard-onto-another-mesh", _shard_onto_another_mesh, ValueError,
     r"Parameter 'weight': its sharding is a NamedSharding on another mesh; annotate it with a PartitionSpec"),
    ("nn-non-negative-int", lambda net, keep: nn.Conv2d(1, 1, 3, pad_mode="pad", padding=-1), ValueError,
     r"For 'Conv2d', 'padding' must be an int or a tuple of 4 ints|must be a non-negative int"),
    ("nn-check-bool", lambda net, keep: nn.Dense(2, 2, has_bias="yes"), TypeError,
     r"For 'Dense', 'has_bias' must be a bool, but got str 'yes'"),
    ("nn-pair", lambda net, keep: nn.Conv2d(1, 1, (1, 2, 3)), ValueError,
     r"For 'Conv2d', 'kernel_size' must be an int or a tuple of two ints"),
    ("nn-data-format", lambda net, keep: nn.Conv2d(1, 1, 3, data_format="NCWH"), ValueError,
     r"For 'Conv2d', 'data_format' must be one of \['NCHW', 'NHWC'\]"),
    ("conv-padding-type", lambda net, keep: nn.Conv2d(1, 1, 3, pad_mode="pad", padding="1"), TypeError,
     r"For 'Conv2d', the type of 'padding' must be int or tuple\(int\)"),
    ("conv-transpose-output-padding", lambda net, keep: nn.Conv2dTranspose(1, 1, 3, output_padding="1"), TypeError,
     r"For 'Conv2dTranspose', 'output_padding' must be an int or a tuple of 2 ints"),
    ("attention-dropout", lambda net, keep: nn.MultiheadAttention(4, 2, dropout=1.5), ValueError,
     r"For 'MultiheadAttention', 'dropout' must be a float in \[0, 1\]"),
    ("attention-query-rank", lambda net, keep: MHA(np.ones((4,), np.float32), Q, Q), ValueError,
     r"MultiheadAttention: the query should be an unbatched 2-D or a batched 3-D tensor"),
    ("attention-key-rank", lambda net, keep: MHA(Q, Q[0], Q[0]), ValueError,
     r"for a 3-D query, key and value must be 3-D too"),
    ("attention-padding-mask-rank", lambda net, keep: MHA(Q, Q, Q, key_padding_mask=np.zeros((2, 3, 1), bool)),
     ValueError, r"for a 3-D query the key_padding_mask must be 2-D"),
    ("attention-mask-dtype", lambda net, keep: MHA(Q, Q, Q, attn_mask=np.zeros((3, 3), np.int32)), ValueError,
     r"attn_mask only supports float, uint8 and bool types, got int32"),
    ("attention-mask-rank", lambda net, keep: MHA(Q, Q, Q, attn_mask=np.zeros((3,), bool)), ValueError,
     r"the attn_mask must be None, 2-D or 3-D"),
    ("attention-unbatched-mask-heads", lambda net, keep: MHA(Q[:, 0], Q[:, 0], Q[:, 0], attn_mask=np.zeros((5, 3, 3), bool)),
     ValueError, r"MultiheadAttention: the shape of attn_mask must be \(2, 3, 3\)"),
    ("attention-key-value-mismatch", lambda net, keep: MHA(Q, Q, np.ones((4, 2, 4), np.float32)), ValueError,
     r"the sequence length and batch dims of key \(3, 2\) do not match value \(4, 2\)"),
    ("attention-batch-mismatch", lambda net, keep: MHA(Q, np.ones((3, 1, 4), np.float32), np.ones((3, 1, 4), np.float32)),
     ValueError, r"query has batch size 2 but key has 1"),
    ("attention-3d-mask-shape", lambda net, keep: MHA(Q, Q, Q, attn_mask=np.zeros((3, 3, 3), bool)), ValueError,
     r"the shape of the 3-D attn_mask should be \(4, 3, 3\)"),
    ("dropout-p-type", lambda net, keep: nn.Dropout(p="0.5"), TypeError, r"For 'Dropout', the 'p' must be a float or an int"),
    ("container-index-type", lambda net, keep: net.layers.insert("0", nn.ReLU()), TypeError,
     r"For 'SequentialCell', the type of 'index' must be int, but got str"),
    ("container-delitem-type", lambda net, keep: net.layers.__delitem__("0"), TypeError,
     r"For 'SequentialCell', the type of 'index' must be int or slice, but got str"),
    ("sequential-argument", lambda net, keep: nn.SequentialCell(3), TypeError,
     r"For 'SequentialCell', the 'args\[0\]' must be Cell, list or orderedDict, but got int"),
    ("sequential-child-name", lambda net, keep: nn.SequentialCell({"a.b": nn.ReLU()}), KeyError,
     r"a child's name must be a non-empty string without '.', but got 'a.b'"),
    ("cell-list-keywords", lambda net, keep: nn.CellList(cells=[]), TypeError, r"CellList got unexpected keyword arguments \['cells'\]"),
    ("cell-list-arguments", lambda net, keep: nn.CellList([], []), TypeError, r"CellList takes at most one positional argument"),
    ("cell-dict-keywords", lambda net, keep: nn.CellDict(x=1), TypeError, r"CellDict got unexpected keyword arguments \['x'\]"),
    ("cell-dict-arguments", lambda net, keep: nn.CellDict({}, {}), TypeError, r"CellDict takes at most one positional argument"),
    ("cell-dict-empty-key", lambda net, keep: nn.CellDict().__setitem__("", nn.ReLU()), KeyError,
     r"key can not be empty string"),
    ("cell-dict-method-key", _pad_over_attribute, KeyError, r"the key can not be same with the attributes of Cell, but got key keys"),
    ("cell-dict-none", lambda net, keep: nn.CellDict().__setitem__("a", None), TypeError, r"For 'CellDict', cell can not be None"),
    ("cell-dict-not-a-cell", lambda net, keep: nn.CellDict().__setitem__("a", 3), TypeError,
     r"For 'CellDict', the type of cell should be Cell, but got int"),
    ("cell-dict-delete-missing", lambda net, keep: nn.CellDict().__delitem__("a"), KeyError, r"'a'"),
    ("cell-dict-update-element", _cell_dict_update([3]), TypeError, r"CellDict update sequence element #0 should be Iterable"),
    ("cell-dict-update-length", _cell_dict_update([("a", nn.ReLU(), 1)]), ValueError,
     r"CellDict update sequence element #0, length should be 2; but has length 3"),
    ("cell-dict-update-type", _cell_dict_update(3), TypeError, r"CellDict.update\(\) should be called with an iterable"),
    ("embedding-positive", lambda net, keep: nn.Embedding(0, 4), ValueError, r"For 'Embedding', the 'vocab_size' must be a positive int"),
    ("embedding-dtype", lambda net, keep: nn.Embedding(4, 4, dtype=ms.bool_), TypeError, r"For 'Embedding', 'dtype' must be a number type"),
    ("loss-logits-int", lambda net, keep: nn.CrossEntropyLoss()(I32, I32), TypeError,
     r"For 'CrossEntropyLoss', 'logits' must be a float Tensor, but got int32"),
    ("loss-logits-scalar", lambda net, keep: nn.CrossEntropyLoss()(np.float32(1.), I32), ValueError,
     r"'logits' must have at least one dimension \(the classes\)"),
    ("loss-weights-broadcast", lambda net, keep: nn.L1Loss().get_loss(F32, np.ones((4,), np.float32)), ValueError,
     r"For 'L1Loss', the weights of shape \(4,\) do not broadcast to the loss of shape \(2, 3\)"),
    ("loss-real-input", lambda net, keep: nn.MSELoss()(F32.astype(np.complex64), F32), TypeError,
     r"For 'MSELoss', 'logits' must be a real-valued Tensor"),
    ("smooth-l1-beta-type", lambda net, keep: nn.SmoothL1Loss(beta="1"), TypeError, r"For 'SmoothL1Loss', 'beta' must be a float"),
    ("smooth-l1-int-inputs", lambda net, keep: nn.SmoothL1Loss()(I32, I32), TypeError,
     r"For 'SmoothL1Loss', 'logits' and 'labels' must be float Tensors"),
    ("loss-weight-type", lambda net, keep: nn.NLLLoss(weight=[1., 2.]), TypeError, r"For 'NLLLoss', 'weight' must be a Tensor or None, but got list"),
    ("loss-weight-shape", lambda net, keep: nn.NLLLoss(weight=ms.Tensor(np.ones((2, 2)), ms.float32)), TypeError,
     r"'weight' must be a 1-D float Tensor of shape \(C,\), but got shape \(2, 2\)"),
    ("cross-entropy-smoothing-type", lambda net, keep: nn.CrossEntropyLoss(label_smoothing="0.1"), TypeError,
     r"For 'CrossEntropyLoss', 'label_smoothing' must be a float"),
    ("cross-entropy-probability-weight", lambda net, keep: nn.CrossEntropyLoss(weight=ms.Tensor([1., 2.]))(F32, F32),
     ValueError, r"For 'CrossEntropyLoss', 'weight' must have one entry per class \(3\)"),
    ("nll-logits-int", lambda net, keep: nn.NLLLoss()(I32, I32), TypeError, r"For 'NLLLoss', 'logits' must be a float Tensor of log-probabilities"),
    ("nll-logits-scalar", lambda net, keep: nn.NLLLoss()(np.float32(1.), I32), ValueError,
     r"For 'NLLLoss', 'logits' must have at least one dimension"),
    ("bce-weight-type", lambda net, keep: nn.BCEWithLogitsLoss(weight=[1.]), TypeError,
     r"For 'BCEWithLogitsLoss', 'weight' must be a Tensor or None, but got list"),
    ("bce-int-inputs", lambda net, keep: nn.BCEWithLogitsLoss()(I32, I32), TypeError,
     r"For 'BCEWithLogitsLoss', 'logits' and 'labels' must be float Tensors"),
    ("bce-weight-broadcast", lambda net, keep: nn.BCEWithLogitsLoss(weight=ms.Tensor(np.ones((1, 2, 3)), ms.float32))(F32, F32),
     ValueError, r"'weight' and 'pos_weight' must broadcast to the shape of 'logits' \(2, 3\)"),
    ("batchnorm-num-features-type", lambda net, keep: nn.BatchNorm2d(2.0), TypeError, r"For 'BatchNorm2d', 'num_features' must be an int"),
    ("batchnorm-eps", lambda net, keep: nn.BatchNorm2d(2, eps=-1.), ValueError, r"For 'BatchNorm2d', 'eps' must be a non-negative float"),
    ("layernorm-empty", lambda net, keep: nn.LayerNorm(()), ValueError, r"For 'LayerNorm', 'normalized_shape' must have at least one element"),
    ("layernorm-axis-type", lambda net, keep: nn.LayerNorm((3,), begin_norm_axis=1.5), TypeError,
     r"For 'LayerNorm', 'begin_norm_axis' must be an int"),
    ("layernorm-axis-range", lambda net, keep: nn.LayerNorm((3,), begin_norm_axis=5, begin_params_axis=5)(F32), ValueError,
     r"LayerNorm: begin_norm_axis=5 is out of range for an input of rank 2"),
    ("optimizer-check-bool", lambda net, keep: nn.Adam(net.trainable_params(), use_amsgrad=1), TypeError,
     r"For 'Adam', the 'use_amsgrad' must be a bool"),
    ("adam-lazy-and-offload", lambda net, keep: nn.Adam(net.trainable_params(), use_lazy=True, use_offload=True), ValueError,
     r"'use_lazy' and 'use_offload' can not both be True"),
    ("adam-lazy-amsgrad", lambda net, keep: nn.Adam(net.trainable_params(), use_lazy=True, use_amsgrad=True), ValueError,
     r"For lazy Adam and Adam with offload, there is no parameter named 'use_amsgrad'"),
    ("optimizer-weight-decay-type", _optimizer(weight_decay="0.1"), TypeError,
     r"For 'Momentum', the argument 'weight_decay' must be int or float, but got str"),
    ("optimizer-params-type", _optimizer(params=3), TypeError, r"For 'Momentum', 'params' must be a list of Parameters or of group dicts, got int"),
    ("optimizer-order-params-keys", lambda net, keep: nn.Momentum([{"params": net.trainable_params()},
                                                                   {"order_params": net.trainable_params(), "lr": 1.}], 0.1, 0.9),
     ValueError, r"the 'order_params' dict must have no other key"),
    ("optimizer-group-no-params", _optimizer(params=[{"lr": 0.1}]), ValueError, r"For 'Momentum', parameter group 0 has no 'params'"),
    ("optimizer-group-element", _optimizer(params=[{"params": [3]}]), TypeError,
     r"element 0 of group 0's 'params' is a int, expected a Parameter"),
    ("optimizer-lr-empty-list", _optimizer(learning_rate=[]), ValueError, r"For 'Momentum', the learning-rate list must not be empty"),
    ("optimizer-lr-negative-list", _optimizer(learning_rate=[0.1, -0.1]), ValueError, r"learning rates must be >= 0, but got"),
    ("optimizer-get-lr-type", lambda net, keep: nn.Momentum(net.trainable_params(), 0.1, 0.9).get_lr_parameter(3), TypeError,
     r"For 'get_lr_parameter', the 'param' must be 'Parameter' or 'list' type, but got int"),
    ("optimizer-get-lr-unknown", lambda net, keep: nn.Momentum(net.trainable_params(), 0.1, 0.9).get_lr_parameter(
        ms.Parameter(ms.Tensor(1.), name="stranger")), ValueError, r"the parameter stranger is not in the optimizer"),
    ("optimizer-no-update-rule", lambda net, keep: nn.Optimizer(0.1, net.trainable_params())(
        tuple(jnp.zeros(p.shape) for p in net.trainable_params())), NotImplementedError, r"Optimizer must define"),
    ("pooling-kernel", lambda net, keep: nn.MaxPool2d(kernel_size=0), ValueError, r"the 'kernel_size' must be an positive int number or a tuple"),
    ("pooling-kernel-tuple", lambda net, keep: nn.AvgPool2d(kernel_size=(0, 1)), ValueError,
     r"For 'AvgPool2d', the 'kernel_size' must be an positive int number or a tuple, but got \(0, 1\)"),
    ("pooling-kernel-length", lambda net, keep: nn.MaxPool2d(kernel_size=(1, 2, 3)), ValueError,
     r"For MaxPool2d, the length of kernel_size must be equal to 2, but got 3"),
    ("pooling-padding-type", lambda net, keep: nn.MaxPool2d(3, pad_mode="pad", padding="1"), TypeError,
     r"For 'MaxPool2d', 'padding' must be an int or a tuple of ints, but got str"),
    ("pooling-pad-mode-type", lambda net, keep: nn.MaxPool2d(pad_mode=1), TypeError, r"For 'MaxPool2d', 'pad_mode' must be a str, but got int"),
    ("max-pool-bool-input", lambda net, keep: nn.MaxPool2d()(np.ones((1, 1, 2, 2), bool)), TypeError,
     r"max pooling needs a real dtype, got bool"),
    ("max-pool-dilation", lambda net, keep: nn.MaxPool2d(3, pad_mode="pad", dilation=0), ValueError,
     r"For MaxPool2d, the 'dilation' must be a positive int, but got 0"),
    ("max-pool-nhwc-pad", lambda net, keep: nn.MaxPool2d(3, pad_mode="pad", data_format="NHWC"), ValueError,
     r"the 'NHWC' format are not support when 'pad_mode' is 'pad'"),
    ("max-pool-dilation-type", lambda net, keep: nn.MaxPool2d(3, pad_mode="pad", dilation=[1, 1]), ValueError,
     r"the 'dilation' must be an int or a tuple of 1 or 2 ints"),
    ("avg-pool-nhwc-pad", lambda net, keep: nn.AvgPool2d(3, pad_mode="pad", data_format="NHWC"), ValueError,
     r"For 'AvgPool2d', the 'NHWC' format is not supported with pad_mode='pad'"),
    ("adaptive-pool-output-size", lambda net, keep: nn.AdaptiveAvgPool2d((1, 2, 3)), ValueError,
     r"For 'AdaptiveAvgPool2d', 'output_size' must be an int or a tuple of two ints"),
    ("with-loss-cell-loss-fn", lambda net, keep: nn.WithLossCell(net, 3), TypeError, r"WithLossCell: loss_fn must be a Cell or callable, got int"),
    ("train-one-step-network", lambda net, keep: nn.TrainOneStepCell(3, nn.Momentum(net.trainable_params(), 0.1, 0.9)),
     TypeError, r"TrainOneStepCell: network must be a Cell, got int"),
    ("train-one-step-sens", lambda net, keep: nn.TrainOneStepCell(net, nn.Momentum(net.trainable_params(), 0.1, 0.9), sens="1"),
     TypeError, r"TrainOneStepCell: sens must be a number or None, got str"),
    ("train-one-step-return-grad", lambda net, keep: nn.TrainOneStepCell(
        net, nn.Momentum(net.trainable_params(), 0.1, 0.9), return_grad=1), TypeError, r"TrainOneStepCell: return_grad must be a bool"),
    ("dropout-primitive-int-input", lambda net, keep: ops.Dropout(keep_prob=0.5)(I32), TypeError,
     r"Dropout: the input must be a float tensor, got int32"),
]
