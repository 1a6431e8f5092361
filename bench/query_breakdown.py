# Where a `minify run`'s time went, from its timeline (`minify run --timeline FILE`, daemon/run/timeline.h):
#   /usr/bin/python3 bench/query_breakdown.py FILE [FILE...] [--json]
# For each run: its phases (import of a repro file, until the search starts: the graph's import into the
# run's store, while the workers start; the search; the plain check beside it; after the search; outputs),
# and the search's worker time, slot by slot (a slot is one worker place of the pool): the original's
# propagation (beside the sanity check: its eager values, which the search awaits where it needs them),
# in requests (the worker's
# own wait for a process to serve it (start_wait: the Python worker with a GPU, whose serving child a CUDA
# error ended), load, compile, wait for the GPU (its run lock), run and check, and our overhead: the rest of the time from sending a request to its
# answer, i.e. the fork of a child, JSON both ways, the pipes), starting a worker (at the start, and again
# after one retired or died), and idle (a worker up with nothing to do: the search had fewer candidates
# than workers). A request whose answer has no worker's times (a crash's verdict, which the fork server
# makes when its child dies; a fault) counts whole as unsplit. Per query: each part divided by the
# search's evaluate requests. Our overhead of a query: the mean overhead of the answers with the worker's
# times (the same pipes, JSON and fork carry a crash's request) over the mean time of every query, from
# sending it to its answer.
import argparse
import json
import sys

PARTS = ("start_wait", "load", "compile", "device_wait", "run", "check", "overhead", "unsplit", "propagate", "starting",
         "idle")
WORKER_PARTS = ("start_wait", "load", "compile", "device_wait", "run", "check")


