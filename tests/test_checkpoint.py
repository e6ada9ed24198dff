import io
import json
import os
import struct

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import safetensors
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file as st_load_file
from safetensors.numpy import save_file as st_save_file

import cellkit as ms
from cellkit import checkpoint as ck
from cellkit import nn
from cellkit.checkpoint import CheckpointError
from conftest import x64
from checkpoint_cases import REPO_FIXTURES, SHARED_FIXTURES, LENET_DIRS, FORMATS, NARROW, loaded_dtype, Net, NET_NAMES, snapshot, assert_same, save_reference

# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("fmt", FORMATS)
def test_cell_round_trip_names_values_dtypes(tmp_path, fmt):
    a, path = save_reference(tmp_path, fmt)
    a.block.steps.set_data(ms.Tensor(np.array(9, np.int32)))
    ms.save_checkpoint(a, str(path), format=fmt)
    params = ms.load_checkpoint(str(path))
    assert list(params) == NET_NAMES
    assert params["block.scale"].dtype == ms.bfloat16
    assert params["block.steps"].dtype == ms.int32 and int(params["block.steps"]) == 9
    for name, p in params.items():
        assert p.name == name
    # requires_grad survives in cellkit's format; MindSpore's .ckpt has no place for it
    assert params["block.steps"].requires_grad is (fmt == "ckpt")
    assert params["fc.weight"].requires_grad is True

    ms.set_seed(2)
    b = Net()
    b.block.steps.requires_grad = True  # load_param_into_net keeps the net's flags
    assert not np.array_equal(b.fc.weight.asnumpy(), a.fc.weight.asnumpy())
    assert ms.load_param_into_net(b, params) == ([], [])
    for name, pa in a.parameters_dict().items():
        pb = b.parameters_dict()[name]
        np.testing.assert_array_equal(pb.asnumpy(), pa.asnumpy())
        assert pb.dtype == pa.dtype
    assert b.block.steps.requires_grad is True
    x = jnp.ones((1, 1, 4, 4), jnp.float32)
    np.testing.assert_array_equal(np.asarray(b(x)), np.asarray(a(x)))


def test_load_checkpoint_with_net_loads_it(tmp_path):
    a, path = save_reference(tmp_path)
    ms.set_seed(5)
    b = Net()
    params = ms.load_checkpoint(path, net=b)
    assert list(params) == NET_NAMES
    assert_same(snapshot(b), snapshot(a))


def test_load_into_lazy_parameters_without_initialising_them(tmp_path):
    a, path = save_reference(tmp_path)
    b = Net()
    assert b.fc.weight.has_init
    ms.load_checkpoint(path, net=b)
    assert not b.fc.weight.has_init
    np.testing.assert_array_equal(b.fc.weight.asnumpy(), a.fc.weight.asnumpy())


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
          ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]


def sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -2**31), min(int(info.max), 2**31 - 1)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_dtype_round_trips_bit_exactly(tmp_path, fmt):
    data = {f"t{i}.{np.dtype(d).name}": sample(d, (2, 3), i) for i, d in enumerate(DTYPES)}
    data["scalar"] = np.float32(1.25)
    data["empty"] = np.zeros((0, 4), np.int16)
    data["vector0"] = np.zeros((0,), np.float32)
    data["note"] = "hello, wörld"
    data["gewicht.ü"] = np.ones(2, np.float32)
    path = tmp_path / "all"
    ms.save_checkpoint(data, str(path), format=fmt)
    back = ms.load_checkpoint(str(path) + "." + fmt)
    assert list(back) == list(data)
    assert back["note"] == "hello, wörld"
    for name, want in data.items():
        if isinstance(want, str):
            continue
        want = np.asarray(want).astype(loaded_dtype(want.dtype))
        got = back[name].asnumpy()
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8),
                                      err_msg=name)


