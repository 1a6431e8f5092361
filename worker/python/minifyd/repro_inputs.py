# The inputs of a repro file, as after_aot makes them: PyTorch 2.x's load_args(reader) through its
# InputReader (a storage from the content store, save_dir/storages/HASH, where the file gives a hash;
# random data where it gives none or there is no store), 2.0's `args` (random data: 2.0 wrote shapes
# and strides, never values). Each with how many storages hold random data.
import os

import torch
from torch._dynamo.debug_utils import InputReader

from minifyd import graph_writer as gw
from minifyd.repro_errors import USER_CODE_ERRORS, ReproFileError, failure, where


class MissingStorage(Exception):
    """A storage whose hash the file gives is not in its content store."""


class _StoreReader(InputReader):
    """InputReader, strict where PyTorch's fills in random data without a word: a hash missing from a
    store that is there is an error (the store is incomplete, the values would not be the user's)."""

    def __init__(self, save_dir, load_args_globals):
        self.store_dir = save_dir if save_dir is not None and os.path.isdir(save_dir) else None
        super().__init__(self.store_dir)
        self.random = 0
        self.symbols = load_args_globals
        self.symints = 0

    def symint(self, val):
        """A SymInt input. PyTorch 2.x's load_args sizes later storages and tensors with shape symbols
        (`reader.storage(None, 4*s1*(s0 - 1) + 4*s1)`) it never defines, so its own run_repro fails with
        NameError; the k-th symint it reads is symbol s<k> (the generator numbers the graph's free
        symbols in input order), bound in load_args's globals, which it looks up as it runs."""
        self.symbols[f"s{self.symints}"] = val
        self.symints += 1
        return super().symint(val)

    def storage(self, storage_hash, nbytes, **kwargs):
        if self.store_dir is not None and storage_hash is not None:
            blob = os.path.join(self.store_dir, "storages", storage_hash)
            if not os.path.isfile(blob):
                raise MissingStorage(f"storage {storage_hash}: not in the content store: {blob} does not exist")
        else:
            self.random += 1
        return super().storage(storage_hash, nbytes, **kwargs)

    def const(self, name):
        """An input the compiled graph filtered out: after_aot writes reader.const for a None input,
        which PyTorch's own InputReader cannot read."""
        self.args.append(None)


def from_load_args(path, load_args, save_dir):
    """(inputs, random storages) of a PyTorch 2.x file; save_dir as run_repro's, None where it gives none."""
    reader = _StoreReader(save_dir, load_args.__globals__)
    try:
        load_args(reader)
    except MissingStorage as error:
        raise ReproFileError(f"{where(path, error)}: {error}") from None
    except USER_CODE_ERRORS as error:
        raise failure(path, "load_args(reader) failed", error) from None
    return reader.args, reader.random


def from_args(path, args):
    """(inputs, random storages) of a 2.0 file: its `args`, each tensor's storage random."""
    if not (isinstance(args, list) and all(isinstance(arg, torch.Tensor) for arg in args)):
        raise ReproFileError(f"{path}: its `args` is not a list of tensors before `mod = make_fx(Repro(), ...)(*args)`")
    return args, len({gw.storage_key(arg) for arg in args})
