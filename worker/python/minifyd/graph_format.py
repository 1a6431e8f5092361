# Reading graph.json (version 1) and the content store (docs/graph-format.md): the one Python reader,
# which every repro.py embeds; minifyd/graph_writer.py writes them.
import hashlib
import json
import math
import operator
import os
import pathlib
import re
import stat

import torch

GRAPH_FORMAT = "minifyd.graph"
GRAPH_VERSION = 1
STORE_VERSION_TEXT = "minifyd-store 1\n"
ROOT_FORMAT = "minifyd.store-root"
ROOT_VERSION = 1

DTYPES = {name: getattr(torch, name) for name in (
    "bool uint8 int8 int16 int32 int64 float16 bfloat16 float32 float64 complex32 complex64 complex128").split()}
LAYOUTS = "strided sparse_coo sparse_csr sparse_csc sparse_bsr sparse_bsc _mkldnn".split()
MEMORY_FORMATS = "contiguous_format preserve_format channels_last channels_last_3d".split()
DEVICE_NAME = re.compile(r"cpu|cuda|cuda:[0-9]+|meta")
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
OP_TARGET = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?")
NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
# The int arithmetic a graph traced with dynamic shapes (make_fx, tracing_mode="symbolic") does on its
# SymInts, as FX records it: Python's operator functions.
SYMINT_ARITHMETIC = {f"operator.{name}": getattr(operator, name)
                     for name in ("add", "sub", "mul", "floordiv", "mod", "neg")}
# What a graph may call (docs/security.md): minifyd/graph_targets.json, which the C++ side compiles in
# and every repro.py carries in place of this line.
GRAPH_TARGETS_JSON = pathlib.Path(__file__).resolve().with_name("graph_targets.json").read_text()
GRAPH_TARGETS = json.loads(GRAPH_TARGETS_JSON)
IDENTIFIER = re.compile(GRAPH_TARGETS["names"]["identifier"], re.ASCII)


class FormatError(Exception):
    """A document, a blob or a value that the format cannot hold; the message says where."""


def untyped_storage(tensor):
    # Tensor.untyped_storage() is PyTorch 2.x; 1.13 spells it storage().untyped().
    if hasattr(tensor, "untyped_storage"):
        return tensor.untyped_storage()
    return tensor.storage().untyped()


def decode_value(raw, resolve, where):
    """A JSON argument value as its Python value; resolve(name, where) turns a node name into a node."""
    if raw is None or isinstance(raw, (bool, int, float, str)):
        return raw
    if isinstance(raw, list):
        return [decode_value(item, resolve, f"{where}[{i}]") for i, item in enumerate(raw)]
    if not isinstance(raw, dict) or len(raw) != 1:
        raise FormatError(f"{where}: an encoded value is an object with exactly one key, got {raw!r}")
    (tag, inner), = raw.items()
    if tag == "tuple":
        if not isinstance(inner, list):
            raise FormatError(f"{where}: 'tuple' needs an array, got {inner!r}")
        return tuple(decode_value(item, resolve, f"{where}.tuple[{i}]") for i, item in enumerate(inner))
    if not isinstance(inner, str):
        raise FormatError(f"{where}: {tag!r} needs a string, got {inner!r}")
    if tag == "node":
        return resolve(inner, where)
    tables = {"float": NON_FINITE, "dtype": DTYPES, "layout": LAYOUTS, "memory_format": MEMORY_FORMATS}
    if tag in tables:
        if inner not in tables[tag]:
            raise FormatError(f"{where}: unknown {tag} {inner!r} (known: {', '.join(tables[tag])})")
        return tables[tag][inner] if isinstance(tables[tag], dict) else getattr(torch, inner)
    if tag == "device":
        if not DEVICE_NAME.fullmatch(inner):
            raise FormatError(f"{where}: unknown device {inner!r} (expected cpu, cuda, cuda:N or meta)")
        return torch.device(inner)
    raise FormatError(f"{where}: unknown value encoding {tag!r}")


