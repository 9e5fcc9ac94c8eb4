#!/usr/bin/python3
"""Checks a Perfetto trace decoded by `protoc --decode=perfetto.protos.Trace`
(text format on stdin) for tests/cli/export_test.sh, streaming line by line.

Prints one line of counts: packets descriptors instants begins ends counters
counter_tracks, then the nesting verdict for the spans named by --outer and
--inner keyed by flow tag --key: every inner slice (a txn) whose outer slice
(its block) is in the trace begins at or after the outer one begins and ends
at or before it ends. Exits 1 with a reason when a check fails."""
import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--outer", default="block")
parser.add_argument("--inner", default="txn")
parser.add_argument("--key", default="block")
args = parser.parse_args()

counts = dict(packets=0, descriptors=0, instants=0, begins=0, ends=0, counters=0, counter_tracks=0)
open_by_track = {}   # track uuid -> (name, key value, begin ts)
slices = {args.outer: {}, args.inner: []}
seq_ids = set()
first_flags = None
bad = []

packet = None


def finish(p):
    global first_flags
    counts["packets"] += 1
    seq_ids.add(p.get("seq"))
    if first_flags is None:
        first_flags = p.get("flags", 0)
    if p.get("descriptor"):
        counts["descriptors"] += 1
        if p.get("counter"):
            counts["counter_tracks"] += 1
        return
    t = p.get("type")
    if t == "TYPE_INSTANT":
        counts["instants"] += 1
    elif t == "TYPE_COUNTER":
        counts["counters"] += 1
    elif t == "TYPE_SLICE_BEGIN":
        counts["begins"] += 1
        if p["track"] in open_by_track:
            bad.append(f"track {p['track']} has two open slices")
        open_by_track[p["track"]] = (p.get("name"), p["ann"].get(args.key), p["ts"])
    elif t == "TYPE_SLICE_END":
        counts["ends"] += 1
        begun = open_by_track.pop(p["track"], None)
        if begun is None:
            bad.append(f"slice end on track {p['track']} without a begin")
            return
        name, key, ts = begun
        if p["ts"] < ts:
            bad.append(f"slice on track {p['track']} ends before it begins")
        if name == args.outer:
            if key in slices[args.outer]:
                bad.append(f"two {args.outer} slices for {args.key} {key}")
            slices[args.outer][key] = (ts, p["ts"])
        elif name == args.inner:
            slices[args.inner].append((key, ts, p["ts"]))


depth = 0
ann = None
for line in sys.stdin:
    s = line.strip()
    if s.endswith("{"):
        depth += 1
        if depth == 1:
            packet = {"ann": {}}
        elif s == "track_descriptor {":
            packet["descriptor"] = True
        elif s == "counter {" and packet.get("descriptor"):
            packet["counter"] = True
        elif s == "debug_annotations {" and depth == 3:
            ann = {}
        continue
    if s == "}":
        if depth == 3 and ann is not None:
            if "name" in ann and "value" in ann:
                packet["ann"][ann["name"]] = ann["value"]
            ann = None
        depth -= 1
        if depth == 0:
            finish(packet)
        continue
    key, _, value = s.partition(": ")
    if depth == 1 and key == "timestamp":
        packet["ts"] = int(value)
    elif depth == 1 and key == "trusted_packet_sequence_id":
        packet["seq"] = int(value)
    elif depth == 1 and key == "sequence_flags":
        packet["flags"] = int(value)
    elif depth == 2 and key == "type":
        packet["type"] = value
    elif depth == 2 and key == "track_uuid":
        packet["track"] = int(value)
    elif depth == 2 and key == "name" and not packet.get("descriptor"):
        packet["name"] = value.strip('"')
    elif depth == 3 and ann is not None and key == "name":
        ann["name"] = value.strip('"')
    elif depth == 3 and ann is not None and key == "uint_value":
        ann["value"] = int(value)

contained = orphans = 0
for key, begin, end in slices[args.inner]:
    outer = slices[args.outer].get(key)
    if outer is None:
        orphans += 1
        continue
    if begin < outer[0] or end > outer[1]:
        bad.append(f"{args.inner} slice {begin}..{end} is not inside its {args.outer} {key} {outer[0]}..{outer[1]}")
    contained += 1
if open_by_track:
    bad.append(f"{len(open_by_track)} slices never end")
if seq_ids != {1}:
    bad.append(f"packets on sequences {sorted(seq_ids, key=str)}, expected only 1")
if first_flags != 1:
    bad.append("the first packet does not set SEQ_INCREMENTAL_STATE_CLEARED")

print(" ".join(f"{k}={v}" for k, v in counts.items()),
      f"{args.outer}s={len(slices[args.outer])} {args.inner}s_nested={contained} {args.inner}s_without_{args.outer}={orphans}")
if bad:
    for b in bad[:5]:
        print("bad:", b)
    sys.exit(1)
