# minifyd's Python side, one package: the graph format and the content store (graph_format), the
# exporter (export), repro.py (repro_template, repro_writer) and the Python worker (worker_*), which
# serves the torch.compile backends over the worker protocol. scripts/ holds thin entry points.
