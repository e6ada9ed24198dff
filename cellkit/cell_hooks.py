"""Cell hooks and recompute: the registration side (``Cell`` inherits :class:`HooksMixin`).

A Cell's hooks live in one immutable :class:`_Hooks` value (each change makes a new
one) stored as the static attribute ``_cell_hooks``, and ``recompute`` stores its
policy as ``_cell_recompute``: both are part of the Cell's structure signature, so
``cellkit.jit`` recompiles when they change. Either marks the instance
``_cell_special``, which sends its calls down the special path
(``cellkit.engine.hooks`` runs them); a Cell without them pays nothing per call.
"""

from __future__ import annotations

import jax

from .parameter import bump_structure

__all__ = ["HookHandle", "HooksMixin"]


class _Hooks:
    """A Cell's hooks, immutable (each change makes a new one): part of its structure signature."""

    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = entries  # ((kind, handle id, fn, with_kwargs), ...)

    def of(self, kind):
        return [(fn, with_kwargs) for k, _, fn, with_kwargs in self.entries if k == kind]

    def __eq__(self, other):
        return isinstance(other, _Hooks) and self.entries == other.entries

    def __hash__(self):
        return hash(self.entries)


class HookHandle:
    """What ``register_*_hook`` returns: ``remove()`` takes the hook off its Cell."""

    _next = [0]

    def __init__(self, cell):
        self._cell = cell
        HookHandle._next[0] += 1
        self.handle_id = HookHandle._next[0]

    def remove(self) -> None:
        cell = self._cell
        d = cell.__dict__
        hooks = d.get("_cell_hooks")
        if hooks is None:
            return
        cell._check_mutable("hooks", None, "remove a hook")
        entries = tuple(e for e in hooks.entries if e[1] != self.handle_id)
        if entries:
            d["_cell_hooks"] = _Hooks(entries)
        else:
            del d["_cell_hooks"]
        _update_special(cell)


def _update_special(cell) -> None:
    d = cell.__dict__
    if "_cell_hooks" in d or "_cell_recompute" in d:
        d["_cell_special"] = True
    else:
        d.pop("_cell_special", None)
    bump_structure()


class HooksMixin:
    """``register_*_hook`` and ``recompute`` for :class:`~cellkit.cell.Cell`."""

    # ----- hooks and recompute (run by cellkit.engine.hooks) ------------------------------

    def _add_hook(self, kind, hook_fn, prepend=False, with_kwargs=False) -> HookHandle:
        if not callable(hook_fn):
            raise TypeError(f"{self.cls_name}.register_{kind}_hook: hook_fn must be a Python function, "
                            f"got {type(hook_fn).__name__}")
        self._check_mutable("hooks", None, f"register a {kind.replace('_', ' ')} hook")
        handle = HookHandle(self)
        old = self.__dict__.get("_cell_hooks")
        entry = (kind, handle.handle_id, hook_fn, bool(with_kwargs))
        entries = old.entries if old is not None else ()
        self.__dict__["_cell_hooks"] = _Hooks((entry,) + entries if prepend else entries + (entry,))
        _update_special(self)
        return handle

    def register_forward_pre_hook(self, hook_fn, *, prepend=False, with_kwargs=False) -> HookHandle:
        """Call ``hook_fn(cell, args)`` (``(cell, args, kwargs)`` with ``with_kwargs``) before
        ``construct``; a non-None result replaces the inputs. Returns a handle with ``remove()``.
        Hooks are part of the Cell's structure: ``cellkit.jit`` recompiles when they change.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.ReLU()
        >>> h = net.register_forward_pre_hook(lambda cell, args: (args[0] - 1,))
        >>> net(ms.Tensor([0.5, 3.0]))
        Array([0., 2.], dtype=float32)
        >>> h.remove()
        """
        return self._add_hook("forward_pre", hook_fn, prepend, with_kwargs)

    def register_forward_hook(self, hook_fn, *, prepend=False, with_kwargs=False, always_call=False) -> HookHandle:
        """Call ``hook_fn(cell, args, output)`` (``(cell, args, kwargs, output)`` with ``with_kwargs``)
        after ``construct``; a non-None result replaces the output."""
        return self._add_hook("forward", hook_fn, prepend, with_kwargs)

    def register_backward_pre_hook(self, hook_fn) -> HookHandle:
        """Call ``hook_fn(cell, grad_output)`` with the gradients of the Cell's outputs (a tuple)
        when gradients flow back through it; a non-None result replaces them."""
        return self._add_hook("backward_pre", hook_fn)

    def register_backward_hook(self, hook_fn) -> HookHandle:
        """Call ``hook_fn(cell, grad_input, grad_output)`` with the gradients of the Cell's inputs
        and outputs (tuples); a non-None result replaces ``grad_input``.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.ReLU()
        >>> h = net.register_backward_hook(lambda cell, gin, gout: tuple(-g for g in gin))
        >>> ms.grad(lambda x: net(x).sum())(ms.Tensor([1.0, -1.0]))
        Array([-1., -0.], dtype=float32)
        """
        return self._add_hook("backward", hook_fn)

    def recompute(self, *, policy=None, use_reentrant=True, output_recompute=False, early_stop=True,
                  context_fn=None, **kwargs) -> "Cell":
        """Recompute this Cell's activations in the backward pass instead of storing them
        (``jax.checkpoint``). ``policy`` (a cellkit addition) is a name or member of
        ``jax.checkpoint_policies`` saying what may still be saved; MindSpore's other options
        are accepted and ignored. Returns the Cell.

        >>> import cellkit as ms
        >>> from cellkit import nn
        >>> net = nn.Dense(4, 4).recompute(policy="dots_saveable")
        >>> ms.grad(lambda x: net(x).sum())(ms.ops.ones((1, 4))).shape
        (1, 4)
        """
        if isinstance(policy, str):
            if not callable(getattr(jax.checkpoint_policies, policy, None)):
                names = sorted(n for n in dir(jax.checkpoint_policies) if not n.startswith("_"))
                raise ValueError(f"{self.cls_name}.recompute: unknown policy {policy!r}; use one of {names}")
        elif policy is not None and not callable(policy):
            raise TypeError(f"{self.cls_name}.recompute: policy must be None, a name or a member of "
                            f"jax.checkpoint_policies, got {type(policy).__name__}")
        self._check_mutable("recompute", None, "set recompute")
        self.__dict__["_cell_recompute"] = policy
        _update_special(self)
        return self
