"""SequentialCell, CellList, CellDict: MindSpore's naming, list/dict behaviour, pytree behaviour."""

from collections import OrderedDict

import jax
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from nn_helpers import grads_ok, init, rand


def names(cell):
    return [n for n, _ in cell.parameters_and_names()]


def pnames(cell):
    return [p.name for p in cell.get_parameters()]


def dense(i, o, **kw):
    return nn.Dense(i, o, weight_init="ones", bias_init="zeros", **kw)


class Parent(nn.Cell):
    def __init__(self, child):
        super().__init__()
        self.seq = child

    def construct(self, x):
        return self.seq(x)


# ----- SequentialCell ------------------------------------------------------------------------

def test_sequential_forms_names_and_repr():
    seq = nn.SequentialCell([dense(2, 3), nn.ReLU(), dense(3, 1)])
    assert names(seq) == pnames(seq) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert names(nn.SequentialCell(dense(2, 3), nn.ReLU())) == ["0.weight", "0.bias"]
    assert names(nn.SequentialCell(dense(2, 3))) == ["0.weight", "0.bias"]
    od = nn.SequentialCell(OrderedDict([("fc1", dense(2, 3)), ("act", nn.ReLU())]))
    assert names(od) == ["fc1.weight", "fc1.bias"]
    assert repr(seq) == ("SequentialCell(\n  (0): Dense(input_channels=2, output_channels=3, has_bias=True)\n"
                         "  (1): ReLU()\n  (2): Dense(input_channels=3, output_channels=1, has_bias=True)\n)")
    x = ms.Tensor([[1.0, -2.0]])
    np.testing.assert_allclose(seq(x), [[0.0]])            # relu(-1, -1, -1) summed
    np.testing.assert_allclose(seq(ms.Tensor([[1.0, 2.0]])), [[9.0]])
    assert len(seq) == 3 and bool(seq) and not bool(nn.SequentialCell([]))
    assert [type(c).__name__ for c in seq] == ["Dense", "ReLU", "Dense"]
    assert type(seq[-1]).__name__ == "Dense" and seq[1] is list(seq)[1]
    with pytest.raises(TypeError, match="each cell must be subclass of Cell"):
        nn.SequentialCell([dense(2, 2), 3])
    with pytest.raises(IndexError, match=r"range \[-3, 3\), but got 3"):
        seq[3]


def test_sequential_mutation_renames_with_the_parent_prefix():
    net = Parent(nn.SequentialCell([dense(2, 2), nn.ReLU()]))
    assert pnames(net) == ["seq.0.weight", "seq.0.bias"]
    net.seq.append(dense(2, 1))
    assert pnames(net) == ["seq.0.weight", "seq.0.bias", "seq.2.weight", "seq.2.bias"]
    net.seq.insert(0, dense(2, 2, has_bias=False))
    assert pnames(net) == ["seq.0.weight", "seq.1.weight", "seq.1.bias", "seq.3.weight", "seq.3.bias"]
    assert [type(c).__name__ for c in net.seq] == ["Dense", "Dense", "ReLU", "Dense"]
    del net.seq[1]
    assert pnames(net) == ["seq.0.weight", "seq.2.weight", "seq.2.bias"]
    net.seq[1] = dense(2, 2)
    assert pnames(net) == ["seq.0.weight", "seq.1.weight", "seq.1.bias", "seq.2.weight", "seq.2.bias"]
    del net.seq[0:2]
    assert pnames(net) == ["seq.0.weight", "seq.0.bias"] and len(net.seq) == 1
    assert [k for k, _ in net.seq.cells_and_names()] == ["", "0"]
    np.testing.assert_allclose(net(ms.Tensor([[1.0, 2.0]])), [[3.0]])


def test_sequential_slice_shares_cells_and_keeps_their_names():
    net = Parent(nn.SequentialCell([dense(2, 2), nn.ReLU(), dense(2, 1)]))
    tail = net.seq[1:]
    assert isinstance(tail, nn.SequentialCell) and len(tail) == 2 and tail[1] is net.seq[2]
    assert pnames(tail) == ["seq.2.weight", "seq.2.bias"]          # the original's names are untouched
    np.testing.assert_allclose(tail(ms.Tensor([[1.0, -3.0]])), [[1.0]])


def test_sequential_from_ordered_dict_keeps_keys_on_delete():
    od = nn.SequentialCell(OrderedDict([("a", dense(1, 1)), ("b", dense(1, 1)), ("c", dense(1, 1))]))
    del od[0]
    assert names(od) == ["b.weight", "b.bias", "c.weight", "c.bias"]
    od.append(dense(1, 1))
    assert names(od)[-2:] == ["2.weight", "2.bias"]


