import errno
import io
import json
import os
import pickle
import struct
import zlib
from pathlib import Path

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
from cellkit.common.initializer import initializer
from conftest import x64

REPO_FIXTURES = Path(__file__).parent / "fixtures" / "mindspore"
SHARED_FIXTURES = Path(os.environ.get(
    "CELLKIT_MINDSPORE_FIXTURES", Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "mindspore"))
LENET_DIRS = [
    pytest.param(REPO_FIXTURES, id="repo-copy"),
    pytest.param(SHARED_FIXTURES, id="shared", marks=pytest.mark.skipif(
        not (SHARED_FIXTURES / "lenetlike.ckpt").is_file(),
        reason=f"the shared MindSpore fixtures are not at {SHARED_FIXTURES} "
               "(set CELLKIT_MINDSPORE_FIXTURES to their folder)")),
]
FORMATS = ["safetensors", "ckpt"]
NARROW = {np.dtype(np.int64): np.int32, np.dtype(np.uint64): np.uint32,
          np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64}


def loaded_dtype(dtype):
    """The dtype a stored dtype comes back as (64-bit types narrow while x64 is off)."""
    dtype = np.dtype(dtype)
    return dtype if x64() else np.dtype(NARROW.get(dtype, dtype))


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=True)
        self.scale = ms.Parameter(initializer("normal", (2,), ms.bfloat16), name="scale")
        self.steps = ms.Parameter(ms.Tensor(np.array(7, np.int32)), name="steps", requires_grad=False)

    def construct(self, x):
        return self.conv(x) * self.scale.value.astype(jnp.float32).reshape(1, 2, 1, 1)


class Net(nn.Cell):
    def __init__(self, out=3):
        super().__init__()
        self.block = Block()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(2 * 2 * 2, out)

    def construct(self, x):
        return self.fc(self.flatten(self.block(x)))


# A Cell's own Parameters come before its sub-Cells' (as in MindSpore).
NET_NAMES = ["block.scale", "block.steps", "block.conv.weight", "block.conv.bias", "fc.weight", "fc.bias"]


def snapshot(net):
    return {name: (p.asnumpy().copy(), p.dtype, p.requires_grad) for name, p in net.parameters_dict().items()}


def assert_same(a, b):
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k][0]), np.asarray(b[k][0]), err_msg=k)
        assert a[k][1:] == b[k][1:], k


def save_reference(tmp_path, fmt="safetensors", name=None):
    ms.set_seed(1)
    net = Net()
    path = tmp_path / (name or f"ref.{fmt}")
    ms.save_checkpoint(net, str(path), format=fmt)
    return net, path


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
    with pytest.raises(RuntimeError, match=r"'bias' is not in parameter_dict \(strict_load=True\)"):
        ms.load_param_into_net(net, {"weight": dense_dict()["weight"]}, strict_load=True)
    # no prefix fallback either
    with pytest.raises(RuntimeError, match="'weight', 'bias' are not in parameter_dict"):
        ms.load_param_into_net(net, {"backbone." + k: v for k, v in dense_dict().items()}, strict_load=True)
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


# ----------------------------------------------------------------------------- atomic writes and faults


class Faults:
    """Make the n-th call of an os function raise (count the calls when n is None)."""

    def __init__(self, monkeypatch, name, n=None, exc=None):
        self.calls, self.n, self.exc = 0, n, exc
        real = getattr(os, name)

        def wrapper(*args, **kwargs):
            self.calls += 1
            if self.n is not None and self.calls == self.n:
                raise self.exc
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, wrapper)


def count_writes(monkeypatch, tmp_path, fmt):
    with monkeypatch.context() as m:
        f = Faults(m, "write")
        save_reference(tmp_path, fmt, name=f"count.{fmt}")
        os.remove(tmp_path / f"count.{fmt}")
    return f.calls