def test_bfloat16_and_cellkit_dtypes_from_parameters(tmp_path):
    params = [ms.Parameter(ms.Tensor(np.arange(4) - 1.5, t), name=str(t), requires_grad=i % 2 == 0)
              for i, t in enumerate([ms.bfloat16, ms.float16, ms.float32, ms.int8, ms.uint8, ms.int16,
                                     ms.uint16, ms.int32, ms.uint32, ms.bool_, ms.complex64])]
    ms.save_checkpoint(params, str(tmp_path / "p.safetensors"))
    back = ms.load_checkpoint(str(tmp_path / "p.safetensors"))
    for p in params:
        q = back[p.name]
        assert q.dtype == p.dtype and q.requires_grad == p.requires_grad
        np.testing.assert_array_equal(q.asnumpy(), p.asnumpy())


shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(DTYPES), shapes, st.booleans()), min_size=1, max_size=5),
       st.sampled_from(FORMATS), st.integers(0, 2**16))
def test_round_trip_property(tmp_path_factory, items, fmt, seed):
    d = tmp_path_factory.mktemp("prop")
    data = {}
    for i, (dtype, shape, rg) in enumerate(items):
        data[f"p{i}"] = ms.Parameter(sample(dtype, shape, seed + i), name=f"p{i}", requires_grad=rg) \
            if np.dtype(dtype) not in NARROW or x64() else sample(dtype, shape, seed + i)
    ms.save_checkpoint(data, str(d / "c"), format=fmt)
    back = ms.load_checkpoint(str(d / f"c.{fmt}"))
    assert list(back) == list(data)
    for name, want in data.items():
        want_rg = want.requires_grad if isinstance(want, ms.Parameter) and fmt == "safetensors" else True
        want = np.asarray(want)
        want = want.astype(loaded_dtype(want.dtype))
        got = back[name].asnumpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))
        assert back[name].requires_grad is want_rg


def test_a_ckpt_whose_ninth_byte_is_a_brace_is_still_read_as_ckpt(tmp_path):
    # The protobuf framing puts the first name's fifth character at byte 8, where a
    # safetensors header opens with '{'.
    path = str(tmp_path / "c.ckpt")
    ms.save_checkpoint({"abcd{e": ms.Parameter(ms.Tensor([1., 2.]), name="abcd{e")}, path,
                       format="ckpt")
    with open(path, "rb") as f:
        assert f.read(9)[8:9] == b"{"
    np.testing.assert_array_equal(ms.load_checkpoint(path)["abcd{e"].asnumpy(), [1., 2.])


# ----------------------------------------------------------------------------- save forms


def test_save_forms_list_of_parameters_list_of_dicts_and_dict(tmp_path):
    w = ms.Parameter(ms.Tensor([1., 2.]), name="w")
    b = ms.Parameter(ms.Tensor([3.]), name="b", requires_grad=False)
    ms.save_checkpoint([w, b], str(tmp_path / "list.safetensors"))
    ms.save_checkpoint([{"name": "x.w", "data": w}, {"name": "x.t", "data": ms.Tensor([5, 6], ms.int32)}],
                       str(tmp_path / "dicts.safetensors"))
    ms.save_checkpoint({"a": w, "t": ms.Tensor([1, 2], ms.int8), "n": np.arange(3, dtype=np.int16), "s": "txt"},
                       str(tmp_path / "dict.safetensors"))
    got = ms.load_checkpoint(str(tmp_path / "list.safetensors"))
    assert list(got) == ["w", "b"] and got["b"].requires_grad is False
    got = ms.load_checkpoint(str(tmp_path / "dicts.safetensors"))
    assert list(got) == ["x.w", "x.t"] and got["x.w"].name == "x.w"
    assert got["x.t"].dtype == ms.int32 and got["x.t"].asnumpy().tolist() == [5, 6]
    got = ms.load_checkpoint(str(tmp_path / "dict.safetensors"))
    assert list(got) == ["a", "t", "n", "s"] and got["s"] == "txt"
    assert got["n"].dtype == ms.int16
    # what load_checkpoint returns can be saved again
    ms.save_checkpoint(got, str(tmp_path / "again.safetensors"))
    assert list(ms.load_checkpoint(str(tmp_path / "again.safetensors"))) == ["a", "t", "n", "s"]


