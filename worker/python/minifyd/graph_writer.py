# Writing graph directories: argument values, tensors and the document as graph.json holds them
# (docs/graph-format.md), and the content store's Python writer, StoreWriter, held to the same writer
# contract as C++'s (tests/common/store_writer_cases.json). graph_format.py is the reader, which every
# repro.py embeds; this module is not embedded.
import contextlib
import fcntl
import hashlib
import json
import math
import operator
import os
import re
import tempfile

import torch

from minifyd.graph_format import (  # noqa: F401
    DEVICE_NAME,
    DTYPES,
    FormatError,
    LAYOUTS,
    MEMORY_FORMATS,
    ROOT_FORMAT,
    ROOT_VERSION,
    SHA256_HEX,
    STORE_VERSION_TEXT,
    SYMINT_ARITHMETIC,
    check_store_version,
    untyped_storage,
)


def encode_value(value, node_name, where):
    """A Python argument value as JSON; node_name(node) gives a referenced fx.Node's name."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if not -2**63 <= value < 2**63:
            raise FormatError(f"{where}: int {value} does not fit in 64 bits")
        return value
    if isinstance(value, float):
        # json.dumps writes finite floats with a fraction or exponent, which keeps them apart from ints.
        if math.isnan(value):
            return {"float": "nan"}
        return value if math.isfinite(value) else {"float": "inf" if value > 0 else "-inf"}
    if isinstance(value, tuple):
        return {"tuple": [encode_value(v, node_name, f"{where}.tuple[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [encode_value(v, node_name, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, torch.fx.Node):
        return {"node": node_name(value)}
    if isinstance(value, torch.dtype):
        return {"dtype": dtype_name(value, where)}
    if isinstance(value, torch.device):
        if not DEVICE_NAME.fullmatch(str(value)):
            raise FormatError(f"{where}: device {str(value)!r} cannot be written (cpu, cuda, cuda:N or meta)")
        return {"device": str(value)}
    for tag, names, kind in (("layout", LAYOUTS, torch.layout), ("memory_format", MEMORY_FORMATS, torch.memory_format)):
        if isinstance(value, kind):
            name = str(value).replace("torch.", "", 1)
            if name not in names:
                raise FormatError(f"{where}: {tag} {name!r} cannot be written (known: {', '.join(names)})")
            return {tag: name}
    raise FormatError(f"{where}: a {type(value).__name__} value ({value!r}) cannot be written in graph.json")


def dtype_name(dtype, where):
    name = str(dtype).replace("torch.", "", 1)
    if DTYPES.get(name) != dtype:
        raise FormatError(f"{where}: dtype {dtype} cannot be written (known: {', '.join(DTYPES)})")
    return name


def target_name(target, where):
    """A call_function target as c10 names it: torch.ops.aten.add.Tensor -> 'aten::add.Tensor'."""
    if target is operator.getitem:
        return "getitem"
    for name, function in SYMINT_ARITHMETIC.items():
        if target is function:
            return name
    if isinstance(target, torch._ops.OpOverload):
        schema = target._schema
        return schema.name + ("." + schema.overload_name if schema.overload_name else "")
    raise FormatError(f"{where}: target {target!r} is not an operator overload (torch.ops.ns.op.overload), "
                      "operator.getitem or SymInt arithmetic; export an aten-level graph (make_fx)")

def storage_key(tensor):
    """What identifies the storage a tensor views: tensors with one key share their bytes."""
    storage = untyped_storage(tensor)
    return (str(tensor.device), storage.data_ptr(), storage.nbytes())


def storage_bytes(tensor):
    """The bytes of the whole storage a tensor views, as a blob holds them."""
    flat = torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(untyped_storage(tensor))
    return flat.cpu().numpy().tobytes()



def tensor_entry(tensor, storage_index, where):
    """A tensor's metadata as graph.json writes it; its bytes are storage storage_index."""
    if tensor.layout != torch.strided:
        raise FormatError(f"{where}: a {tensor.layout} tensor cannot be written (only strided tensors)")
    return {"storage": storage_index, "dtype": dtype_name(tensor.dtype, where), "shape": list(tensor.shape),
            "stride": list(tensor.stride()), "storage_offset": tensor.storage_offset(),
            "requires_grad": tensor.requires_grad}


