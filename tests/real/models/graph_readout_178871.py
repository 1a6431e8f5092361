# Real Inductor GPU bug: pytorch/pytorch#178871
#   https://github.com/pytorch/pytorch/issues/178871
#   "Incorrect output for non-power-of-2-sized fusion of scalar broadcast and scatter-add"
#   When Inductor fuses `x + bias` (a one-element bias broadcast) into a scatter_reduce(sum) whose output
#   is 1x1, the Triton kernel's tl.atomic_add has no mask (the index is constant), so the XBLOCK - N lanes
#   past the N rows add `bias` too: compiled - eager == (next_pow2(N) - N) * bias. Fixed by
#   pytorch/pytorch#179833 (April 2026), after 2.11 (reproduced on PyTorch 2.11.0+cu130, H200:
#   tests/real/gpu/scatter_reduce_mask_178871.py).
# Failure kind: accuracy (silent wrong numbers; this script turns it into an AssertionError).
# What the user sees under torch 2.11 on CUDA:
#   AssertionError: compiled differs from eager: energy max abs diff ... (the total energy of a 7-atom
#   molecule gets one atom's offset added once more; the force head, which does not read it, matches)
# Pattern embedded: a molecule's total energy as in SchNet-style models: atom embeddings refined by residual
#   MLPs, a per-atom energy plus a learned per-atom offset, summed into the molecule's energy with
#   scatter_reduce over the atoms' molecule index (one molecule here, 7 atoms); a per-atom head besides.
# Forward graph handed to Inductor: 174 aten call_function nodes (236 nodes; PyTorch 2.6, CPU).
# Set REALBUG_DISABLE=1 to sum the atom energies with a plain .sum() (the same total): then compiled
# matches eager. It runs on the GPU when there is one; on the CPU the bug does not show.
import os

import torch
import torch.nn as nn

from user_model import ResidualMLP, check_compiled

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BUGGY_READOUT = os.environ.get("REALBUG_DISABLE") != "1"


class MoleculeEnergyNet(nn.Module):
    def __init__(self, species=10, d=32, depth=8):
        super().__init__()
        self.embed = nn.Embedding(species, d)
        self.geometry = nn.Linear(3, d)
        self.interactions = nn.Sequential(*[ResidualMLP(d) for _ in range(depth)])
        self.atom_energy = nn.Linear(d, 1)
        self.atom_offset = nn.Parameter(torch.tensor([0.25]))
        self.forces = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 3))

    def forward(self, species, positions, molecule):
        h = self.interactions(self.embed(species) + self.geometry(positions))
        per_atom = self.atom_energy(h) + self.atom_offset               # (atoms, 1)
        if BUGGY_READOUT:
            energy = torch.zeros(1, 1, device=h.device, dtype=h.dtype).scatter_reduce(
                0, molecule.unsqueeze(-1).expand_as(per_atom), per_atom, "sum", include_self=True)
        else:
            energy = per_atom.sum(dim=0, keepdim=True)
        return energy, self.forces(h)


def make():
    torch.manual_seed(0)
    model = MoleculeEnergyNet().eval().to(DEVICE)
    atoms = 7
    species = torch.randint(0, 10, (atoms,), device=DEVICE)
    positions = torch.randn(atoms, 3, device=DEVICE)
    molecule = torch.zeros(atoms, dtype=torch.int64, device=DEVICE)
    return model, [species, positions, molecule]


if __name__ == "__main__":
    check_compiled(*make(), names=("energy", "forces"))