def test_append_dict_and_choice_func(tmp_path):
    net = Net()
    ms.save_checkpoint(net, str(tmp_path / "c.ckpt"), format="ckpt", choice_func=lambda n: n.startswith("fc."),
                       append_dict={"epoch_num": 3, "lr": 0.1, "tag": "hello", "flag": True})
    got = ms.load_checkpoint(str(tmp_path / "c.ckpt"))
    assert list(got) == ["fc.weight", "fc.bias", "epoch_num", "lr", "tag", "flag"]
    assert str(got["epoch_num"].dtype) == ("Int64" if x64() else "Int32") and int(got["epoch_num"]) == 3
    assert got["lr"].dtype == ms.float32 and got["flag"].dtype == ms.bool_ and got["tag"] == "hello"
    with pytest.raises(ValueError, match="'fc.bias'"):
        ms.save_checkpoint(net, str(tmp_path / "d"), append_dict={"fc.bias": 1})


def test_duplicate_and_bad_entries_are_refused_before_writing(tmp_path):
    one = ms.Parameter(ms.Tensor([1.]), name="same")
    two = ms.Parameter(ms.Tensor([2.]), name="same")
    with pytest.raises(ValueError, match="'same'"):
        ms.save_checkpoint([one, two], str(tmp_path / "x"))
    ms.save_checkpoint([one, one], str(tmp_path / "once"))  # one object listed twice: saved once
    assert list(ms.load_checkpoint(str(tmp_path / "once.safetensors"))) == ["same"]

    class Twins(nn.Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.a, self.b = nn.Dense(1, 1), nn.Dense(1, 1)

    with pytest.raises(ValueError, match="both named 'weight'"):
        ms.save_checkpoint(Twins(), str(tmp_path / "twins"))
    with pytest.raises(TypeError, match=r"save_obj\[1\]"):
        ms.save_checkpoint([one, 3], str(tmp_path / "x"))
    with pytest.raises(TypeError, match="save_obj\\['k'\\]"):
        ms.save_checkpoint({"k": [1, 2]}, str(tmp_path / "x"))
    with pytest.raises(TypeError, match="PRNG keys"):
        ms.save_checkpoint({"k": jax.random.key(0)}, str(tmp_path / "x"))
    with pytest.raises(TypeError, match="non-empty string"):
        ms.save_checkpoint([{"name": "", "data": ms.Tensor([1.])}], str(tmp_path / "x"))
    with pytest.raises(ValueError, match="__metadata__"):
        ms.save_checkpoint({"__metadata__": ms.Tensor([1.])}, str(tmp_path / "x"))
    with pytest.raises(TypeError, match="save_obj must be"):
        ms.save_checkpoint(3, str(tmp_path / "x"))
    with pytest.raises(NotImplementedError, match="encrypted"):
        ms.save_checkpoint([one], str(tmp_path / "x"), enc_key=b"0" * 16)
    with pytest.raises(ValueError, match="format"):
        ms.save_checkpoint([one], str(tmp_path / "x"), format="pickle")
    with pytest.raises(TypeError, match="unexpected keyword"):
        ms.save_checkpoint([one], str(tmp_path / "x"), formatt="ckpt")
    assert sorted(os.listdir(tmp_path)) == ["once.safetensors"]


def test_file_names(tmp_path):
    p = ms.Parameter(ms.Tensor([1.]), name="p")
    ms.save_checkpoint([p], str(tmp_path / "a"))
    ms.save_checkpoint([p], str(tmp_path / "b"), format="ckpt")
    ms.save_checkpoint([p], str(tmp_path / "c.ckpt"))  # kept as given; holds safetensors bytes
    ms.save_checkpoint([p], tmp_path / "d.bin", format="ckpt")
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors", "b.ckpt", "c.ckpt", "d.bin"]
    assert (tmp_path / "c.ckpt").read_bytes()[8:9] == b"{"
    assert (tmp_path / "b.ckpt").read_bytes()[:1] == b"\x0a"
    for name in os.listdir(tmp_path):
        assert list(ms.load_checkpoint(tmp_path / name)) == ["p"]  # format from the bytes
    with pytest.raises(FileNotFoundError, match=r"did you mean '.*a\.safetensors'"):
        ms.load_checkpoint(str(tmp_path / "a"))
    with pytest.raises(IsADirectoryError):
        ms.save_checkpoint([p], str(tmp_path))
    with pytest.raises(FileNotFoundError, match="directory"):
        ms.save_checkpoint([p], str(tmp_path / "missing" / "x"))


def test_overwrites_a_read_only_file_atomically(tmp_path):
    path = tmp_path / "m.safetensors"
    ms.save_checkpoint([ms.Parameter(ms.Tensor([1.]), name="p")], str(path))
    os.chmod(path, 0o400)  # MindSpore leaves its checkpoints read-only
    ms.save_checkpoint([ms.Parameter(ms.Tensor([2.]), name="p")], str(path))
    assert float(ms.load_checkpoint(path)["p"][0]) == 2.0


# ----------------------------------------------------------------------------- filters


def test_prefix_filters_and_choice_func(tmp_path):
    _, path = save_reference(tmp_path)
    load = lambda **kw: list(ms.load_checkpoint(path, **kw))  # noqa: E731
    assert load(specify_prefix="block.") == NET_NAMES[:4]
    assert load(specify_prefix=["fc.", "block.conv."]) == ["block.conv.weight", "block.conv.bias",
                                                            "fc.weight", "fc.bias"]
    assert load(filter_prefix=("block.",)) == ["fc.weight", "fc.bias"]
    assert load(specify_prefix="block.", filter_prefix="block.conv") == ["block.scale", "block.steps"]
    assert load(choice_func=lambda n: n.endswith("bias")) == ["block.conv.bias", "fc.bias"]
    # as in MindSpore, a prefix argument overrides choice_func
    assert load(specify_prefix="fc.", choice_func=lambda n: False) == ["fc.weight", "fc.bias"]
    with pytest.raises(CheckpointError, match="no entries left"):
        load(specify_prefix="nothing")
    with pytest.raises(TypeError):
        load(filter_prefix=3)
    with pytest.raises(ValueError):
        load(specify_prefix=["fc", ""])
    with pytest.raises(ValueError):
        load(filter_prefix=[])


def test_prefix_filters_on_mindspore_ckpt():
    got = ms.load_checkpoint(REPO_FIXTURES / "lenetlike.ckpt", filter_prefix="bn.")
    assert list(got) == ["conv1.weight", "conv1.bias", "fc.weight", "fc.bias"]


# ----------------------------------------------------------------------------- MindSpore's files


@pytest.mark.parametrize("folder", LENET_DIRS)
def test_mindspore_lenetlike_fixtures(folder):
    meta = json.loads((folder / "lenetlike.json").read_text())["params"]
    from_ckpt = ms.load_checkpoint(str(folder / "lenetlike.ckpt"))
    from_st = ms.load_checkpoint(str(folder / "lenetlike.safetensors"))
    assert list(from_ckpt) == list(meta)  # file order
    assert list(from_st) == sorted(meta)  # MindSpore's safetensors order: sorted
    for name, m in meta.items():
        for params in (from_ckpt, from_st):
            p = params[name]
            assert isinstance(p, ms.Parameter) and p.name == name
            assert list(p.shape) == m["shape"] and str(p.dtype) == m["dtype"]
            assert p.requires_grad is True  # MindSpore files do not record it
            assert float(p.asnumpy().astype(np.float64).sum()) == pytest.approx(m["sum"], abs=1e-5)
        np.testing.assert_array_equal(from_ckpt[name].asnumpy(), from_st[name].asnumpy())


def test_shared_and_repo_fixture_copies_are_identical():
    if not (SHARED_FIXTURES / "lenetlike.ckpt").is_file():
        pytest.skip(f"the shared MindSpore fixtures are not at {SHARED_FIXTURES}")
    for name in ("lenetlike.ckpt", "lenetlike.safetensors", "lenetlike.json"):
        assert (SHARED_FIXTURES / name).read_bytes() == (REPO_FIXTURES / name).read_bytes(), name


def test_resaving_mindspore_ckpt_is_byte_identical(tmp_path):
    params = ms.load_checkpoint(REPO_FIXTURES / "lenetlike.ckpt")
    ms.save_checkpoint(list(params.values()), str(tmp_path / "again.ckpt"), format="ckpt")
    assert (tmp_path / "again.ckpt").read_bytes() == (REPO_FIXTURES / "lenetlike.ckpt").read_bytes()


def test_lenetlike_into_a_net_without_batchnorm():
    class ConvFc(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True)
            self.fc = nn.Dense(144, 10)

    net = ConvFc()
    not_loaded = ms.load_param_into_net(net, ms.load_checkpoint(REPO_FIXTURES / "lenetlike.ckpt"))
    assert not_loaded == ([], ["bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta"])
    assert float(net.fc.weight.sum()) == pytest.approx(-0.3125, abs=1e-5)


def test_mindspore_dtype_fixtures():
    meta = json.loads((REPO_FIXTURES / "dtypes.json").read_text())
    from_ckpt = ms.load_checkpoint(REPO_FIXTURES / "dtypes.ckpt", crc_check=True)
    from_st = ms.load_checkpoint(REPO_FIXTURES / "dtypes.safetensors")
    assert list(from_ckpt) == meta["ckpt_order"]
    assert list(from_st) == meta["safetensors_order"]
    for name, m in meta["params"].items():
        for params in (from_ckpt, from_st):
            if name == "empty" and params is from_ckpt:
                assert name not in params  # MindSpore writes no .ckpt record for an empty tensor
                continue
            p = params[name]
            want = np.dtype(ck._BY_MS[m["dtype"]].np)
            assert p.asnumpy().dtype == loaded_dtype(want), name
            assert list(p.shape) == m["shape"], name
            np.testing.assert_array_equal(p.asnumpy().astype(np.float64).ravel(), m["values"], err_msg=name)
    for name, m in meta["append_dict"].items():
        got = from_ckpt[name]
        if isinstance(m, str):
            assert got == m
        else:
            assert got.asnumpy().dtype == loaded_dtype(ck._BY_MS[m["dtype"]].np)
            np.testing.assert_allclose(got.asnumpy().astype(np.float64).ravel(), m["values"])
    crc = ms.load_checkpoint(REPO_FIXTURES / "crc.safetensors", crc_check=True)
    assert list(crc) == ["empty", "p_float32", "scalar"]


@pytest.mark.skipif(not x64(), reason="Int64/Float64 entries narrow to 32 bits while x64 is off")
def test_resaving_mindspore_dtype_ckpt_is_byte_identical(tmp_path):
    params = ms.load_checkpoint(REPO_FIXTURES / "dtypes.ckpt")
    ms.save_checkpoint(params, str(tmp_path / "again.ckpt"), format="ckpt", crc_check=True)
    assert (tmp_path / "again.ckpt").read_bytes() == (REPO_FIXTURES / "dtypes.ckpt").read_bytes()


def test_mindspore_crc_is_verified():
    raw = bytearray((REPO_FIXTURES / "crc.safetensors").read_bytes())
    raw[-3] ^= 0x01
    with pytest.raises(CheckpointError, match="MindSpore's CRC does not match"):
        ms.load_checkpoint(io.BytesIO(bytes(raw)))
    raw = bytearray((REPO_FIXTURES / "dtypes.ckpt").read_bytes())
    raw[100] ^= 0x01
    with pytest.raises(CheckpointError, match="CRC trailer does not match"):
        ms.load_checkpoint(io.BytesIO(bytes(raw)))


def test_crc_check_warns_when_there_is_nothing_to_verify():
    with pytest.warns(UserWarning, match="no CRC trailer"):
        ms.load_checkpoint(REPO_FIXTURES / "lenetlike.ckpt", crc_check=True)
    with pytest.warns(UserWarning, match="no checksum"):
        ms.load_checkpoint(REPO_FIXTURES / "lenetlike.safetensors", crc_check=True)


# ----------------------------------------------------------------------------- interop with the safetensors library


def test_cellkit_files_are_standard_safetensors(tmp_path):
    data = {f"t{i}": sample(d, (3, 2), i) for i, d in enumerate(DTYPES)}
    ms.save_checkpoint(data, str(tmp_path / "all.safetensors"))
    raw = (tmp_path / "all.safetensors").read_bytes()
    parsed = dict(safetensors.deserialize(raw))  # the reference implementation's validation
    assert set(parsed) == set(data)
    assert parsed["t14"]["dtype"] == "F64" and parsed["t14"]["shape"] == [3, 2, 2]  # Complex128 as pairs
    plain = {k: v for k, v in data.items() if v.dtype not in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                                             ml_dtypes.float8_e5m2, np.complex128)}
    ms.save_checkpoint(plain, str(tmp_path / "plain.safetensors"))
    for k, v in st_load_file(str(tmp_path / "plain.safetensors")).items():
        np.testing.assert_array_equal(v, plain[k])
    n = struct.unpack("<Q", raw[:8])[0]
    assert n % 8 == 0
    meta = json.loads(raw[8:8 + n])["__metadata__"]
    assert meta["format"] == "cellkit" and meta["cellkit.version"] == "1"