@pytest.mark.parametrize("fmt", FORMATS)
def test_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch, fmt):
    _, path = save_reference(tmp_path, fmt)
    old = path.read_bytes()
    ms.set_seed(9)
    new_net = Net()
    stages = [("open", 1), ("fsync", 1), ("replace", 1), ("lseek", 1)] if fmt == "safetensors" else \
        [("open", 1), ("fsync", 1), ("replace", 1)]
    stages += [("write", n) for n in range(1, count_writes(monkeypatch, tmp_path, fmt) + 1)]
    for name, n in stages:
        for exc in (OSError(errno.EIO, "I/O error"), KeyboardInterrupt()):
            with monkeypatch.context() as m:
                Faults(m, name, n, exc)
                with pytest.raises(type(exc)) as info:
                    ms.save_checkpoint(new_net, str(path), format=fmt)
            if isinstance(exc, OSError):
                assert str(path) in str(info.value) and "unchanged" in str(info.value)
            assert path.read_bytes() == old, (name, n)
            assert os.listdir(tmp_path) == [path.name], (name, n)
    ms.save_checkpoint(new_net, str(path), format=fmt)
    assert path.read_bytes() != old


def test_full_disk_gives_a_clear_error(tmp_path, monkeypatch):
    _, path = save_reference(tmp_path)
    old = path.read_bytes()
    Faults(monkeypatch, "write", 3, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    with pytest.raises(OSError, match="no space left on device") as info:
        ms.save_checkpoint(Net(), str(path))
    assert info.value.errno == errno.ENOSPC and str(path) in str(info.value)
    assert path.read_bytes() == old and os.listdir(tmp_path) == [path.name]


def test_failed_first_save_leaves_nothing(tmp_path, monkeypatch):
    Faults(monkeypatch, "fsync", 1, OSError(errno.EIO, "I/O error"))
    with pytest.raises(OSError):
        ms.save_checkpoint(Net(), str(tmp_path / "new.safetensors"))
    assert os.listdir(tmp_path) == []


def test_write_goes_through_fsync_then_replace(tmp_path, monkeypatch):
    order = []
    for name in ("fsync", "replace"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _r=real, _n=name: (order.append(_n), _r(*a))[1])
    ms.save_checkpoint(Net(), str(tmp_path / "m"))
    assert order[:2] == ["fsync", "replace"]


# ----------------------------------------------------------------------------- corrupt files


def small_file(tmp_path, fmt="safetensors", **kw):
    data = {"w": ms.Parameter(ms.Tensor(np.arange(6.).reshape(2, 3), ms.float32), name="w"),
            "b": ms.Parameter(ms.Tensor([1, 2], ms.int32), name="b", requires_grad=False)}
    path = tmp_path / f"small.{fmt}"
    ms.save_checkpoint(data, str(path), format=fmt, **kw)
    return path, path.read_bytes()


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.ckpt' does not exist"):
        ms.load_checkpoint(str(tmp_path / "nope.ckpt"))
    with pytest.raises(IsADirectoryError, match="is a directory"):
        ms.load_checkpoint(str(tmp_path))
    with pytest.raises(TypeError, match="ckpt_file_name"):
        ms.load_checkpoint(3)


def test_every_truncation_of_a_cellkit_file_is_detected(tmp_path):
    path, raw = small_file(tmp_path)
    for n in range(len(raw)):
        path.write_bytes(raw[:n])
        with pytest.raises(CheckpointError, match=str(path)) as info:
            ms.load_checkpoint(str(path))
        assert n == 0 or "truncated" in str(info.value) or "corrupt" in str(info.value), n


def test_every_truncation_of_a_ckpt_with_crc_is_detected(tmp_path):
    path, raw = small_file(tmp_path, "ckpt", crc_check=True)
    ends = set(record_ends(raw[:-17]))
    for n in range(len(raw)):
        path.write_bytes(raw[:n])
        if n in ends:
            # Cut between records (or just before the trailer) a .ckpt is well-formed:
            # the format cannot tell (MindSpore's CRC trailer is optional).
            assert list(ms.load_checkpoint(str(path))) == ["w", "b"][:sorted(ends).index(n) + 1]
            continue
        with pytest.raises(CheckpointError, match=str(path)):
            ms.load_checkpoint(str(path))


def record_ends(raw):
    """Byte offsets where the top-level records of a .ckpt end."""
    ends, pos = [], 0
    while pos < len(raw):
        n, p = 0, pos + 1
        shift = 0
        while True:
            b = raw[p]
            p += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        pos = p + n
        ends.append(pos)
    return ends


def test_truncated_mindspore_ckpt_is_detected_inside_records(tmp_path):
    raw = (REPO_FIXTURES / "lenetlike.ckpt").read_bytes()
    ends = set(record_ends(raw))
    assert max(ends) == len(raw)
    for n in range(1, len(raw)):
        if n in ends:
            # Without a CRC trailer a .ckpt cut between records is well-formed: nothing to detect.
            assert len(ms.load_checkpoint(io.BytesIO(raw[:n]))) < 8
            continue
        with pytest.raises(CheckpointError, match="truncated"):
            ms.load_checkpoint(io.BytesIO(raw[:n]))


def test_every_flipped_byte_of_a_cellkit_file_is_detected(tmp_path):
    path, raw = small_file(tmp_path)
    for i in range(len(raw)):
        for mask in (0x01, 0xFF):
            bad = bytearray(raw)
            bad[i] ^= mask
            path.write_bytes(bytes(bad))
            with pytest.raises(CheckpointError, match=str(path)):
                ms.load_checkpoint(str(path))


def test_every_flipped_byte_of_a_ckpt_with_crc_is_detected(tmp_path):
    for raw in (small_file(tmp_path, "ckpt", crc_check=True)[1], (REPO_FIXTURES / "dtypes.ckpt").read_bytes()):
        for i in range(len(raw)):
            bad = bytearray(raw)
            bad[i] ^= 0x01
            with pytest.raises(CheckpointError):
                ms.load_checkpoint(io.BytesIO(bytes(bad)))


def test_flipped_header_byte_names_the_problem(tmp_path):
    path, raw = small_file(tmp_path)
    i = raw.index(b'"w"') + 1  # the tensor name: still valid JSON, caught by the checksum
    bad = bytearray(raw)
    bad[i] ^= 0x02
    path.write_bytes(bytes(bad))
    with pytest.raises(CheckpointError, match="checksum does not match"):
        ms.load_checkpoint(str(path))
    bad = bytearray(raw)
    bad[raw.index(b'"shape":') + len('"shape"')] = ord(";")
    path.write_bytes(bytes(bad))
    with pytest.raises(CheckpointError, match="not valid JSON"):
        ms.load_checkpoint(str(path))
    bad = bytearray(raw)
    bad[5] = 0x40  # the header length field
    path.write_bytes(bytes(bad))
    with pytest.raises(CheckpointError, match="header length field"):
        ms.load_checkpoint(str(path))


def test_corrupt_file_loads_nothing_into_the_net(tmp_path):
    _, path = save_reference(tmp_path)
    raw = path.read_bytes()
    net = Net()
    before = snapshot(net)
    for bad in (raw[:-10], raw[:200], raw[:9] + b"\x00" + raw[10:], raw[:-1] + bytes([raw[-1] ^ 1])):
        path.write_bytes(bad)
        with pytest.raises(CheckpointError):
            ms.load_checkpoint(str(path), net=net)
        assert_same(snapshot(net), before)


def test_neither_format(tmp_path):
    cases = {"empty": (b"", "is empty"),
             "random": (bytes(range(200, 256)), "neither a safetensors file nor a MindSpore .ckpt"),
             "pickle": (pickle.dumps({"w": [1.0]}), "pickle"),
             "zip": (b"PK\x03\x04" + bytes(40), "zip archive"),
             "text": (b"hello world, not a checkpoint", "neither")}
    for name, (raw, msg) in cases.items():
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(CheckpointError, match=msg) as info:
            ms.load_checkpoint(str(tmp_path / name))
        assert str(tmp_path / name) in str(info.value)


def varint(n):
    return ck._varint(n)


def ckpt_record(tag, dims, ttype, content, packed=False):
    t = ttype.encode()
    if packed:
        body = b"".join(varint(d) for d in dims)
        tensor = (b"\x0a" + varint(len(body)) + body) if dims else b""
    else:
        tensor = b"".join(b"\x08" + varint(d) for d in dims)
    tensor += b"\x12" + varint(len(t)) + t + b"\x1a" + varint(len(content)) + content
    tag = tag.encode()
    value = b"\x0a" + varint(len(tag)) + tag + b"\x12" + varint(len(tensor)) + tensor
    return b"\x0a" + varint(len(value)) + value


def test_unknown_and_unsupported_ckpt_types():
    good = ckpt_record("ok", [2], "Float32", np.ones(2, np.float32).tobytes())
    for ttype, msg in (("Float99", "tensor_type 'Float99', which cellkit does not know"),
                       ("Int4", "Int4"), ("HiFloat8", "HiFloat8")):
        with pytest.raises(CheckpointError, match=msg):
            ms.load_checkpoint(io.BytesIO(good + ckpt_record("w", [2], ttype, bytes(2))))
    # a flipped letter of a type name in MindSpore's own file (which has no CRC)
    raw = bytearray((REPO_FIXTURES / "lenetlike.ckpt").read_bytes())
    raw[raw.index(b"Float32")] ^= 0x20
    with pytest.raises(CheckpointError, match="'conv1.weight' with tensor_type 'float32'"):
        ms.load_checkpoint(io.BytesIO(bytes(raw)))
    # MapParameter records (Checkpoint.Value.maptensor)
    value = b"\x0a\x01m" + b"\x1a\x00"
    with pytest.raises(CheckpointError, match="MapParameter"):
        ms.load_checkpoint(io.BytesIO(good + b"\x0a" + varint(len(value)) + value))


def test_ckpt_structure_errors():
    def load(raw):
        return ms.load_checkpoint(io.BytesIO(raw))

    with pytest.raises(CheckpointError, match="should have 8 bytes of data but has 4"):
        load(ckpt_record("w", [2], "Float32", bytes(4)))
    with pytest.raises(CheckpointError, match="appears twice"):
        load(ckpt_record("a", [1], "Int8", b"\x01") + ckpt_record("b", [1], "Int8", b"\x01")
             + ckpt_record("a", [1], "Int8", b"\x02"))
    with pytest.raises(CheckpointError, match="slices of 'a' disagree"):
        load(ckpt_record("a", [2], "Int8", b"\x01") + ckpt_record("a", [3], "Int8", b"\x02"))
    with pytest.raises(CheckpointError, match="unexpected field 2"):
        load(ckpt_record("a", [1], "Int8", b"\x01") + b"\x12\x00")


def test_ckpt_slices_packed_dims_and_scalars(tmp_path, monkeypatch):
    raw = (ckpt_record("big", [2, 3], "Int16", np.arange(3, dtype=np.int16).tobytes())
           + ckpt_record("big", [2, 3], "Int16", np.arange(3, 6, dtype=np.int16).tobytes())
           + ckpt_record("packed", [2, 2], "Float32", np.ones(4, np.float32).tobytes(), packed=True)
           + ckpt_record("s", [0], "Float32", np.float32(3).tobytes())
           + ckpt_record("e", [0], "Float32", b""))
    got = ms.load_checkpoint(io.BytesIO(raw))
    assert got["big"].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert got["packed"].shape == (2, 2)
    assert got["s"].shape == () and float(got["s"]) == 3.0
    assert got["e"].shape == (0,)

    monkeypatch.setattr(ck.ckpt_io, "_CKPT_SLICE_BYTES", 7)
    data = {"w": np.arange(10, dtype=np.float32), "tiny": np.int8(1), "empty": np.zeros((0, 2), np.float32)}
    ms.save_checkpoint(data, str(tmp_path / "sliced.ckpt"), format="ckpt", crc_check=True)
    assert (tmp_path / "sliced.ckpt").read_bytes().count(b"\x0a\x01w") == 6  # 40 bytes in slices of 7
    back = ms.load_checkpoint(tmp_path / "sliced.ckpt", crc_check=True)
    np.testing.assert_array_equal(back["w"].asnumpy(), data["w"])
    assert back["empty"].shape == (0, 2)


def test_unknown_safetensors_dtype_and_bad_headers(tmp_path):
    def write(header, data=b""):
        text = json.dumps(header).encode()
        return io.BytesIO(struct.pack("<Q", len(text)) + text + data)

    with pytest.raises(CheckpointError, match="tensor 'w' of dtype 'X9', which cellkit does not know"):
        ms.load_checkpoint(write({"w": {"dtype": "X9", "shape": [1], "data_offsets": [0, 1]}}, b"\x00"))
    with pytest.raises(CheckpointError, match="do not match its size"):
        ms.load_checkpoint(write({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)))
    with pytest.raises(CheckpointError, match="back to back"):
        ms.load_checkpoint(write({"w": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}, bytes(2)))
    with pytest.raises(CheckpointError, match="unexpected bytes"):
        ms.load_checkpoint(write({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}, bytes(2)))
    with pytest.raises(CheckpointError, match="malformed"):
        ms.load_checkpoint(write({"w": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}}, bytes(1)))
    with pytest.raises(CheckpointError, match="Int4"):
        ms.load_checkpoint(write({"__metadata__": {"w": "Int4"},
                                  "w": {"dtype": "I8", "shape": [1], "data_offsets": [0, 1]}}, bytes(1)))
    text = b'{"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, "w": {}}'
    with pytest.raises(CheckpointError, match="appears twice"):
        ms.load_checkpoint(io.BytesIO(struct.pack("<Q", len(text)) + text + b"\x00"))