def name_refusal(name):
    """Why a graph may not name a node or a keyword argument `name`, or None when it may (the rule's names,
    docs/security.md): FX writes these names into Python unquoted, so anything but an identifier is code."""
    rule = GRAPH_TARGETS["names"]
    if not isinstance(name, str):
        return f"{name!r} is not a string"
    if len(name) > rule["max_length"]:
        return f"{name[:80]!r}... is longer than {rule['max_length']} characters"
    if not IDENTIFIER.fullmatch(name):
        return f"{name!r} is not an identifier ({rule['identifier']})"
    if name in rule["keywords"]:
        return f"{name!r} is a Python keyword"
    prefix, _, suffix = rule["special"].partition("*")
    if len(name) >= len(prefix) + len(suffix) and name.startswith(prefix) and name.endswith(suffix):
        return f"{name!r} is a special name of Python's ({rule['special']})"
    return None


def attribute_path_refusal(path):
    """name_refusal for a constant's name (a get_attr target): a dotted path whose segments are names."""
    if not isinstance(path, str):
        return f"{path!r} is not a string"
    if len(path) > GRAPH_TARGETS["names"]["max_length"]:
        return name_refusal(path)
    for segment in path.split("."):
        refused = name_refusal(segment)
        if refused:
            return f"{path!r}: a segment {refused} (a constant's name is a dotted path of identifiers)"
    return None


def operator_refusal(name, namespaces=()):
    """Why a graph may not call the operator 'ns::op[.overload]', or None when the rule lets it; namespaces:
    those the job's operator libraries add to the rule's (--op-library)."""
    op = name.split(".", 1)[0]
    namespace = op.split("::", 1)[0]
    if op in GRAPH_TARGETS["refused"]:
        return f"target {name!r} is refused: {GRAPH_TARGETS['refused'][op]} (docs/security.md)"
    if namespace in GRAPH_TARGETS["namespaces"] or op in GRAPH_TARGETS["operators"] or namespace in namespaces:
        return None
    return (f"target {name!r} is refused: a graph calls operators of the namespaces "
            f"{', '.join(GRAPH_TARGETS['namespaces'])} only, not of {namespace!r}, unless its job names a library "
            f"of them (--op-library {namespace}=PATH.so; docs/security.md)")


def library_namespace_refusal(namespace):
    """Why an operator library may not add `namespace`, or None when it may: an identifier, not the rule's own."""
    refused = name_refusal(namespace)
    if refused:
        return f"the namespace {refused}"
    if namespace in GRAPH_TARGETS["namespaces"]:
        return (f"the namespace {namespace!r} is PyTorch's own ({', '.join(GRAPH_TARGETS['namespaces'])}): "
                "an operator library adds a namespace of its own")
    return None


def resolve_target(name, where, namespaces=()):
    """A call_function target as the callable: 'aten::add.Tensor' -> torch.ops.aten.add.Tensor.

    Only what the rule lets a graph call, and only operators the dispatcher has: torch.ops also
    resolves TorchScript builtins (aten::save) and attributes of its own objects, which a graph
    document must never reach."""
    if name == "getitem":
        return operator.getitem
    if name in SYMINT_ARITHMETIC:
        return SYMINT_ARITHMETIC[name]
    match = OP_TARGET.fullmatch(name) if isinstance(name, str) else None
    if not match:
        raise FormatError(f"{where}: target {name!r} is neither 'getitem', 'namespace::name[.overload]' nor "
                          f"SymInt arithmetic ({', '.join(SYMINT_ARITHMETIC)})")
    refusal = operator_refusal(name, namespaces)
    if refusal:
        raise FormatError(f"{where}: {refusal}")
    namespace, op, overload = match.groups()
    qualified = f"{namespace}::{op}" + (f".{overload}" if overload else "")
    try:
        registered = torch._C._dispatch_has_kernel(qualified)
        resolved = registered and getattr(getattr(getattr(torch.ops, namespace), op), overload or "default")
    except (AttributeError, RuntimeError) as error:
        raise FormatError(f"{where}: target {name!r} is not an operator this PyTorch knows ({error})") from None
    if not registered:
        raise FormatError(f"{where}: target {name!r} is not an operator this PyTorch's dispatcher knows")
    if not isinstance(resolved, torch._ops.OpOverload):
        raise FormatError(f"{where}: target {name!r} is not an operator overload")
    return resolved


