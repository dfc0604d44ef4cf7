#!/usr/bin/env python3
"""Per-kernel table of an ncu CSV from gpu_profile.sh (--page raw, metrics
gpu__time_duration.sum and dram__bytes_read.sum): launches grouped by kernel,
grid and block, with the median duration, the median DRAM bytes read and the
bandwidth they imply, largest total time first, as Markdown. SKIP, a regular
expression, leaves out the kernels whose names it matches (the prefill's, say:
'^(gemm_|attend_prefill|qkv_rope_store)').

    python3 scripts/ncu_summary.py FILE.ncu.csv [TOP [SKIP]]
"""
import csv
import re
import statistics
import sys


def number(s):
    return float(s.replace(",", ""))


def unit(units, metric, scales):
    u = units.get(metric, "")
    if u not in scales:
        sys.exit(f"{metric}: unit {u!r} is not one of {sorted(scales)}")
    return scales[u]


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    skip = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    cols = rows[head]
    units = dict(zip(cols, rows[head + 1]))
    name, grid, block = cols.index("Kernel Name"), cols.index("Grid Size"), cols.index("Block Size")
    dur, read = cols.index("gpu__time_duration.sum"), cols.index("dram__bytes_read.sum")
    scale = unit(units, "gpu__time_duration.sum", {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3})  # to µs
    bscale = unit(units, "dram__bytes_read.sum", {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3})  # to MB
    groups = {}
    for r in rows[head + 2:]:
        if len(r) != len(cols) or (skip and skip.search(r[name])):
            continue
        key = (r[name][:72], r[grid], r[block])
        groups.setdefault(key, []).append((number(r[dur]) * scale, number(r[read]) * bscale))
    table = sorted(groups.items(), key=lambda kv: -sum(d for d, _ in kv[1]))
    print("| kernel | grid | block | launches | µs (median) | MB read (median) | TB/s | total µs |")
    print("|---|---|---|---|---|---|---|---|")
    for (k, g, b), v in table[:top]:
        us = statistics.median(d for d, _ in v)
        mb = statistics.median(m for _, m in v)
        print(f"| `{k}` | {g} | {b} | {len(v)} | {us:.1f} | {mb:.1f} | {mb / us:.2f} | {sum(d for d, _ in v):.0f} |")


if __name__ == "__main__":
    main()