def test_reads_files_written_by_the_safetensors_library(tmp_path):
    arrays = {"b": np.arange(6, dtype=np.int16).reshape(2, 3), "a": np.ones(4, np.float32)}
    st_save_file(arrays, str(tmp_path / "lib.safetensors"), metadata={"format": "np"})
    got = ms.load_checkpoint(tmp_path / "lib.safetensors")
    assert list(got) == ["a", "b"]
    np.testing.assert_array_equal(got["b"].asnumpy(), arrays["b"])


# ----------------------------------------------------------------------------- load_param_into_net


def dense_dict(**overrides):
    d = {"weight": ms.Parameter(np.arange(6, dtype=np.float32).reshape(2, 3), name="weight"),
         "bias": ms.Parameter(np.ones(2, np.float32), name="bias")}
    d.update(overrides)
    return d


def test_return_values_as_mindspore():
    net = nn.Dense(3, 2)
    with pytest.warns(UserWarning, match=r"\['bias'\]"):
        out = ms.load_param_into_net(net, {"weight": dense_dict()["weight"], "extra.w": ms.Tensor([1.]),
                                           "tag": "a string"})
    assert out == (["bias"], ["extra.w", "tag"])
    assert isinstance(out[0], list) and isinstance(out[1], list)


def test_dtype_conversion_rules():
    net = nn.Dense(3, 2)
    ms.load_param_into_net(net, dense_dict(weight=ms.Parameter(np.full((2, 3), 0.5, np.float16))))
    assert net.weight.dtype == ms.float32 and float(net.weight[0, 0]) == 0.5
    ms.load_param_into_net(net, dense_dict(weight=ms.Tensor(np.full((2, 3), 0.25), ms.bfloat16)))
    assert net.weight.dtype == ms.float32 and float(net.weight[0, 0]) == 0.25
    half = nn.Dense(3, 2, dtype=ms.float16)
    with pytest.raises(RuntimeError, match="'weight'.*overflow.*Float16"):
        ms.load_param_into_net(half, dense_dict(weight=ms.Tensor(np.full((2, 3), 1e6, np.float32))))

    counter = ms.Parameter(ms.Tensor(np.array([1, 2], np.int16)), name="counter")
    holder = nn.Cell()
    holder.counter = counter
    ms.load_param_into_net(holder, {"counter": ms.Tensor(np.array([3, -4], np.int32))})
    assert counter.dtype == ms.int16 and counter.asnumpy().tolist() == [3, -4]
    with pytest.raises(RuntimeError, match="do not fit the net's Int16"):
        ms.load_param_into_net(holder, {"counter": ms.Tensor(np.array([1, 40000], np.int32))})
    with pytest.raises(RuntimeError, match="only float to float and int to int"):
        ms.load_param_into_net(holder, {"counter": ms.Tensor(np.array([1, 2], np.uint8))})
    with pytest.raises(RuntimeError, match="only float to float"):
        ms.load_param_into_net(holder, {"counter": ms.Tensor(np.array([1., 2.], np.float32))})
    assert counter.asnumpy().tolist() == [3, -4]