def test_newer_format_version_is_refused(tmp_path):
    path, raw = small_file(tmp_path)
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header["__metadata__"]["cellkit.version"] = "2"
    crc = zlib.crc32(raw[8 + n:], zlib.crc32(ck._canonical(header)))
    header["__metadata__"]["cellkit.crc32"] = "%08x" % crc
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:])
    with pytest.raises(CheckpointError, match="format version 2; this cellkit reads version 1"):
        ms.load_checkpoint(str(path))


def test_load_from_a_file_object(tmp_path):
    path, raw = small_file(tmp_path)
    got = ms.load_checkpoint(io.BytesIO(raw))
    assert list(got) == ["w", "b"] and got["b"].requires_grad is False
    with pytest.raises(CheckpointError, match="truncated"):
        ms.load_checkpoint(io.BytesIO(raw[:-1]))
    with pytest.raises(CheckpointError, match="unexpected bytes"):
        ms.load_checkpoint(io.BytesIO(raw + b"\x00"))


def test_unsupported_load_arguments(tmp_path):
    path, _ = small_file(tmp_path)
    with pytest.raises(NotImplementedError, match="encrypted"):
        ms.load_checkpoint(str(path), dec_key=b"0" * 16)
    with pytest.raises(NotImplementedError, match="remove_redundancy"):
        ms.load_checkpoint(str(path), remove_redundancy=True)
    with pytest.raises(TypeError, match="net must be a Cell"):
        ms.load_checkpoint(str(path), net={})
    assert list(ms.load_checkpoint(str(path), format="ckpt")) == ["w", "b"]  # format: the bytes decide


