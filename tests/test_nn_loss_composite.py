"""FocalLoss, DiceLoss, MultiClassDiceLoss, SampledSoftmaxLoss and TripletMarginWithDistanceLoss against
MindSpore 2.10's own numbers.

References: tests/fixtures/mindspore/nn_loss_optim.{json,npz}, recorded by
tests/fixtures/record/record_nn_loss_optim.py. SampledSoftmaxLoss is compared
with explicit ``sampled_values`` (no random draw); its own uniform sampler is
checked for the properties MindSpore's ``UniformCandidateSampler`` shows in the
fixtures (distinct candidates, true classes left out, expected counts).
"""

import builtins

import jax
import jax.test_util
import jax.numpy as jnp
import numpy as np
import pytest

import cellkit as ms
from cellkit import nn
from ms_fixtures import load

REF = load("nn_loss_optim")
T = ms.Tensor
WEIGHT4 = np.array([0.5, 1.0, 2.0, 1.5], np.float32)
SAMPLED = (np.array([1, 2, 4, 5], np.int32), np.full((3, 1), 0.5, np.float32), np.full((4,), 0.5, np.float32))
SAMPLED2 = (np.array([1, 4, 6], np.int32), np.array([[0.4, 0.3], [0.2, 0.5]], np.float32),
            np.array([0.3, 0.2, 0.6], np.float32))


def tensors(values):
    return tuple(T(np.asarray(v)) for v in values)


MAKERS = {
    "FocalLoss()": lambda: nn.FocalLoss(),
    "FocalLoss(gamma=0.5,reduction='sum')": lambda: nn.FocalLoss(gamma=0.5, reduction="sum"),
    "FocalLoss(weight)": lambda: nn.FocalLoss(weight=T(WEIGHT4)),
    "FocalLoss(weight,reduction='none')": lambda: nn.FocalLoss(weight=T(WEIGHT4), reduction="none"),
    "FocalLoss(reduction='none')": lambda: nn.FocalLoss(reduction="none"),
    "DiceLoss()": lambda: nn.DiceLoss(),
    "DiceLoss(smooth=0.5)": lambda: nn.DiceLoss(smooth=0.5),
    "MultiClassDiceLoss()": lambda: nn.MultiClassDiceLoss(),
    "MultiClassDiceLoss(ignore_indiex=1,activation='sigmoid')":
        lambda: nn.MultiClassDiceLoss(ignore_indiex=1, activation="sigmoid"),
    "MultiClassDiceLoss(weights,activation=None)":
        lambda: nn.MultiClassDiceLoss(weights=T(np.array([[1.0], [2.0], [0.5], [1.0]], np.float32)), activation=None),
    "MultiClassDiceLoss(activation='relu')": lambda: nn.MultiClassDiceLoss(activation="relu"),
    "TripletMarginWithDistanceLoss()": lambda: nn.TripletMarginWithDistanceLoss(),
    "TripletMarginWithDistanceLoss(swap=True,margin=2.0,reduction='none')":
        lambda: nn.TripletMarginWithDistanceLoss(swap=True, margin=2.0, reduction="none"),
    "TripletMarginWithDistanceLoss(distance=l1,reduction='sum')":
        lambda: nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: jnp.abs(a - b).sum(axis=1),
                                                 reduction="sum"),
    "SampledSoftmaxLoss(4,7,sampled_values)": lambda: nn.SampledSoftmaxLoss(4, 7, sampled_values=tensors(SAMPLED)),
    "SampledSoftmaxLoss(3,7,num_true=2,sampled_values,reduction='mean')":
        lambda: nn.SampledSoftmaxLoss(3, 7, num_true=2, sampled_values=tensors(SAMPLED2), reduction="mean"),
}

CTORS = {
    "FocalLoss(gamma=2)": lambda: nn.FocalLoss(gamma=2),
    "FocalLoss(weight=list)": lambda: nn.FocalLoss(weight=[1.0, 2.0]),
    "FocalLoss(weight=2d)": lambda: nn.FocalLoss(weight=T(np.ones((2, 2), np.float32))),
    "DiceLoss(smooth=0.0)": lambda: nn.DiceLoss(smooth=0.0),
    "MultiClassDiceLoss(activation='gelu')": lambda: nn.MultiClassDiceLoss(activation="gelu"),
    "MultiClassDiceLoss(weights=1d)": lambda: nn.MultiClassDiceLoss(weights=T(np.ones(3, np.float32))),
    "MultiClassDiceLoss(ignore_indiex=1.0)": lambda: nn.MultiClassDiceLoss(ignore_indiex=1.0),
    "SampledSoftmaxLoss(8,7)": lambda: nn.SampledSoftmaxLoss(8, 7),
    "SampledSoftmaxLoss(2,7,num_true=0)": lambda: nn.SampledSoftmaxLoss(2, 7, num_true=0),
    "SampledSoftmaxLoss(2,7,seed=-1)": lambda: nn.SampledSoftmaxLoss(2, 7, seed=-1),
    "SampledSoftmaxLoss(2,7,sampled_values=1)": lambda: nn.SampledSoftmaxLoss(2, 7, sampled_values=1),
    "SampledSoftmaxLoss(2,7,sampled_values=(1,2))": lambda: nn.SampledSoftmaxLoss(2, 7, sampled_values=(1, 2)),
    "TripletMarginWithDistanceLoss(margin=1)": lambda: nn.TripletMarginWithDistanceLoss(margin=1),
    "TripletMarginWithDistanceLoss(swap=1)": lambda: nn.TripletMarginWithDistanceLoss(swap=1),
}

