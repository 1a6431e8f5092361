# A python started ahead of the one helper call it will make (daemon/run/standby_python.h): it imports
# torch and the repro writer while the run searches, then waits for its request, a JSON file
# {"module": NAME, "argv": [...]} that the coordinator renames into place at REQUEST_PATH, and runs
# minifyd.NAME's main() with those arguments, as `python -c "from minifyd.NAME import main"` would. The
# coordinator kills it when no request comes (the run wrote no outputs) and bounds its work once asked.
import importlib
import json
import os
import sys
import time

# What a standby python may be asked to run: the modules whose imports it pays ahead.
MODULES = ("after_aot_repro",)
POLL_SECONDS = 0.02


# How much lower than the run's other processes a standby python runs (nice(2)): its imports, seconds of
# CPU, are wanted only once the search has ended, while the workers' start, the sanity check's compile
# and the plain check want the cores now (on 2 cores they took a core's share from the sanity check).
NICENESS = 19


def main():
    request_path = sys.argv[1]
    os.nice(NICENESS)
    for name in MODULES:
        importlib.import_module("minifyd." + name)
    import torch._dynamo.repro.after_aot  # noqa: F401  (the writer's own import, seconds of it)
    while not os.path.exists(request_path):
        time.sleep(POLL_SECONDS)
    with open(request_path) as f:
        request = json.load(f)
    module = request.get("module")
    if module not in MODULES:
        print(f"standby: no module {module!r} to run ({', '.join(MODULES)})", file=sys.stderr)
        return 2
    sys.argv = ["minifyd." + module, *request["argv"]]
    return importlib.import_module("minifyd." + module).main()
