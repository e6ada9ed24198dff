"""MindSpore's kernel registration builders (``mindspore.ops.op_info_register``): ``CustomRegOp`` and ``DataType``.

They describe a custom kernel's inputs, outputs, attributes and dtype/format pairs for
MindSpore's backends. cellkit's ``Custom`` runs Python functions through
``jax.pure_callback`` and needs no registration, so the description is recorded and
returned by ``get_op_info()`` as MindSpore returns it, and ``Custom(reg_info=...)``
accepts it.

>>> from cellkit.ops import CustomRegOp, DataType
>>> info = CustomRegOp("add").input(0, "x").output(0, "y").dtype_format(
...     DataType.F32_Default, DataType.F32_Default).target("CPU").get_op_info()
>>> info["inputs"], info["dtype_format"]
([{'index': 0, 'name': 'x', 'paramType': 'required'}], [(('float32', 'DefaultFormat'), ('float32', 'DefaultFormat'))])
"""

from __future__ import annotations

__all__ = ["CustomRegOp", "DataType"]

_DTYPES = {"None": "", "BOOL": "bool", "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
           "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64", "F16": "float16",
           "F32": "float32", "F64": "float64", "BF16": "bfloat16", "C64": "complex64", "C128": "complex128"}
_FORMATS = {"None": "", "Default": "DefaultFormat", "Default_List": "DefaultFormat",
            "Default_Tuple": "DefaultFormat", "5HD": "NC1HWC0", "NC1HWC0": "NC1HWC0",
            "C1HWNCoC0": "C1HWNCoC0", "ChannelLast": "ChannelLast", "DHWCN": "DHWCN",
            "FRACTAL_Z_3D": "FRACTAL_Z_3D", "FracNZ": "FRACTAL_NZ", "FracZ": "FRACTAL_Z",
            "FracZNLSTM": "FRACTAL_ZN_LSTM", "FracZNRNN": "FRACTAL_ZN_RNN", "HWCN": "HWCN",
            "NCDHW": "NCDHW", "NCHW": "NCHW", "NDC1HWC0": "NDC1HWC0", "NDHWC": "NDHWC",
            "ND_RNNBIAS": "ND_RNN_BIAS", "NHWC": "NHWC"}


class DataType:
    """``(dtype, format)`` pairs named as MindSpore names them: ``DataType.F32_Default``,
    ``DataType.I32_NCHW``, ``DataType.None_None`` ..."""


for _p, _d in _DTYPES.items():
    for _s, _f in _FORMATS.items():
        _kind = {"Default_List": ("list",), "Default_Tuple": ("tuple",)}.get(_s, ())
        setattr(DataType, f"{_p}_{_s}", (_d, _f) + _kind)


class CustomRegOp:
    """A chainable description of a custom kernel; ``get_op_info()`` returns it as a dict."""

    def __init__(self, op_name="Custom"):
        self.op_name = op_name
        self.inputs, self.outputs, self.attr_, self.dtype_format_ = [], [], [], []
        self.fusion_type, self.target_ = "", None

    @staticmethod
    def _io(index, name, param_type, kwargs):
        entry = {k: v for k, v in (("index", index), ("name", name)) if v is not None}
        entry["paramType"] = param_type
        entry.update(kwargs)
        return entry

    def input(self, index=None, name=None, param_type="required", **kwargs):  # noqa: A003
        self.inputs.append(self._io(index, name, param_type, kwargs))
        return self

    def output(self, index=None, name=None, param_type="required", **kwargs):
        self.outputs.append(self._io(index, name, param_type, kwargs))
        return self

    def attr(self, name=None, param_type=None, value_type=None, default_value=None, **kwargs):
        entry = {k: v for k, v in (("name", name), ("paramType", param_type), ("type", value_type),
                                   ("defaultValue", default_value)) if v is not None}
        entry.update(kwargs)
        self.attr_.append(entry)
        return self

    def dtype_format(self, *args):
        for pair in args:
            if not (isinstance(pair, tuple) and len(pair) in (2, 3) and all(isinstance(s, str) for s in pair)):
                raise TypeError(f"CustomRegOp.dtype_format: each argument must be a DataType pair "
                                f"(dtype, format), got {pair!r}")
        self.dtype_format_.append(tuple(args))
        return self

    def target(self, target=None):
        if target is not None and target not in ("Ascend", "GPU", "CPU"):
            raise ValueError(f"CustomRegOp.target: target must be 'Ascend', 'GPU' or 'CPU', got {target!r}")
        self.target_ = target
        return self

    def get_op_info(self):
        info = {"op_name": self.op_name, "inputs": self.inputs, "outputs": self.outputs, "attr": self.attr_,
                "fusion_type": self.fusion_type, "dtype_format": self.dtype_format_}
        if self.target_ is not None:
            info["target"] = self.target_
        return info
