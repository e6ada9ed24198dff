"""Cheap XLA compilation for an eager executable's first calls, full optimisation once it is hot.

An eager (PyNative) program compiles many small executables that then run a
handful of times: an op on a shape seen once, the backward pass of a
``value_and_grad`` called twice. On CPU most of their cost is XLA's backend
(LLVM) optimisation. :func:`tiered_jit` is ``jax.jit`` whose executables are
first compiled with LLVM's optimisation off (:data:`FAST_OPTIONS`: about a
third less compile time, slower code), and compiled again with XLA's defaults once the
same input signature has been called :data:`HOT` times, as a tiered JIT does. A
training loop's update runs fully optimised from its ``HOT``-th step on; a
one-off call never pays for optimisation it cannot use.

Only top-level calls with concrete arrays are tiered: under a trace (``jit``,
``grad``, ``vmap``) the call is the plain ``jax.jit`` (JAX accepts compiler
options on top-level calls only). Only the CPU backend is tiered; elsewhere this
is ``jax.jit``. The options change LLVM's code generation, not the HLO computed
(no fast-math), with one visible effect: the cheap tier does not contract
``a * b + c`` into a fused multiply-add, so the first calls of an executable may
differ from later ones in the last bit.

Tiering is off by default, because of that last bit: with it an executable's
ninth call can differ from its first for the same inputs, which reproducibility
checks and exact comparisons notice. ``CELLKIT_TIERED_JIT=1`` (read at import)
or :func:`set_enabled` turns it on, for the executables made from then on.

With tiering off, every top-level CPU call is compiled with :data:`EAGER_OPTIONS`
(XLA's elemental emitters instead of its newer fusion emitters, LLVM at -O1: about
half the compile time, a convolution 60 -> 20 ms, a backward pass 0.28 -> 0.12 s, with
code about as fast; a matrix product fused with what follows can take up to twice as
long), and one whose arrays hold at most :data:`SMALL` elements in all with
:data:`FAST_OPTIONS` too. The choice follows the input shapes, so every call of a
signature runs the same executable and gives the same bits; on arrays this small
the slower code costs at most some microseconds per call (a 512-element gelu: 18
us instead of 4). A call staged inside another trace is plain ``jax.jit`` (JAX
takes compiler options on top-level calls only), and so is every call where XLA
refuses the options.

>>> import jax.numpy as jnp
>>> from cellkit.tiered_jit import tiered_jit
>>> f = tiered_jit(lambda x: jnp.sin(x) * 2)   # a tiny call: compiled cheaply, the same every time
>>> round(float(f(jnp.float32(0.5))), 4)
0.9589
"""

from __future__ import annotations

import os

import jax

from .host_ops import on_cpu as _on_cpu

__all__ = ["tiered_jit", "eager_options_jit", "FAST_OPTIONS", "EAGER_OPTIONS", "HOT", "SMALL", "set_enabled",
           "enabled"]

FAST_OPTIONS = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
# XLA's CPU elemental emitters instead of its newer fusion emitters, and LLVM's lighter -O1: about half
# the compile time of an eager executable (a convolution: 60 -> 20 ms, a backward pass: 0.28 -> 0.1 s),
# code about as fast (measured from 20% faster to 25% slower; some fused matrix products up to 2x slower).
EAGER_OPTIONS = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 1}
_eager_options = [True]   # False once this XLA refuses EAGER_OPTIONS
HOT = 8
_MAX_SIGNATURES = 4096
_enabled = [os.environ.get("CELLKIT_TIERED_JIT", "0").strip().lower() in ("1", "on", "true", "yes")]
SMALL = 1024
_Tracer = jax.core.Tracer
try:
    from jax._src.array import ArrayImpl as _ArrayImpl
except ImportError:   # another jax: every call is jax.jit's
    _ArrayImpl = ()



def enabled() -> bool:
    """Whether eager executables start in the cheap tier."""
    return _enabled[0] and _on_cpu()


def set_enabled(on: bool) -> None:
    """Turn tiering on or off for this process (executables already compiled are kept)."""
    _enabled[0] = bool(on)


class _Tiered:
    __slots__ = ("fast", "full", "calls", "__wrapped__", "__name__")

    def __init__(self, fn, jit_kwargs):
        self.full = jax.jit(fn, **jit_kwargs)
        self.fast = jax.jit(fn, compiler_options=FAST_OPTIONS, **jit_kwargs)
        self.calls = {}
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "fn")

    def __call__(self, *args, **kwargs):
        if not enabled():
            return self.full(*args, **kwargs)
        signature = []
        for leaf in jax.tree_util.tree_leaves((args, kwargs)):
            if isinstance(leaf, _Tracer):
                return self.full(*args, **kwargs)
            signature.append((getattr(leaf, "shape", None), getattr(leaf, "dtype", type(leaf))))
        signature = tuple(signature)
        n = self.calls.get(signature, 0)
        if n >= HOT:
            return self.full(*args, **kwargs)
        if len(self.calls) >= _MAX_SIGNATURES:
            self.calls.clear()
        self.calls[signature] = n + 1
        return self.fast(*args, **kwargs)

    def lower(self, *args, **kwargs):
        return self.full.lower(*args, **kwargs)

    def trace(self, *args, **kwargs):
        return self.full.trace(*args, **kwargs)