def _open_in_store(store_dir, names, what):
    """The descriptor of store_dir/names[0]/..., opened name by name with O_NOFOLLOW (no link planted in the
    store is followed) and, at the end, O_NONBLOCK (a FIFO never blocks the open); the C++ store's
    open_regular_under does the same. FileNotFoundError when a name is missing, FormatError otherwise."""
    fd = os.open(store_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, name in enumerate(names):
            last = depth == len(names) - 1
            flags = (os.O_RDONLY | os.O_NONBLOCK) if last else (os.O_RDONLY | os.O_DIRECTORY)
            try:
                opened = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                raise
            except OSError as error:
                path = os.path.join(store_dir, *names[:depth + 1])
                if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise FormatError(f"{what}: {path} is a symbolic link, which is not followed here") from None
                raise FormatError(f"{what}: {path}: {error.strerror}") from None
            os.close(fd)
            fd = opened
        opened, fd = fd, -1
        return opened
    finally:
        if fd >= 0:
            os.close(fd)


def _read_in_store(store_dir, names, what, nbytes=None, most=None):
    """The bytes of store_dir/names..., opened as _open_in_store does: only a regular file, and with nbytes
    only one of exactly that size, with most only one of at most that size, refused before a byte is read
    otherwise (a FIFO, /dev/zero behind a link, a sparse 8 GiB file where the document says 128 bytes)."""
    path = os.path.join(store_dir, *names)
    with os.fdopen(_open_in_store(store_dir, names, what), "rb", buffering=0) as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FormatError(f"{what}: {path} is not a regular file")
        if nbytes is not None and info.st_size != nbytes:
            raise FormatError(f"{what}: {path}: holds {info.st_size} bytes, expected {nbytes}")
        if most is not None and info.st_size > most:
            raise FormatError(f"{what}: {path}: holds {info.st_size} bytes, more than its {most}")
        data = bytearray()
        while len(data) < info.st_size:
            chunk = f.read(info.st_size - len(data))
            if not chunk:
                break
            data += chunk
    return bytes(data)


def read_blob(store_dir, digest, nbytes=None):
    """The bytes of one blob, verified against its name, read as _read_in_store reads: never through a link,
    never more than its size, and with nbytes only a blob of that size."""
    try:
        data = _read_in_store(store_dir, ("blobs", digest[:2], digest), f"blob {digest}", nbytes=nbytes)
    except FileNotFoundError:
        raise FormatError(f"blob {digest}: missing from the store at {store_dir}") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise FormatError(f"blob {digest}: corrupted: its {len(data)} bytes hash to something else")
    return data


def check_store_version(store_dir):
    try:
        text = _read_in_store(store_dir, ("VERSION",), "the content store", most=len(STORE_VERSION_TEXT) + 64)
    except FileNotFoundError:
        raise FormatError(f"{store_dir} is not a minifyd content store (it has no VERSION file)") from None
    if text != STORE_VERSION_TEXT.encode():
        raise FormatError(f"{store_dir}: store format {text.decode(errors='replace').strip()!r} is not supported "
                          "(expected 'minifyd-store 1')")


def fill_storage(fill, nbytes):
    """The bytes of a filled storage (docs/graph-format.md "Filled storages") as a flat uint8 CPU tensor:
    every element, as fill["dtype"], 0, 1, or drawn from a CPU generator seeded with fill["seed"], uniform
    in [low, high) when floating, an integer in [low, high] otherwise. The C++ worker's worker/storage_fill.cpp
    draws the same values; repro.py files in after_aot's shape carry this function's source."""
    dtype = getattr(torch, fill["dtype"])
    count = nbytes // torch.empty((), dtype=dtype).element_size()
    if fill["kind"] == "zeros":
        elements = torch.zeros(count, dtype=dtype)
    elif fill["kind"] == "ones":
        elements = torch.ones(count, dtype=dtype)
    else:
        generator = torch.Generator().manual_seed(fill["seed"])
        if dtype.is_floating_point:
            elements = torch.rand(count, generator=generator, dtype=torch.float64)
            elements = elements.mul_(fill["high"] - fill["low"]).add_(fill["low"]).to(dtype)
        else:
            elements = torch.randint(int(fill["low"]), int(fill["high"]) + 1, (count,), generator=generator,
                                     dtype=torch.int64).to(dtype)
    return torch.empty(0, dtype=torch.uint8).set_(untyped_storage(elements), 0, (nbytes,), (1,))


def _load_storage(store_dir, entry, where, read):
    if "fill" in entry:
        fill = entry["fill"]
        if not isinstance(fill, dict) or fill.get("kind") not in ("zeros", "ones", "random") \
                or fill.get("dtype") not in DTYPES:
            raise FormatError(f"{where}: fill: {fill!r} is not a fill (kind zeros, ones or random, and a dtype)")
        return fill_storage(fill, entry["nbytes"]).to(entry.get("device", "cpu"))
    digest = entry.get("hash")
    if not isinstance(digest, str) or not SHA256_HEX.fullmatch(digest):
        raise FormatError(f"{where}: hash: {digest!r} is not a SHA-256 digest (64 lowercase hex digits)")
    data = read(store_dir, digest, entry["nbytes"])
    if len(data) != entry["nbytes"]:
        raise FormatError(f"{where}: blob {digest} holds {len(data)} bytes, expected {entry['nbytes']}")
    # frombuffer refuses an empty buffer; bytearray keeps the tensor's memory writable.
    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
    return flat.to(entry.get("device", "cpu"))


def strided_reach(shape, stride, offset=0):
    """How many elements of its storage a tensor of this shape, stride and storage offset reaches: its
    last element's index plus one (every dimension's last step adds up), none for an empty tensor."""
    return 0 if 0 in shape else offset + sum((n - 1) * s for n, s in zip(shape, stride)) + 1


def _make_tensor(flats, entry, where):
    """A typed view (set_ with shape, stride and offset) of one loaded storage, so views stay views."""
    index, dtype_name = entry.get("storage"), entry.get("dtype")
    if not isinstance(index, int) or not 0 <= index < len(flats):
        raise FormatError(f"{where}: storage: {index!r} is not an index into storages ({len(flats)} of them)")
    if dtype_name not in DTYPES:
        raise FormatError(f"{where}: dtype: unknown dtype {dtype_name!r} (known: {', '.join(DTYPES)})")
    dtype, shape, stride = DTYPES[dtype_name], entry["shape"], entry["stride"]
    offset = entry.get("storage_offset", 0)
    if len(shape) != len(stride):
        raise FormatError(f"{where}: shape {shape} and stride {stride} differ in length")
    itemsize = torch.empty((), dtype=dtype).element_size()
    reach = strided_reach(shape, stride, offset) * itemsize
    flat = flats[index]
    if reach > flat.numel():
        raise FormatError(f"{where}: tensor reaches byte {reach} of storage {index}, which has {flat.numel()} bytes "
                          f"(shape {shape}, stride {stride}, storage_offset {offset}, {dtype_name})")
    tensor = torch.empty(0, dtype=dtype, device=flat.device).set_(untyped_storage(flat), offset, shape, stride)
    return tensor.requires_grad_(entry.get("requires_grad", False))


def _make_input(flats, entry, where):
    """A graph input: a tensor, or the int of a SymInt input ({"symint": 8})."""
    if isinstance(entry, dict) and "symint" in entry:
        if not isinstance(entry["symint"], int) or isinstance(entry["symint"], bool):
            raise FormatError(f"{where}: symint: {entry['symint']!r} is not an int")
        return entry["symint"]
    return _make_tensor(flats, entry, where)


def load_graph(graph_dir):
    """DIR/graph.json and DIR/store as (torch.fx.GraphModule, list of inputs: tensors, ints for SymInts)."""
    return load_graph_and_document(graph_dir)[:2]


def load_graph_and_document(graph_dir, namespaces=()):
    """load_graph's GraphModule and inputs, and the graph.json document they were built from; namespaces:
    as build_graph's."""
    path = os.path.join(graph_dir, "graph.json")
    with open(path) as f:
        doc = json.load(f)
    return (*build_graph(doc, os.path.join(graph_dir, "store"), path, namespaces=namespaces), doc)


def build_graph(doc, store_dir, path, read=read_blob, namespaces=()):
    """A graph document whose blobs are in store_dir as (torch.fx.GraphModule, list of inputs);
    path names the document in errors; read(store_dir, digest) gives a blob's verified bytes; namespaces:
    those the job's operator libraries add to the rule's."""
    if not isinstance(doc, dict) or doc.get("format") != GRAPH_FORMAT or doc.get("version") != GRAPH_VERSION:
        found = (doc.get("format"), doc.get("version")) if isinstance(doc, dict) else (type(doc).__name__, None)
        raise FormatError(f"{path}: not a {GRAPH_FORMAT} version {GRAPH_VERSION} document "
                          f"(format {found[0]!r}, version {found[1]!r})")
    check_store_version(store_dir)
    flats = [_load_storage(store_dir, s, f"{path}: storages[{i}]", read) for i, s in enumerate(doc["storages"])]
    inputs = [_make_input(flats, t, f"{path}: inputs[{i}]") for i, t in enumerate(doc["inputs"])]
    for name in doc.get("constants", {}):
        refused = attribute_path_refusal(name)
        if refused:
            raise FormatError(f"{path}: constants: the name {refused}")
    constants = {name: _make_tensor(flats, t, f"{path}: constants[{name!r}]")
                 for name, t in doc.get("constants", {}).items()}

    graph, nodes, placeholders = torch.fx.Graph(), {}, 0

    def resolve(name, where):
        if name not in nodes:
            raise FormatError(f"{where}: reference to unknown or later node {name!r}")
        return nodes[name]

    for i, raw in enumerate(doc["nodes"]):
        name, op = raw.get("name"), raw.get("op")
        where = f"{path}: node {name!r} (nodes[{i}])"
        refused = name_refusal(name) or (f"{name!r} is taken by an earlier node" if name in nodes else None)
        if refused:
            raise FormatError(f"{where}: name: {refused}")
        for key in raw.get("kwargs", {}):
            refused = name_refusal(key)
            if refused:
                raise FormatError(f"{where}: kwargs: the key {refused}")
        args = tuple(decode_value(a, resolve, f"{where}: args[{j}]") for j, a in enumerate(raw.get("args", [])))
        kwargs = {k: decode_value(v, resolve, f"{where}: kwargs.{k}") for k, v in raw.get("kwargs", {}).items()}
        if op == "placeholder":
            placeholders += 1
            target = name
        elif op == "get_attr":
            target = raw.get("target")
            refused = attribute_path_refusal(target)
            if refused:
                raise FormatError(f"{where}: target: {refused}")
            if target not in constants:
                raise FormatError(f"{where}: target: {target!r} is not in constants")
        elif op == "call_function":
            target = resolve_target(raw.get("target"), f"{where}: target", namespaces)
        elif op == "output":
            if len(args) != 1 or i != len(doc["nodes"]) - 1:
                raise FormatError(f"{where}: output must be the last node and have exactly one argument")
            target = "output"
        else:
            raise FormatError(f"{where}: op: unknown op kind {op!r} "
                              "(expected placeholder, get_attr, call_function or output)")
        nodes[name] = graph.create_node(op, target, args, kwargs, name=name)
    if placeholders != len(inputs):
        raise FormatError(f"{path}: inputs: {len(inputs)} inputs for {placeholders} placeholder nodes")
    graph.lint()
    # A dict root lets GraphModule place each constant at its (possibly dotted) get_attr target.
    return torch.fx.GraphModule(constants, graph), inputs


# ---- end of the loader: every repro.py (minifyd/repro_template.py) embeds everything above this line ----
