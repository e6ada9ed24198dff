"""``CheckpointConfig`` and ``ModelCheckpoint``: save checkpoints while training, as MindSpore names them.

Files are ``{prefix}-{epoch}_{step in epoch}.ckpt`` in ``directory`` (a prefix
already used there gets ``_1``, ``_2``, ... as MindSpore does), written
atomically by :func:`cellkit.save_checkpoint`; the oldest are removed beyond
``keep_checkpoint_max``. Resume with ``load_checkpoint`` + ``load_param_into_net``
and ``Model.train(..., initial_epoch=...)``.
"""

from __future__ import annotations

import os
import time

from ...cell import Cell
from ...checkpoint import save_checkpoint
from ._callback import Callback

__all__ = ["CheckpointConfig", "ModelCheckpoint", "CheckpointManager"]

_INFO_LIST = ["epoch_num", "step_num"]


def _non_negative_int(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"For 'CheckpointConfig', the argument '{name}' must be a non-negative int, but got "
                         f"{value!r}.")
    return value


class CheckpointConfig:
    """When to save and how many to keep.

    Args:
        save_checkpoint_steps (int): save every this many steps (default 1); when set it wins over
            ``save_checkpoint_seconds``.
        save_checkpoint_seconds (int): save every this many seconds.
        keep_checkpoint_max (int): keep at most this many files (default 5); when set it wins
            over ``keep_checkpoint_per_n_minutes``.
        keep_checkpoint_per_n_minutes (int): keep one file per this many minutes.
        integrated_save, async_save: accepted (saving is always whole and synchronous).
        saved_network (Cell): save this network instead of the training network.
        append_info (list): ``"epoch_num"``, ``"step_num"`` and at most one dict of extra values.
        format (str): ``"ckpt"`` (default) or ``"safetensors"``: the file extension; the bytes are
            :func:`cellkit.save_checkpoint`'s either way.

    >>> from cellkit.train import CheckpointConfig
    >>> cfg = CheckpointConfig(save_checkpoint_steps=10, keep_checkpoint_max=3)
    >>> cfg.save_checkpoint_steps, cfg.save_checkpoint_seconds, cfg.keep_checkpoint_max
    (10, None, 3)
    """

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save=False, crc_check=False,
                 remove_redundancy=False, format="ckpt", **kwargs):
        save_checkpoint_steps = _non_negative_int("save_checkpoint_steps", save_checkpoint_steps)
        save_checkpoint_seconds = _non_negative_int("save_checkpoint_seconds", save_checkpoint_seconds)
        keep_checkpoint_max = _non_negative_int("keep_checkpoint_max", keep_checkpoint_max)
        keep_checkpoint_per_n_minutes = _non_negative_int("keep_checkpoint_per_n_minutes",
                                                          keep_checkpoint_per_n_minutes)
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise TypeError("For 'CheckpointConfig', the type of 'saved_network' must be None or Cell, but got "
                            f"{type(saved_network)}.")
        if not (save_checkpoint_steps or save_checkpoint_seconds or keep_checkpoint_max
                or keep_checkpoint_per_n_minutes):
            raise ValueError("For 'CheckpointConfig', the input arguments 'save_checkpoint_steps', "
                             "'save_checkpoint_seconds', 'keep_checkpoint_max' and 'keep_checkpoint_per_n_minutes' "
                             "can't be all None or 0.")
        if enc_key is not None:
            raise NotImplementedError("For 'CheckpointConfig', encrypted checkpoints (enc_key) are not supported: "
                                      "cellkit writes plain safetensors files.")
        if format not in ("ckpt", "safetensors"):
            raise ValueError(f"For 'CheckpointConfig', 'format' must be 'ckpt' or 'safetensors', but got {format!r}.")
        self.exception_save = exception_save
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        if self._save_checkpoint_steps and self._save_checkpoint_steps > 0:
            self._save_checkpoint_seconds = None
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if self._keep_checkpoint_max and self._keep_checkpoint_max > 0:
            self._keep_checkpoint_per_n_minutes = None
        elif not self._keep_checkpoint_per_n_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = bool(integrated_save)
        self._async_save = async_save
        self._saved_network = saved_network
        self._append_dict = self._handle_append_info(append_info)
        self._enc_key, self._enc_mode, self._crc_check = enc_key, enc_mode, crc_check
        self._format = format
        self.remove_redundancy = remove_redundancy

    save_checkpoint_steps = property(lambda self: self._save_checkpoint_steps)
    save_checkpoint_seconds = property(lambda self: self._save_checkpoint_seconds)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_per_n_minutes = property(lambda self: self._keep_checkpoint_per_n_minutes)
    integrated_save = property(lambda self: self._integrated_save)
    async_save = property(lambda self: self._async_save)
    saved_network = property(lambda self: self._saved_network)
    enc_key = property(lambda self: self._enc_key)
    enc_mode = property(lambda self: self._enc_mode)
    crc_check = property(lambda self: self._crc_check)
    format = property(lambda self: self._format)
    append_dict = property(lambda self: self._append_dict)

    def get_checkpoint_policy(self):
        """The five policy values as a dict."""
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}

    @staticmethod
    def _handle_append_info(append_info):
        if append_info is None or append_info == []:
            return None
        if not isinstance(append_info, list):
            raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' must be list,but got "
                            f"{type(append_info)}.")
        out = {k: 0 for k in _INFO_LIST if k in append_info}
        dicts = 0
        for element in append_info:
            if not isinstance(element, (str, dict)):
                raise TypeError("For 'CheckpointConfig', the type of 'append_info' element must be str or dict,but "
                                f"got {type(element)}.")
            if isinstance(element, str) and element not in _INFO_LIST:
                raise ValueError(f"For 'CheckpointConfig', the value of element in the argument 'append_info' must "
                                 f"be in {_INFO_LIST}, but got {element}.")
            if isinstance(element, dict):
                dicts += 1
                if dicts > 1:
                    raise TypeError("For 'CheckpointConfig', the element of 'append_info' must has only one dict")
                for key, value in element.items():
                    if not isinstance(key, str):
                        raise TypeError("For 'CheckpointConfig', the key type of the dict 'append_info' must be "
                                        f"string, but got {type(key)}")
                    out[key] = value
        return out