def read_timeline(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def phases(events):
    """{phase: (begin, end)}, the first begin and last end of each."""
    found = {}
    for e in events:
        if e["event"] != "phase":
            continue
        begin, end = found.get(e["phase"], (None, None))
        if e["edge"] == "begin" and begin is None:
            begin = e["t"]
        if e["edge"] == "end":
            end = e["t"]
        found[e["phase"]] = (begin, end)
    return found


def slot_time(events, window):
    """Seconds of each part summed over the slots within window (begin, end), and the requests counted."""
    begin, end = window
    totals = dict.fromkeys(PARTS, 0.0)
    state = {}  # slot -> ("starting" | "idle" | "busy", since)
    sent = {}   # ticket -> (slot, t)
    slot_of = {}  # pid -> slot
    requests = {"evaluate": 0, "timed": 0, "failing": 0, "retirements": 0, "cuda_errors": 0}

    def charge(slot, until):
        kind, since = state.get(slot, (None, None))
        if kind in ("starting", "idle"):
            lo, hi = max(since, begin), min(until, end)
            if hi > lo:
                totals[kind] += hi - lo

    for e in events:
        t, kind = e["t"], e["event"]
        if kind == "worker_launched":
            slot_of[e["pid"]] = e["slot"]
            if not e["spare"] and state.get(e["slot"], ("", 0))[0] != "busy":
                charge(e["slot"], t)
                state[e["slot"]] = ("starting", t)
        elif kind == "worker_ready":
            if state.get(e["slot"], ("", 0))[0] == "starting":
                charge(e["slot"], t)
                state[e["slot"]] = ("idle", t)
        elif kind == "request_sent":
            charge(e["slot"], t)
            state[e["slot"]] = ("busy", t)
            sent[e["ticket"]] = (e["slot"], t, e.get("request"))
        elif kind == "request_answered":
            slot, t0, request = sent.pop(e["ticket"], (e["slot"], t, None))
            if request == "propagate":
                totals["propagate"] += max(0.0, min(t, end) - max(t0, begin))
            if begin <= t0 and t <= end and request == "evaluate":
                requests["evaluate"] += 1
                worker_ms = 0.0
                for part in WORKER_PARTS:
                    ms = e.get(part + "_ms", 0.0) or 0.0
                    totals[part] += ms / 1e3
                    worker_ms += ms
                if worker_ms > 0:
                    totals["overhead"] += max(0.0, (t - t0) - worker_ms / 1e3)
                    requests["timed"] += 1
                else:  # a crash's verdict (made by the fork server when its child died) or a fault: no times
                    totals["unsplit"] += t - t0
                if e.get("outcome") != "pass":
                    requests["failing"] += 1
                if e.get("failure") == "cuda_error":
                    requests["cuda_errors"] += 1
                if e.get("retiring") or e.get("outcome") == "fault":
                    requests["retirements"] += 1
            # The slot starts a worker again if this one retired or died; else it is idle until its next request.
            retired = e.get("retiring") or e.get("outcome") == "fault"
            state[slot] = ("starting" if retired else "idle", t)
    for slot in list(state):
        charge(slot, end)
    return totals, requests


def breakdown(path):
    events = read_timeline(path)
    spans = phases(events)
    wall = max(e["t"] for e in events)
    search = spans.get("search", (None, None))
    row = {"timeline": path, "wall_s": round(wall, 2)}
    for name, (b, e) in spans.items():
        if b is not None and e is not None:
            row[name + "_s"] = round(e - b, 2)
    if search[0] is None or search[1] is None:
        return row
    row["before_search_s"] = round(search[0] - (spans.get("import", (0, 0))[1] or 0), 2)
    # A slot sharing another's worker (a fork server serving every slot) has its ready but no launch.
    slots = len({e["slot"] for e in events if e["event"] in ("worker_launched", "worker_ready")})
    totals, requests = slot_time(events, search)
    n = max(1, requests["evaluate"])
    row.update(slots=slots, queries=requests["evaluate"], failing=requests["failing"],
               retirements=requests["retirements"], cuda_errors=requests["cuda_errors"],
               search_wall_per_query_s=round((search[1] - search[0]) / n, 3))
    slot_seconds = slots * (search[1] - search[0])
    row["per_query_s"] = {part: round(totals[part] / n, 3) for part in PARTS}
    row["share"] = {part: round(totals[part] / slot_seconds, 3) if slot_seconds else 0 for part in PARTS}
    answered = sum(totals[p] for p in (*WORKER_PARTS, "overhead", "unsplit"))  # sending to answer, every query
    overhead = totals["overhead"] / requests["timed"] if requests["timed"] else 0
    row["overhead_per_request_ms"] = round(1e3 * overhead, 1)
    row["overhead_of_a_query"] = round(overhead / (answered / n), 3) if answered else 0
    return row


def render(row):
    lines = [f"{row['timeline']}: {row['wall_s']} s"]
    phase_names = [k[:-2] for k, v in row.items() if k.endswith("_s") and isinstance(v, float)
                   and k not in ("wall_s", "search_wall_per_query_s")]
    lines.append("  phases: " + ", ".join(f"{name} {row[name + '_s']} s" for name in phase_names))
    if "queries" in row:
        lines.append(f"  search: {row['queries']} worker queries ({row['failing']} failing, {row['cuda_errors']} of them "
                     f"CUDA errors; {row['retirements']} "
                     f"ending their worker or its child: a retirement, a cancel, a death) on {row['slots']} slots, "
                     f"{row['search_wall_per_query_s']} s of wall per query")
        lines.append("  per query, slot seconds: " + ", ".join(f"{p} {row['per_query_s'][p]}" for p in PARTS))
        lines.append("  share of the slots' time: " + ", ".join(f"{p} {100 * row['share'][p]:.0f}%" for p in PARTS))
        lines.append(f"  our overhead: {row['overhead_per_request_ms']} ms a request, {100 * row['overhead_of_a_query']:.1f}% "
                     f"of a query's time from sending it to its answer")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description="where a minify run's time went, from its --timeline")
    parser.add_argument("timelines", nargs="+")
    parser.add_argument("--json", action="store_true", help="one JSON object per timeline")
    args = parser.parse_args()
    for path in args.timelines:
        row = breakdown(path)
        print(json.dumps(row) if args.json else render(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
