# The bundled example for scripts/export_fx.py: an untrained torchvision resnet18 on one 3x64x64 image.
import torch
import torchvision


def make():
    torch.manual_seed(0)
    # weights=None builds random weights locally; nothing is downloaded.
    model = torchvision.models.resnet18(weights=None).eval()
    return model, [torch.randn(1, 3, 64, 64)]
