# Writes DIR/checkpoints/N.py as PyTorch's minifier writes a checkpoint (after_aot's
# dump_compiler_graph_state: save_graph_repro with save_dir, the inputs in its content store), for a
# small graph whose inputs view one storage twice, at an offset, and in int64; prints
# {"repro": its path, "sha256": [the SHA-256 of each input storage's bytes]}. Run by PyTorch 2.x.
#   python3 pytorch_checkpoint.py DIR
import hashlib
import json
import os
import sys

import torch
from torch._dynamo.repro.after_aot import save_graph_repro
from torch.fx.experimental.proxy_tensor import make_fx


def graph(x, x_rows, w, index):
    return (torch.relu(x) + w, x_rows * 2, index + 1)


def storage_sha256(tensor):
    data = torch.empty(0, dtype=torch.uint8).set_(tensor.untyped_storage())
    return hashlib.sha256(data.numpy().tobytes()).hexdigest()


def main():
    torch.manual_seed(0)
    x = torch.randn(8, 16)
    inputs = [x, x[1:3], torch.randn(20, 16)[2:10], torch.arange(4)]
    gm = make_fx(graph)(*inputs)
    subdir = os.path.join(sys.argv[1], "checkpoints")
    os.makedirs(subdir, exist_ok=True)
    path = os.path.join(subdir, f"{len(gm.graph.nodes)}.py")
    with open(path, "w") as fd:
        save_graph_repro(fd, gm, inputs, "inductor", save_dir=subdir)
    print(json.dumps({"repro": path, "sha256": sorted({storage_sha256(t) for t in inputs})}))


if __name__ == "__main__":
    main()
