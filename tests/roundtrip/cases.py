# The round-trip cases: each make() returns (fn_or_module, example_inputs) like an export_fx MODULE.py.
import importlib.util
import os

import torch

INF, NAN = float("inf"), float("nan")
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "examples")


def resnet18():
    spec = importlib.util.spec_from_file_location("resnet18", os.path.join(EXAMPLES, "resnet18.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make()


def transformer_encoder_layer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True).eval()
    return layer, [torch.randn(2, 5, 16)]


def multi_output_getitem():
    def fn(x, weight, bias):
        out, save_mean, save_invstd = torch.ops.aten.native_batch_norm(x, weight, bias, None, None, True, 0.1, 1e-5)
        values, indices = torch.max(out, dim=1)
        return values, indices, save_mean, save_invstd
    torch.manual_seed(0)
    return fn, [torch.randn(4, 3, 5), torch.randn(3), torch.randn(3)]


def views_of_one_storage():
    def fn(a, b):
        product = a * b
        a.add_(1)  # a and b overlap in base[4:14]: b + 0 sees this write only if they still share a storage
        return product, b + 0
    torch.manual_seed(0)
    base = torch.randn(40)
    return fn, [base[2:14].view(3, 4), base[4:16].view(4, 3).t()]


def dtypes():
    def fn(ints, mask, halves):
        scaled = ints * 3 + ints.sum()
        chosen = torch.where(mask, halves, halves * 2)
        return scaled, mask & (ints > 2), chosen, ints.to(torch.float16) + halves, ~mask
    torch.manual_seed(0)
    return fn, [torch.randint(-5, 5, (2, 3)), torch.rand(2, 3) > 0.5, torch.randn(2, 3, dtype=torch.float16)]


def scalar_and_list_args():
    def fn(x, y, image):
        return (torch.cat([x, y, x], dim=1), torch.clamp(x, min=-0.5, max=0.5), torch.add(x, y, alpha=2),
                x.sum(dim=[0], keepdim=True), torch.sort(y, dim=1, descending=True), x.pow(2) * 2.5,
                x.to(torch.float64), torch.zeros(2, 3, device=x.device), image.clone(memory_format=torch.channels_last))
    torch.manual_seed(0)
    return fn, [torch.randn(2, 3), torch.randn(2, 3), torch.randn(1, 2, 3, 3)]


def inf_nan_constants():
    def fn(x):
        constant = torch.tensor([INF, -INF, NAN, 1.0])
        masked = x.masked_fill(x < 0, -INF)
        # nan flows through the graph as a constant and an argument but is replaced before the outputs,
        # so torch.equal (which never holds for nan) can compare them exactly.
        no_nan = torch.nan_to_num(constant + x.masked_fill(x > 1, NAN), nan=7.0)
        return torch.clamp(x, min=-INF, max=0.5), masked, no_nan, torch.softmax(masked, dim=-1)
    torch.manual_seed(0)
    return fn, [torch.randn(4)]


CASES = {make.__name__: make for make in (resnet18, transformer_encoder_layer, multi_output_getitem,
                                          views_of_one_storage, dtypes, scalar_and_list_args, inf_nan_constants)}

# Text graph.json must contain, so that each case still exercises what its name promises.
EXPECTED_IN_GRAPH = {
    "multi_output_getitem": ['"aten::max.dim"', '"aten::native_batch_norm"', '"getitem"'],
    "views_of_one_storage": ['"aten::add_.Tensor"'],
    "dtypes": ['"int64"', '"bool"', '"float16"'],
    "scalar_and_list_args": ['"aten::cat"', '{"dtype": "float64"}', '{"device": "cpu"}',
                             '{"memory_format": "channels_last"}', '"alpha": 2', '0.5', 'true'],
    "inf_nan_constants": ['{"float": "-inf"}', '{"float": "nan"}', '"_tensor_constant0"'],
}
