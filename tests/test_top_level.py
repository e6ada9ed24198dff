"""The top-level namespace against MindSpore 2.10's: what it exports, Layout, JitConfig, mutable, the
dtype aliases, the generator functions, checkpoint conversion and the names with no meaning here."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec

import cellkit as ms
from cellkit import nn
from cellkit.unsupported import UNSUPPORTED
from ms_fixtures import load

CASES = load("top")


def _expect(name, fn):
    case = CASES[name]
    if "error" in case:
        with pytest.raises(getattr(__builtins__, case["error"], None) or Exception) as info:
            fn()
        assert type(info.value).__name__ == case["error"]
        return None
    got = fn()
    assert got == case["output"], (name, got, case["output"])
    return got


@pytest.mark.parametrize("group", ["train_at_top", "runtime_at_top", "device_manager_at_top"])
def test_mindspore_top_level_exports_resolve(group):
    missing = [n for n in CASES[group]["output"] if not hasattr(ms, n)]
    # The runtime's stream limits, memory pools and allocators are Ascend/MindSpore-runtime features.
    allowed = {"MemPool", "PluggableAllocator", "StreamLimitCtx", "dispatch_threads_num", "get_device_limit",
               "get_stream_limit", "launch_blocking", "memory_replay", "reset_stream_limit", "set_device_limit",
               "set_stream_limit", "use_mem_pool", "DatasetHelper", "connect_network_with_dataset", "data_sink",
               "ConvertNetUtils", "ConvertModelUtils"}
    assert set(missing) <= allowed, sorted(set(missing) - allowed)


def test_train_names_are_the_same_objects_at_the_top():
    assert ms.LossMonitor is ms.train.LossMonitor and ms.Callback is ms.train.Callback
    assert ms.Accuracy is ms.train.Accuracy and ms.Model is ms.train.Model
    assert len(ms.__all__) == len(set(ms.__all__))


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("layout/")))
def test_layout_matches_mindspore(name):
    args = CASES[name]["inputs"]
    if name == "layout/lengths_differ":
        _expect(name, lambda: ms.Layout((2, 4), ("dp",)))
        return
    _expect(name, lambda: ms.Layout(args[0], args[1])(*args[2:]).to_dict())


def test_layout_is_a_partition_spec_and_a_mesh():
    layout = ms.Layout((1, 1), ("dp", "mp"))
    assert layout(("dp", "mp"), "None").partition_spec() == PartitionSpec(("dp", "mp"), None)
    assert layout("mp", "dp").partition_spec() == PartitionSpec("mp", "dp")
    mesh = layout.mesh(jax.devices()[:1])
    assert dict(mesh.shape) == {"dp": 1, "mp": 1}
    # cellkit.parallel takes a Layout where it takes a PartitionSpec
    net = nn.Dense(4, 2)
    ms.parallel.annotate(net, {"weight": ms.Layout((1, 1), ("dp", "mp"))("mp", "dp")})
    assert net.weight.sharding == PartitionSpec("mp", "dp")
    with pytest.raises(ValueError, match="give the tensor map first"):
        ms.Layout((2,), ("dp",)).partition_spec()


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("jit_config/")))
def test_jit_config_matches_mindspore(name):
    kwargs = {"jit_config/default": {}, "jit_config/o1": {"jit_level": "O1", "jit_syntax_level": "LAX"},
              "jit_config/bad_level": {"jit_level": "O7"}, "jit_config/bad_exc_mode": {"exc_mode": "always"}}[name]
    _expect(name, lambda: ms.JitConfig(**kwargs).jit_config_dict)


def test_set_jit_config_keeps_the_options_and_compiles_the_same():
    net = nn.Dense(2, 2)
    assert net.set_jit_config(ms.JitConfig(jit_level="O2")) is net and net.jit_config["jit_level"] == "O2"
    x = jnp.ones((1, 2))
    np.testing.assert_allclose(ms.jit(lambda x: net(x))(x), net(x), rtol=1e-6)
    with pytest.raises(TypeError, match="Dense.set_jit_config: jit_config must be a JitConfig"):
        net.set_jit_config({"jit_level": "O2"})


@pytest.mark.parametrize("name,value", [("mutable/tuple", (1, 2.0)), ("mutable/list", [1, 2]),
                                        ("mutable/dict", {"a": 1}), ("mutable/str", "abc"),
                                        ("mutable/none", None)])
def test_mutable_matches_mindspore(name, value):
    _expect(name, lambda: ms.mutable(value))


def test_mutable_inputs_do_not_recompile():
    f = ms.jit(lambda x, n: x * n)
    f(jnp.ones(2), ms.mutable(2))
    f(jnp.ones(2), ms.mutable(3))
    assert f.trace_count == 1


def test_dtype_aliases_match_mindspore():
    for name, want in CASES["dtype_aliases"]["output"].items():
        assert str(getattr(ms, name)) == want, name
    assert ms.long == np.int64 and ms.ubyte == np.uint8 and ms.cfloat == np.complex64
    assert jnp.zeros(2, ms.float8_e4m3fn).dtype == ms.float8_e4m3fn


def test_generator_matches_mindspore_and_replays_its_state():
    _expect("generator/initial_seed", lambda: ms.Generator().initial_seed())
    _expect("generator/manual_seed_then_initial", lambda: ms.Generator().manual_seed(5).initial_seed())
    _expect("generator/bad_seed", lambda: ms.Generator().manual_seed("x"))
    g = ms.Generator().manual_seed(11)
    state = g.get_state()
    first = jax.random.key_data(g.next_key())
    g.set_state(state)
    np.testing.assert_array_equal(jax.random.key_data(g.next_key()), first)
    with pytest.raises(ValueError, match="Generator.set_state: state must be"):
        g.set_state(jnp.zeros(3, jnp.float32))


def test_the_default_generator_is_the_global_stream():
    ms.manual_seed(21)
    assert ms.initial_seed() == 21 and ms.default_generator.initial_seed() == 21
    state = ms.get_rng_state()
    a = ms.ops.rand(3)
    ms.set_rng_state(state)
    np.testing.assert_array_equal(ms.ops.rand(3), a)
    s = ms.seed()
    assert ms.initial_seed() == s
    ms.set_seed(4)
    assert ms.initial_seed() == 4


def test_checkpoint_conversion_both_ways(tmp_path):
    net = nn.Dense(3, 2)
    ms.save_checkpoint(net, str(tmp_path / "a.ckpt"), format="ckpt")
    ms.ckpt_to_safetensors(str(tmp_path), save_path=str(tmp_path / "st"), name_map={"bias": "b"})
    got = ms.load_checkpoint(str(tmp_path / "st" / "a.safetensors"))
    assert list(got) == ["weight", "b"]
    np.testing.assert_array_equal(got["weight"].asnumpy(), net.weight.asnumpy())
    ms.safetensors_to_ckpt(str(tmp_path / "st" / "a.safetensors"))
    back = ms.load_checkpoint(str(tmp_path / "st" / "a.ckpt"))
    assert (tmp_path / "st" / "a.ckpt").read_bytes()[8:9] != b"{"  # protobuf, not a safetensors header
    np.testing.assert_array_equal(back["b"].asnumpy(), net.bias.asnumpy())
    with pytest.raises(FileNotFoundError, match="no '.ckpt' file"):
        ms.ckpt_to_safetensors(str(tmp_path / "st"), file_name_regex="^zzz")


def test_load_checkpoint_async_reads_in_the_background_and_loads_the_net(tmp_path):
    src = nn.Dense(3, 2)
    ms.save_checkpoint(src, str(tmp_path / "n.safetensors"))
    dst = nn.Dense(3, 2)
    future = ms.load_checkpoint_async(str(tmp_path / "n.safetensors"), net=dst)
    params = future.result()
    assert sorted(params) == ["bias", "weight"] and future.done()
    np.testing.assert_array_equal(dst.weight.asnumpy(), src.weight.asnumpy())
    assert ms.async_ckpt_thread_status() is False
    with pytest.raises(FileNotFoundError):
        ms.load_checkpoint_async(str(tmp_path / "missing.safetensors")).result()


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_names_without_meaning_say_what_to_use(name):
    with pytest.raises(NotImplementedError, match=rf"cellkit\.{name}: \S"):
        getattr(ms, name)()


def test_compiler_hints_are_accepted():
    def f(x):
        return x + 1
    assert ms.lazy_inline(f) is f and ms.lazy_inline()(f) is f and ms.no_inline(f) is f
    assert ms.jit_class(dict) is dict
    with pytest.raises(TypeError, match="jit_class: expected a class"):
        ms.jit_class(f)
    ms.set_algo_parameters(fully_use_devices=False)
    assert ms.get_algo_parameters("fully_use_devices") is False
    ms.reset_algo_parameters()
    with pytest.raises(ValueError, match="was not set"):
        ms.get_algo_parameters("fully_use_devices")
    ms.set_recursion_limit(2000)
    with pytest.raises(ValueError):
        ms.set_recursion_limit(0)


def test_context_module_has_the_parallel_context_functions():
    assert ms.context.set_auto_parallel_context is ms.set_auto_parallel_context
    assert ms.common.jit is ms.jit and ms.common.manual_seed is ms.manual_seed


def test_run_check_prints_success(capsys):
    ms.run_check()
    out = capsys.readouterr().out
    assert "cellkit version" in out and "installed on platform [CPU] successfully" in out


def test_current_device_matches_mindspore_on_cpu():
    if jax.default_backend() != "cpu":
        pytest.skip("the recorded value is MindSpore's on CPU")
    assert ms.get_current_device() == CASES["current_device"]["output"]
