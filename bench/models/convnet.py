# A small convolutional net as a user writes one (a torchvision-style stem, residual stages of
# conv-batchnorm-relu, pooling, a classifier), for the speed benchmark (docs/benchmarks.md): its relus
# are where Inductor's injected relu bugs land. MINIFYD_BENCH_DEVICE=cuda puts it on the GPU.
import os

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class ConvNet(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]))
        stages = []
        for i, width in enumerate(widths):
            if i:
                stages += [nn.Conv2d(widths[i - 1], width, 1, stride=2, bias=False), nn.BatchNorm2d(width)]
            stages += [Block(width) for _ in range(blocks)]
        self.stages = nn.Sequential(*stages)
        self.head = nn.Linear(widths[-1], classes)

    def forward(self, x):
        x = self.stages(torch.relu(self.stem(x)))
        return (self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)),)


def make():
    torch.manual_seed(0)
    device = os.environ.get("MINIFYD_BENCH_DEVICE", "cpu")
    model = ConvNet().eval().to(device)
    return model, [torch.randn(2, 3, 32, 32, device=device)]
