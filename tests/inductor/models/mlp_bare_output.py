# A deep MLP that returns a bare tensor, as a user's module does: torch.compile compiles it without
# error. Traced by make_fx (export_fx.py without --aot), its graph has not been through AOT autograd:
# Inductor's inner compiler refuses it (it returns no tuple, and its aten.t and aten.gelu are not
# decomposed), so the worker must compile it as torch.compile does.
import torch


def make():
    torch.manual_seed(0)
    layers = []
    for _ in range(30):
        layers += [torch.nn.Linear(32, 32), torch.nn.LayerNorm(32), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).eval(), [torch.randn(8, 32)]