def test_empty_checkpoint(tmp_path):
    ms.save_checkpoint([], str(tmp_path / "none"))
    with pytest.raises(CheckpointError, match="holds no entries"):
        ms.load_checkpoint(str(tmp_path / "none.safetensors"))


@pytest.mark.skipif(x64(), reason="with x64 on, Int64 entries load as Int64")
def test_int64_out_of_int32_range_without_x64(tmp_path):
    ms.save_checkpoint({"big": np.array([1, 2**40], np.int64), "ok": np.array([1, -2], np.int64)},
                       str(tmp_path / "i64"))
    with pytest.raises(OverflowError, match="'big'.*do not fit Int32.*JAX_ENABLE_X64"):
        ms.load_checkpoint(str(tmp_path / "i64.safetensors"))
    got = ms.load_checkpoint(str(tmp_path / "i64.safetensors"), specify_prefix="ok")
    assert got["ok"].dtype == ms.int32 and got["ok"].asnumpy().tolist() == [1, -2]


@pytest.mark.skipif(not x64(), reason="needs JAX's 64-bit mode")
def test_int64_round_trips_with_x64(tmp_path):
    p = ms.Parameter(ms.Tensor(np.array([1, 2**40], np.int64)), name="big")
    ms.save_checkpoint([p], str(tmp_path / "i64"), format="ckpt")
    got = ms.load_checkpoint(str(tmp_path / "i64.ckpt"))["big"]
    assert got.dtype == ms.int64 and got.asnumpy().tolist() == [1, 2**40]