def test_strict_load():
    net = nn.Dense(3, 2)
    before = snapshot(net)
    with pytest.raises(RuntimeError, match=r"'weight' has dtype Float32 in the net but Float16.*strict_load"):
        ms.load_param_into_net(net, dense_dict(weight=ms.Parameter(np.ones((2, 3), np.float16))), strict_load=True)
    assert_same(snapshot(net), before)
    # a missing Parameter is returned (and warned about), as MindSpore returns it; no prefix fallback
    with pytest.warns(UserWarning, match="bias"):
        assert ms.load_param_into_net(net, {"backbone." + k: v for k, v in dense_dict().items()},
                                      strict_load=True) == (["weight", "bias"], ["backbone.weight", "backbone.bias"])
    assert_same(snapshot(net), before)
    assert ms.load_param_into_net(net, dense_dict(extra=ms.Tensor([1.])), strict_load=True) == ([], ["extra"])
    np.testing.assert_array_equal(net.bias.asnumpy(), [1., 1.])


def test_prefix_fallback_as_mindspore():
    net = nn.Dense(3, 2)
    d = {"backbone.weight": dense_dict()["weight"], "backbone.bias": dense_dict()["bias"], "other": ms.Tensor([1.])}
    assert ms.load_param_into_net(net, d) == ([], ["backbone.weight", "backbone.bias", "other"])
    np.testing.assert_array_equal(net.weight.asnumpy(), d["backbone.weight"].asnumpy())