class CheckpointManager:
    """The checkpoint files of one prefix in a directory."""

    def __init__(self, format="ckpt"):
        self._ckpoint_filelist = []
        self._format = format

    @property
    def ckpoint_filelist(self):
        return self._ckpoint_filelist

    @property
    def ckpoint_num(self):
        return len(self._ckpoint_filelist)

    def update_ckpoint_filelist(self, directory, prefix):
        """Find ``prefix-<digits and _>.<format>`` files in ``directory``."""
        ext = f".{self._format}"
        self._ckpoint_filelist = [
            os.path.join(directory, f) for f in os.listdir(directory)
            if os.path.splitext(f)[-1] == ext and f.startswith(prefix + "-")
            and not any(c.isalpha() for c in f[len(prefix):-len(ext)])]

    def remove_ckpoint_file(self, file_name):
        try:
            os.remove(file_name)
            self._ckpoint_filelist.remove(file_name)
        except (OSError, ValueError):
            pass

    def remove_oldest_ckpoint_file(self):
        self.remove_ckpoint_file(sorted(self._ckpoint_filelist, key=os.path.getmtime)[0])

    def keep_one_ckpoint_per_minutes(self, minutes, cur_time):
        """Of the files younger than ``minutes``, keep only the oldest."""
        recent = [f for f in self._ckpoint_filelist if cur_time - os.path.getmtime(f) < 60 * minutes]
        oldest = min(recent, key=os.path.getmtime) if recent else ""
        for f in recent:
            if f != oldest:
                self.remove_ckpoint_file(f)


def _unique_prefix(directory, prefix):
    """MindSpore's rule: a prefix already used in ``directory`` becomes ``prefix_N``."""
    suffix = 0
    n = len(prefix)
    for filename in os.listdir(directory):
        if os.path.splitext(filename)[-1] not in (".ckpt", ".safetensors") or filename.endswith("_breakpoint.ckpt"):
            continue
        if filename.startswith(prefix) and len(filename) > n and not filename[n].isalpha():
            index = filename[n:].find("-")
            if index == 0:
                suffix = max(suffix, 1)
            elif index != -1:
                num = filename[n + 1:n + index]
                if num.isdigit():
                    suffix = max(suffix, int(num) + 1)
    return f"{prefix}_{suffix}" if suffix else prefix