class _Small:
    """``jax.jit`` whose top-level CPU calls use :data:`EAGER_OPTIONS`, and on tiny arrays (at most
    :data:`SMALL` elements in all) :data:`FAST_OPTIONS` too: the choice follows the input shapes, so
    every call of a signature runs the same executable and gives the same bits."""
    __slots__ = ("_jit_kwargs", "_jits", "limit", "__wrapped__", "__name__")

    def __init__(self, fn, jit_kwargs, limit=None):
        self.limit = SMALL if limit is None else limit
        self._jit_kwargs, self._jits = jit_kwargs, {}
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "fn")

    def _jit(self, kind):
        """The ``jax.jit`` of one kind ("full", "eager", "fast"), made on first use (a module's decorated
        functions cost nothing at import, and a kind never called is never made)."""
        jitted = self._jits.get(kind)
        if jitted is None:
            options = {"full": None, "eager": EAGER_OPTIONS, "fast": {**EAGER_OPTIONS, **FAST_OPTIONS}}[kind]
            extra = {} if options is None else {"compiler_options": options}
            jitted = self._jits[kind] = jax.jit(self.__wrapped__, **extra, **self._jit_kwargs)
        return jitted

    full = property(lambda self: self._jit("full"))
    eager = property(lambda self: self._jit("eager"))
    fast = property(lambda self: self._jit("fast"))

    def _kind(self, args, kwargs) -> str:
        """The ``jax.jit`` a top-level call with these arguments uses ("full", "eager" or "fast")."""
        total = 0
        for a in args:
            if type(a) is not _ArrayImpl:
                total = _size(args, kwargs)
                break
            total += a.size
        else:
            if kwargs:
                total = _size(args, kwargs)
        if total is None or not _on_cpu() or not _eager_options[0]:
            return "full"
        return "fast" if total <= self.limit else "eager"

    def __call__(self, *args, **kwargs):
        kind = self._kind(args, kwargs)
        if kind == "full":
            return self.full(*args, **kwargs)
        try:
            return self._jit(kind)(*args, **kwargs)
        except jax.errors.JaxRuntimeError as e:
            _refused(e)
            return self.full(*args, **kwargs)

    def compiled(self, *args):
        """The executable a top-level call with these arguments runs (``jax.stages.Compiled``, called with
        the arguments that are not static)."""
        kind = self._kind(args, {})
        if kind != "full":
            try:
                return self._jit(kind).lower(*args).compile()
            except jax.errors.JaxRuntimeError as e:
                _refused(e)
        return self.full.lower(*args).compile()

    def lower(self, *args, **kwargs):
        return self.full.lower(*args, **kwargs)

    def trace(self, *args, **kwargs):
        return self.full.trace(*args, **kwargs)


def _refused(error) -> None:
    """After an XLA error: where it refused :data:`EAGER_OPTIONS`, XLA's defaults from now on (another
    XLA); any other error is raised again."""
    if "No such compile option" not in str(error):
        raise error
    _eager_options[0] = False


def _size(args, kwargs):
    """The elements of the call's arrays in all; None when one is a tracer (a staged call)."""
    total = 0
    for leaf in jax.tree_util.tree_leaves((args, kwargs)):
        if isinstance(leaf, _Tracer):
            return None
        total += getattr(leaf, "size", 1)
    return total


def eager_options_jit(fn=None, **jit_kwargs):
    """``jax.jit`` whose top-level CPU calls always use :data:`EAGER_OPTIONS` (never
    :data:`FAST_OPTIONS`, whatever the sizes): for a computation whose bits must be XLA's default
    ones, which these options keep (``cellkit.draws``: ``jax.random``'s numbers, checked bit for bit)."""
    if fn is None:
        return lambda f: eager_options_jit(f, **jit_kwargs)
    return _Small(fn, jit_kwargs, limit=-1)


def tiered_jit(fn=None, **jit_kwargs):
    """``jax.jit(fn, **jit_kwargs)`` whose top-level CPU calls compile cheaply until hot; see the module.

    With tiering off, calls with tiny arrays still compile cheaply (always, see ``_Small``); turning
    tiering on applies to the executables made from then on. ``tiered_jit(**jit_kwargs)`` is a decorator,
    as ``functools.partial(jax.jit, ...)`` is."""
    if fn is None:
        return lambda f: tiered_jit(f, **jit_kwargs)
    if not enabled():
        return _Small(fn, jit_kwargs)
    return _Tiered(fn, jit_kwargs)