def format_document(doc):
    """graph.json text: one storage, tensor or node per line, so diffs and reading stay easy."""
    parts = []
    for key, value in doc.items():
        if isinstance(value, list):
            body = ",\n".join("    " + json.dumps(item, allow_nan=False) for item in value)
            parts.append(f"  {json.dumps(key)}: [\n{body}\n  ]" if value else f"  {json.dumps(key)}: []")
        elif isinstance(value, dict):
            body = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in value.items())
            parts.append(f"  {json.dumps(key)}: {{\n{body}\n  }}" if value else f"  {json.dumps(key)}: {{}}")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_file_atomic(path, data, tmp_dir, sync=True):
    """Writes a unique file in tmp_dir, fsyncs it (unless the caller syncs it later, sync_file) and renames it
    onto path: readers never see a partial file."""
    fd, tmp_path = tempfile.mkstemp(dir=tmp_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.rename(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_path)
        raise


def sync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class StoreWriter:
    """Adds blobs and then one root to a store, holding store/lock shared from the first blob until the root
    is written, so a concurrent gc (which takes it exclusively) cannot delete blobs not yet named by a root.
    The blobs reach the disk together just before the root, as common/content_store.h's BlobBatch: one fsync
    each, hundreds of them for a propagation, was most of its time."""

    def __init__(self, store_dir):
        self.dir, self.tmp = store_dir, os.path.join(store_dir, "tmp")
        for sub in ("blobs", "tmp", "roots"):
            os.makedirs(os.path.join(store_dir, sub), exist_ok=True)
        if not os.path.exists(os.path.join(store_dir, "VERSION")):
            write_file_atomic(os.path.join(store_dir, "VERSION"), STORE_VERSION_TEXT.encode(), self.tmp)
        check_store_version(store_dir)
        self._lock = None
        self._unsynced = []  # every blob put since the last root, found or written: another writer's may be unsynced

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._release_lock()

    def _release_lock(self):
        if self._lock is not None:
            self._lock.close()  # closing the descriptor releases the flock
            self._lock = None

    def _hold_lock(self):
        if self._lock is None:
            self._lock = open(os.path.join(self.dir, "lock"), "a")
            fcntl.flock(self._lock, fcntl.LOCK_SH)

    def put(self, data):
        """Stores bytes once under their SHA-256; returns the hash."""
        self._hold_lock()
        digest = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.dir, "blobs", digest[:2], digest)
        if not (os.path.isfile(path) and os.path.getsize(path) == len(data)):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_file_atomic(path, data, self.tmp, sync=False)
        self._unsynced.append(path)
        return digest

    def write_root(self, name, digests):
        """Records which blobs root name needs, then releases the lock. Refuses a name outside
        [A-Za-z0-9._-]+ and what is no SHA-256 digest, as common/content_store.h's write_root does."""
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name in (".", ".."):
            raise FormatError(f"root name {name!r} must match [A-Za-z0-9._-]+")
        digests = list(digests)
        for digest in digests:
            if not (isinstance(digest, str) and SHA256_HEX.fullmatch(digest)):
                raise FormatError(f"root {name}: {digest!r} is not a SHA-256 digest")
        self._hold_lock()
        for blob in dict.fromkeys(self._unsynced):  # a blob put several times is synced once
            sync_file(blob)
        self._unsynced.clear()
        record = {"format": ROOT_FORMAT, "version": ROOT_VERSION, "blobs": list(digests)}
        path = os.path.join(self.dir, "roots", name + ".json")
        write_file_atomic(path, (json.dumps(record) + "\n").encode(), self.tmp)
        self._release_lock()
