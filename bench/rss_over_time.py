# A command's resident memory and its children's (a pool's workers), sampled every half second, so a
# long run shows whether either grows with its queries (docs/benchmarks.md):
#   /usr/bin/python3 bench/rss_over_time.py build/bench/minifyd_bench_query_latency GRAPH -n 20000
# Prints the command's output, then five samples (seconds, the command's MiB, each child's MiB) from
# its first second to its last.
import subprocess
import sys
import time


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS"))
    except (OSError, StopIteration):
        return None


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(child) for child in f.read().split()]
    except OSError:
        return []


def main():
    process = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started, samples = time.monotonic(), []
    while process.poll() is None:
        samples.append((round(time.monotonic() - started, 1), rss_mib(process.pid),
                        [rss_mib(child) for child in children(process.pid)]))
        time.sleep(0.5)
    out, err = process.communicate()
    print(out.strip(), err.strip()[-500:], sep="\n")
    n = len(samples)
    for index in sorted({min(1, n - 1), n // 4, n // 2, 3 * n // 4, n - 1}) if n else []:
        print(samples[index])
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
