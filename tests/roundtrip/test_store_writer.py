# The content store's writer contract (tests/common/store_writer_cases.json), kept by Python's
# StoreWriter (minifyd/graph_format.py) as by C++'s BlobBatch (tests/common/content_store_test.cpp).
import argparse
import hashlib
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "python"))
from minifyd import graph_format  # noqa: E402
from minifyd import graph_writer as gw  # noqa: E402

CASES = os.path.join(HERE, "..", "common", "store_writer_cases.json")


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def check_case(case, store_dir):
    name = case["name"]
    with gw.StoreWriter(store_dir) as writer:
        put = [writer.put(text.encode()) for text in case["blobs"]]
        for text, digest in zip(case["blobs"], put):
            expect(digest == hashlib.sha256(text.encode()).hexdigest(), f"{name}: put named {text!r} {digest}")
        named = [put[blob] if isinstance(blob, int) else blob for blob in case["root_blobs"]]
        try:
            writer.write_root(case["root"], named)
            refused = None
        except graph_format.FormatError as error:
            refused = str(error)
    roots = os.listdir(os.path.join(store_dir, "roots"))
    if "refused" in case:
        expect(refused is not None, f"{name}: the root was written")
        for part in case["refused"]:
            expect(part in refused, f"{name}: the refusal {refused!r} does not say {part!r}")
        expect(roots == [], f"{name}: refused, yet roots/ holds {roots}")
        return
    expect(refused is None, f"{name}: refused: {refused}")
    blobs_dir = os.path.join(store_dir, "blobs")
    found = sorted(blob for fanout in os.listdir(blobs_dir) for blob in os.listdir(os.path.join(blobs_dir, fanout)))
    expect(found == sorted(set(put)), f"{name}: blobs/ holds {found}, not {sorted(set(put))}")
    for digest in put:
        with open(os.path.join(blobs_dir, digest[:2], digest), "rb") as f:
            expect(hashlib.sha256(f.read()).hexdigest() == digest, f"{name}: blob {digest} holds other bytes")
    with open(os.path.join(store_dir, "roots", case["root"] + ".json")) as f:
        record = json.load(f)
    expect(record == {"format": "minifyd.store-root", "version": 1, "blobs": named}, f"{name}: the root is {record}")
    with open(os.path.join(store_dir, "VERSION")) as f:
        expect(f.read() == "minifyd-store 1\n", f"{name}: VERSION")
    expect(os.listdir(os.path.join(store_dir, "tmp")) == [], f"{name}: tmp/ is not empty")


def main():
    parser = argparse.ArgumentParser(description="Hold Python's StoreWriter to the store's writer contract.")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    with open(CASES) as f:
        cases = json.load(f)["cases"]
    expect(len(cases) >= 10, "the contract lists fewer than 10 cases")
    for i, case in enumerate(cases):
        store_dir = os.path.join(args.work, f"case-{i}", "store")
        shutil.rmtree(os.path.dirname(store_dir), ignore_errors=True)
        check_case(case, store_dir)
        print(f"ok: {case['name']}")
    print("store writer contract: ok")


if __name__ == "__main__":
    main()