def test_trailing_unit_dims_are_dropped():
    net = nn.Dense(3, 2)
    ms.load_param_into_net(net, dense_dict(bias=ms.Tensor(np.full((2, 1, 1), 4., np.float32))))
    assert net.bias.shape == (2,) and net.bias.asnumpy().tolist() == [4., 4.]


def test_different_shaped_net_fails_clearly_and_is_untouched(tmp_path):
    a, path = save_reference(tmp_path)
    ms.set_seed(3)
    b = Net(out=5)  # fc is (5, 8): fc.weight and fc.bias do not fit, the block does
    before = snapshot(b)
    with pytest.raises(RuntimeError) as info:
        ms.load_checkpoint(path, net=b)
    msg = str(info.value)
    assert "'fc.weight' has shape (5, 8) in the net but shape (3, 8)" in msg
    assert "'fc.bias' has shape (5,) in the net but shape (3,)" in msg
    assert "nothing was loaded" in msg
    assert_same(snapshot(b), before)
    with pytest.raises(RuntimeError, match="fc.weight"):
        ms.load_param_into_net(b, ms.load_checkpoint(path))
    assert_same(snapshot(b), before)


def test_load_param_into_net_argument_errors():
    net = nn.Dense(3, 2)
    with pytest.raises(TypeError, match="net must be a Cell"):
        ms.load_param_into_net({}, {})
    with pytest.raises(TypeError, match="parameter_dict must be a dict"):
        ms.load_param_into_net(net, [("weight", 1)])
    with pytest.raises(TypeError, match=r"parameter_dict\['weight'\]"):
        ms.load_param_into_net(net, {"weight": [[1, 2, 3]]})
    with pytest.raises(TypeError, match="keys must be str"):
        ms.load_param_into_net(net, {1: ms.Tensor([1.])})


def test_checkpoint_functions_refuse_traced_use(tmp_path):
    net = nn.Dense(3, 2)
    params = dense_dict()

    @ms.jit
    def load():
        ms.load_param_into_net(net, params)
        return net.weight.sum()

    with pytest.raises(RuntimeError, match="outside traced functions"):
        load()

    @ms.jit
    def save():
        ms.save_checkpoint(net, str(tmp_path / "x"))
        return net.weight.sum()

    with pytest.raises(RuntimeError, match="outside traced functions"):
        save()


def test_loading_keeps_a_committed_placement(tmp_path):
    device = jax.devices()[-1]
    net = nn.Dense(3, 2)
    net.weight.set_data(jax.device_put(net.weight.value, device))
    assert net.weight.value.committed
    ms.load_param_into_net(net, dense_dict())
    assert net.weight.value.committed and net.weight.value.devices() == {device}