LOSS_CASES = sorted(k[len("loss/"):] for k in REF if k.startswith("loss/"))


def maker(case):
    return MAKERS[case.split("/")[0]]


def test_every_recorded_case_has_a_maker():
    assert {c.split("/")[0] for c in LOSS_CASES} == set(MAKERS)
    assert {k[len("ctor/"):] for k in REF if k.startswith("ctor/")} == set(CTORS)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", LOSS_CASES)
def test_loss_matches_mindspore(case, jit):
    ref = REF[f"loss/{case}"]
    loss = maker(case)()
    inputs = tensors(ref["inputs"])
    call = ms.jit(lambda *a: loss(*a)) if jit else loss
    if "error" in ref:
        with pytest.raises(getattr(builtins, ref["error"])):
            call(*inputs)
        return
    out = call(*inputs)
    expected = np.asarray(ref["output"])
    assert out.shape == expected.shape
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("case", sorted(CTORS))
def test_constructor_refusals_match_mindspore(case):
    with pytest.raises(getattr(builtins, REF[f"ctor/{case}"]["error"])):
        CTORS[case]()


@pytest.mark.parametrize("case", ["FocalLoss(weight)/onehot", "FocalLoss()/index_nchw",
                                  "MultiClassDiceLoss()", "TripletMarginWithDistanceLoss()",
                                  "SampledSoftmaxLoss(4,7,sampled_values)"])
def test_gradients(case):
    loss = maker(case)()
    inputs = [jnp.asarray(v) for v in REF[f"loss/{case}"]["inputs"]]
    pos = 3 if case.startswith("Sampled") else 0
    x64 = jax.config.jax_enable_x64
    inputs = [v.astype(jnp.float64) if x64 and v.dtype == jnp.float32 else v for v in inputs]

    def f(x):
        args = list(inputs)
        args[pos] = x
        return jnp.sum(loss(*args))
    jax.test_util.check_grads(f, (inputs[pos],), order=1, modes=["rev"], atol=1e-2 if not x64 else 1e-5,
                              rtol=1e-2 if not x64 else 1e-5)


@pytest.mark.parametrize("key", sorted(k for k in REF if k.startswith("sampler/")))
def test_uniform_sampler_properties_match_mindspore(key):
    from cellkit.nn.loss.composite import _uniform_candidates
    ms_sampled, ms_true, ms_count = REF[key]["output"]
    unique, rah = "unique=True" in key, "rah=True" in key
    labels = jnp.asarray([0, 1, 2], jnp.int32)
    for seed in range(4):
        sampled, count = _uniform_candidates(jax.random.key(seed), labels, 4, 7, unique, rah)
        assert sampled.shape == ms_sampled.shape and sampled.dtype == jnp.int32
        assert ((0 <= sampled) & (sampled < 7)).all()
        if unique:
            assert len(set(np.asarray(sampled).tolist())) == 4
        if rah:
            assert not set(np.asarray(sampled).tolist()) & {0, 1, 2}
        if unique:
            # Expected count from the number of draws made: num_sampled / C when none was redrawn (MindSpore's
            # fixture without accidental-hit removal), else 1 - (1 - 1/C)**tries (MindSpore drew 9 times to
            # find 4 classes outside {0, 1, 2}).
            if float(count) != pytest.approx(4 / 7, rel=1e-6):
                tries = np.log1p(-float(count)) / np.log1p(-1 / 7)
                assert tries == pytest.approx(round(tries), abs=1e-3) and round(tries) > 4
        else:
            np.testing.assert_allclose(float(count), ms_count[0], rtol=1e-6)
    if rah:
        assert ms_count[0] == pytest.approx(1 - (6 / 7) ** 9, rel=1e-6)
    elif unique:
        assert ms_count[0] == pytest.approx(4 / 7, rel=1e-6)


def test_sampled_softmax_draws_then_matches_explicit_values():
    ms.set_seed(3)
    ref = REF["loss/SampledSoftmaxLoss(4,7,sampled_values)"]
    w, b, labels, x = tensors(ref["inputs"])
    loss = nn.SampledSoftmaxLoss(4, 7)
    out = loss(w, b, labels, x)
    ms.set_seed(3)
    from cellkit.nn.loss.composite import _uniform_candidates
    from cellkit.random import next_key
    sampled, count = _uniform_candidates(next_key(), labels.reshape(-1), 4, 7, True, True)
    explicit = nn.SampledSoftmaxLoss(4, 7, sampled_values=(sampled, jnp.full((3, 1), count), jnp.full((4,), count)))
    np.testing.assert_allclose(out, explicit(w, b, labels, x), rtol=1e-6)
    assert out.shape == (3,) and bool(jnp.all(jnp.isfinite(out)))
    with pytest.raises(TypeError, match="int32 or int64"):
        loss(w, b, labels.astype(jnp.float32), x)
