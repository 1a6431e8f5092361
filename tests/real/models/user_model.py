# The layers and the eager-vs-compiled check that the scripts beside this file share.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualMLP(nn.Module):
    """x + fc2(act(fc1(LayerNorm(x)))), hidden width 2 * d."""

    def __init__(self, d, act=F.gelu):
        super().__init__()
        self.act = act
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class AttentionMLPBlock(nn.Module):
    """Pre-norm self-attention, then a residual GELU MLP; a subclass's scores(q, k) gives the attention logits."""

    def __init__(self, d):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        x = x + self.proj(torch.softmax(self.scores(q, k), dim=-1) @ v)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ResConvBlock(nn.Module):
    """relu(bn(conv(relu(bn(conv(x))))) + skip(x)), 3-wide convs over `dims` (1 or 2) spatial dimensions; the
    skip is a 1x1 conv where the channel count changes."""

    def __init__(self, cin, cout, dims=2):
        super().__init__()
        conv, bn = (nn.Conv1d, nn.BatchNorm1d) if dims == 1 else (nn.Conv2d, nn.BatchNorm2d)
        self.conv1 = conv(cin, cout, 3, padding=1)
        self.bn1 = bn(cout)
        self.conv2 = conv(cout, cout, 3, padding=1)
        self.bn2 = bn(cout)
        self.skip = conv(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.skip(x))


class ConvNormAct(nn.Sequential):
    """3x3 conv, BatchNorm (the conv then has no bias) unless norm=False, activation."""

    def __init__(self, cin, cout, act=nn.ReLU, norm=True):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=not norm),
                         *([nn.BatchNorm2d(cout)] if norm else []), act())


def check_compiled(model, inputs, names=("output",), mutated=None, rtol=0.0, atol=1e-4, equal_nan=False,
                   backward=False):
    """Runs model eagerly, then torch.compile(model), each on its own copy of inputs after torch.manual_seed(1):
    a forward under torch.no_grad(), or with backward=True a training step (model(*inputs).sum().backward())
    whose loss and parameter gradients are compared. Compares every output (named by names) and the inputs
    the model updates in place (mutated: {position: name}); raises AssertionError where compiled and eager
    differ beyond torch.allclose(rtol, atol, equal_nan), prints an ok line otherwise."""
    mutated = mutated or {}

    def run(fn):
        args = [x.clone() for x in inputs]
        torch.manual_seed(1)
        if backward:
            model.zero_grad(set_to_none=True)
            loss = fn(*args).sum()
            loss.backward()
            values = [loss.detach()] + [p.grad.detach().clone() for p in model.parameters()]
        else:
            with torch.no_grad():
                out = fn(*args)
            values = list(out) if isinstance(out, tuple) else [out]
        return values + [args[i] for i in mutated]

    expected = run(model)
    actual = run(torch.compile(model))
    if backward:
        names = ["loss"] + [f"grad of {n}" for n, _ in model.named_parameters()]
    bad, worst = [], 0.0
    for name, a, e in zip([*names, *mutated.values()], actual, expected):
        diff = (a - e).abs().max().item()
        worst = max(worst, diff)
        if torch.allclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan):
            continue
        exact = a.numel() == 1 and not a.is_floating_point()        # an index: both values say more
        bad.append(f"{name} {a.item()} vs eager {e.item()}" if exact else f"{name} max abs diff {diff:.4g}")
    if bad:
        raise AssertionError("compiled differs from eager: " + "; ".join(bad))
    print(f"ok: compiled matches eager (max abs diff {worst:.3g})")