class ModelCheckpoint(Callback):
    """Save the training network's Parameters by ``config`` (a :class:`CheckpointConfig`) after
    steps and at the end of training; ``latest_ckpt_file_name`` is the last file written.

    Args:
        prefix (str or callable): the file name prefix (default ``"CKP"``), or a function of
            ``cb_params`` returning the whole file name without extension.
        directory (str or callable): where (default: the current directory); created if missing.
        config (CheckpointConfig): the policy (default ``CheckpointConfig()``).
    """

    def __init__(self, prefix="CKP", directory=None, config=None):
        super().__init__()
        self._latest_ckpt_file_name = ""
        self._last_time = time.time()
        self._last_time_for_keep = time.time()
        self._last_triggered_step = 0
        self._prefix_func = prefix if callable(prefix) else None
        self._directory_func = directory if callable(directory) else None
        if not callable(prefix) and (not isinstance(prefix, str) or "/" in prefix):
            raise ValueError("For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is invalid, it "
                             f"must be callable or string that does not contain '/', but got {prefix}.")
        self._prefix = prefix
        if directory is None:
            self._directory = os.getcwd()
        elif not callable(directory):
            os.makedirs(directory, exist_ok=True)
            self._directory = os.path.realpath(directory)
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError("For 'ModelCheckpoint', the type of argument 'config' should be 'CheckpointConfig', but "
                            f"got {type(config)}.")
        self._config = config
        self._manager = CheckpointManager(config.format)
        if not callable(directory) and not callable(prefix):
            self._prefix = _unique_prefix(self._directory, self._prefix)
        self._append_dict = dict(config.append_dict or {})
        self._append_epoch_num = self._append_dict.get("epoch_num", 0)
        self._append_step_num = self._append_dict.get("step_num", 0)

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if self._prefix_func:
            self._prefix = self._prefix_func(cb_params)
            if not isinstance(self._prefix, str) or "/" in self._prefix:
                raise ValueError("For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is callable, "
                                 f"it must return a string that does not contain '/', but got {self._prefix}.")
        if self._directory_func:
            self._directory = self._directory_func(cb_params)
            os.makedirs(self._directory, exist_ok=True)
        self._save_ckpt(cb_params)

    def end(self, run_context):
        self._save_ckpt(run_context.original_args(), force_to_save=True)

    def _check_save_ckpt(self, cb_params, force_to_save):
        cfg = self._config
        if cfg.save_checkpoint_steps and cfg.save_checkpoint_steps > 0:
            return (cb_params.cur_step_num >= self._last_triggered_step + cfg.save_checkpoint_steps
                    or force_to_save is True)
        if cfg.save_checkpoint_seconds and cfg.save_checkpoint_seconds > 0:
            now = time.time()
            if now - self._last_time > cfg.save_checkpoint_seconds or force_to_save:
                self._last_time = now
                return True
        return False

    def _save_ckpt(self, cb_params, force_to_save=False):
        if cb_params.cur_step_num == self._last_triggered_step:
            return
        if not self._check_save_ckpt(cb_params, force_to_save):
            return
        cfg = self._config
        step_in_epoch = int((cb_params.cur_step_num - 1) % cb_params.batch_num + 1)
        if self._prefix_func:
            name = f"{self._prefix}.{cfg.format}"
        else:
            name = f"{self._prefix}-{cb_params.cur_epoch_num}_{step_in_epoch}.{cfg.format}"
        self._manager.update_ckpoint_filelist(self._directory, self._prefix)
        if cfg.keep_checkpoint_max and 0 < cfg.keep_checkpoint_max <= self._manager.ckpoint_num:
            self._manager.remove_oldest_ckpoint_file()
        elif cfg.keep_checkpoint_per_n_minutes and cfg.keep_checkpoint_per_n_minutes > 0:
            now = time.time()
            if now - self._last_time_for_keep < cfg.keep_checkpoint_per_n_minutes * 60:
                self._manager.keep_one_ckpoint_per_minutes(cfg.keep_checkpoint_per_n_minutes, now)
        path = os.path.join(self._directory, name)
        self._last_time_for_keep = time.time()
        self._last_triggered_step = cb_params.cur_step_num
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = self._append_epoch_num + cb_params.cur_epoch_num
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = self._append_step_num + cb_params.cur_step_num
        network = cfg.saved_network if cfg.saved_network is not None else cb_params.train_network
        save_checkpoint(network, path, append_dict=self._append_dict or None)
        self._latest_ckpt_file_name = path

    @property
    def latest_ckpt_file_name(self):
        """The path of the last checkpoint written."""
        return self._latest_ckpt_file_name
