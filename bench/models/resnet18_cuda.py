# The bundled example's resnet18 (scripts/examples/resnet18.py), its weights and image, on the GPU.
import importlib.util
import os

_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "examples", "resnet18.py")
_spec = importlib.util.spec_from_file_location("example_resnet18", _EXAMPLE)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


def make():
    model, inputs = example.make()
    return model.cuda(), [x.cuda() for x in inputs]
