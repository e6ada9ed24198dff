"""MindSpore's ``Layout``: a device matrix with named axes, and a tensor's map onto it.

``Layout((2, 4), ("dp", "mp"))`` names a 2×4 device matrix; calling it with one
entry per tensor dimension (an axis name, a tuple of names, or ``"None"``) sets
the tensor map, as MindSpore does (the call returns the same Layout). In cellkit
a Layout is a ``jax.sharding`` description: ``partition_spec()`` is the
``PartitionSpec`` and ``mesh()`` the ``Mesh`` (see ``cellkit.parallel``); sharding
rules and ``parallel.annotate`` take a Layout wherever they take a PartitionSpec.

>>> import cellkit as ms
>>> layout = ms.Layout((2, 4), ("dp", "mp"))
>>> layout("dp", "None").to_dict()["tensor_map"]
(1, -1)
>>> layout(("dp", "mp"), "None").partition_spec()
P(('dp', 'mp'), None)
"""

from __future__ import annotations

from jax.sharding import PartitionSpec

__all__ = ["Layout"]


class Layout:
    def __init__(self, device_matrix, alias_name, rank_list=None):
        if not isinstance(device_matrix, tuple) or not device_matrix or not all(
                isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in device_matrix):
            raise TypeError(f"Layout: device_matrix must be a non-empty tuple of positive ints, got {device_matrix!r}")
        if not isinstance(alias_name, tuple) or not all(isinstance(a, str) for a in alias_name):
            raise TypeError(f"Layout: alias_name must be a tuple of str, got {alias_name!r}")
        if len(alias_name) != len(device_matrix):
            raise ValueError(f"Layout: device_matrix {device_matrix} and alias_name {alias_name} differ in length")
        if "None" in alias_name or len(set(alias_name)) != len(alias_name):
            raise ValueError(f"Layout: alias_name must be distinct names other than 'None', got {alias_name}")
        size = 1
        for d in device_matrix:
            size *= d
        self._device_matrix, self._alias_name = device_matrix, alias_name
        self._rank_list = list(range(size)) if rank_list is None else list(rank_list)
        if len(self._rank_list) != size:
            raise ValueError(f"Layout: rank_list has {len(self._rank_list)} ranks, but device_matrix "
                             f"{device_matrix} has {size} devices")
        self._tensor_map = None

    def _index(self, name, used):
        if name == "None":
            return -1
        if name not in self._alias_name:
            raise ValueError(f"The axis {name} is not found in {self._alias_name}")
        if name in used:
            raise ValueError(f"The axis {name} has been set more than one in {self._alias_name}")
        used.add(name)
        return len(self._alias_name) - 1 - self._alias_name.index(name)

    def __call__(self, *tensor_map):
        used, mapping = set(), []
        for entry in tensor_map:
            if isinstance(entry, tuple):
                mapping.append(tuple(self._index(name, used) for name in entry))
            elif isinstance(entry, str):
                mapping.append(self._index(entry, used))
            else:
                raise TypeError(f"Layout: each tensor dimension takes an axis name, a tuple of names or "
                                f"'None', got {entry!r}")
        self._tensor_map = tuple(mapping)
        return self

    def to_dict(self) -> dict:
        if self._tensor_map is None:
            raise ValueError("Layout.to_dict: give the tensor map first, e.g. layout('dp', 'None')")
        return {"device_matrix": self._device_matrix, "tensor_map": self._tensor_map,
                "interleaved_parallel": False, "alias_name": self._alias_name, "rank_list": self._rank_list}

    def _name(self, index):
        return None if index == -1 else self._alias_name[len(self._alias_name) - 1 - index]

    def partition_spec(self) -> PartitionSpec:
        """The ``jax.sharding.PartitionSpec`` of the tensor map."""
        if self._tensor_map is None:
            raise ValueError("Layout.partition_spec: give the tensor map first, e.g. layout('dp', 'None')")
        return PartitionSpec(*(tuple(self._name(i) for i in m) if isinstance(m, tuple) else self._name(m)
                               for m in self._tensor_map))

    def mesh(self, devices=None):
        """The ``jax.sharding.Mesh`` of the device matrix (``cellkit.parallel.make_mesh``)."""
        from .parallel import make_mesh
        return make_mesh(self._device_matrix, self._alias_name, devices)

    def __repr__(self):
        return (f"Layout(device_matrix={self._device_matrix}, alias_name={self._alias_name}"
                + (f", tensor_map={self._tensor_map})" if self._tensor_map is not None else ")"))