def test_containers_are_pytrees():
    seq = nn.SequentialCell([dense(2, 3), nn.ReLU(), dense(3, 1)])
    del seq[1]
    x = ms.Tensor([[1.0, 2.0]])
    g = jax.grad(lambda s, x: s(x).sum())(seq, x)
    assert type(g) is nn.SequentialCell and len(g) == 2
    np.testing.assert_allclose(g[1].weight.value, [[3.0, 3.0, 3.0]])
    np.testing.assert_allclose(g[0].weight.value, np.ones((3, 2)) * [[1.0, 2.0]])
    np.testing.assert_allclose(jax.jit(lambda s, x: s(x))(seq, x), seq(x))
    tanh_seq = nn.SequentialCell([nn.Dense(2, 3, weight_init=init(3, 2), bias_init=init(3, seed=1)), nn.Tanh(),
                                  nn.Dense(3, 1, weight_init=init(1, 3, seed=2), bias_init="zeros")])
    grads_ok(lambda s, x: s(x), (tanh_seq, rand(4, 2, seed=3)))


# ----- CellList ------------------------------------------------------------------------------

def test_cell_list():
    cl = nn.CellList([dense(2, 2)])
    cl.append(nn.ReLU())
    cl += [dense(2, 1)]
    assert names(cl) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert repr(cl).startswith("CellList(\n  (0): Dense(")
    cl.insert(-1, dense(2, 2, has_bias=False))
    assert names(cl) == ["0.weight", "0.bias", "2.weight", "3.weight", "3.bias"]
    del cl[::2]
    assert [type(c).__name__ for c in cl] == ["ReLU", "Dense"] and names(cl) == ["1.weight", "1.bias"]
    assert isinstance(cl[0:1], nn.CellList)
    cl[0] = dense(2, 2)
    assert names(cl) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    with pytest.raises(NotImplementedError, match="CellList is not callable"):
        cl(1)
    with pytest.raises(TypeError, match="instance of list"):
        cl.extend(dense(2, 2))
    with pytest.raises(TypeError, match="can not be CellDict"):
        cl.extend([nn.CellDict()])
    with pytest.raises(TypeError, match="'index' must be int or slice"):
        cl["0"]
    plain = nn.CellList([dense(1, 1)], auto_prefix=False)
    assert pnames(plain) == ["weight", "bias"] and names(plain) == ["0.weight", "0.bias"]


class Layers(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([dense(2, 2) for _ in range(2)])

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_cell_list_in_a_parent():
    net = Layers()
    assert pnames(net) == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]
    net.layers.append(dense(2, 1))
    assert pnames(net)[-2:] == ["layers.2.weight", "layers.2.bias"]
    np.testing.assert_allclose(net(ms.Tensor([[1.0, 1.0]])), [[8.0]])      # 2, 4, then 4 + 4


# ----- CellDict ------------------------------------------------------------------------------

def test_cell_dict():
    cd = nn.CellDict({"x": dense(2, 3), "act": nn.ReLU()})
    assert names(cd) == ["x.weight", "x.bias"] and list(cd) == ["x", "act"] and "x" in cd
    assert repr(cd).startswith("CellDict(\n  (x): Dense(")
    cd.update([("y", dense(3, 1))])
    assert cd.keys() == ["x", "act", "y"] and len(cd) == 3
    assert [k for k, _ in cd.items()] == ["x", "act", "y"] and cd.values()[2] is cd["y"]
    cd["x"] = dense(2, 2, has_bias=False)
    assert names(cd) == ["x.weight", "y.weight", "y.bias"]
    assert type(cd.pop("act")).__name__ == "ReLU" and "act" not in cd
    del cd["y"]
    assert cd.keys() == ["x"]
    with pytest.raises(KeyError, match="can not contain"):
        cd["a.b"] = dense(1, 1)
    with pytest.raises(KeyError, match="same with the attributes"):
        cd["training"] = dense(1, 1)
    with pytest.raises(TypeError, match="can not be CellDict, CellList or SequentialCell"):
        cd["s"] = nn.SequentialCell([])
    with pytest.raises(TypeError, match="key should be string"):
        cd[1] = dense(1, 1)
    with pytest.raises(KeyError):
        cd["nope"]
    cd.clear()
    assert len(cd) == 0 and names(cd) == []


def test_cell_dict_in_a_parent():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cd = nn.CellDict(OrderedDict([("fc", dense(2, 1))]))

        def construct(self, x):
            return self.cd["fc"](x)
    net = Net()
    assert pnames(net) == ["cd.fc.weight", "cd.fc.bias"]
    net.cd["head"] = dense(1, 1)
    assert pnames(net)[-2:] == ["cd.head.weight", "cd.head.bias"]
