#!/usr/bin/python3
"""Collective sweeps across the UltraServer SKUs: switched against torus.

Runs `trn3vp run --platform <sku> -p <sku>.app=collectives` for all_reduce
and all_to_all over a size sweep (rows timed only above a small checked
size), parses the nccl-tests tables, writes one CSV row per (system, op,
size) and plots busbw against size per op (PNG, matplotlib).

    bench/collectives_sweep.py [--quick | --nl72x2] [--channels N] [--engines N] [--build build/release] [--out DIR]



--quick compares 16-chip systems (nl16-torus2d against nl32x2 reduced to 4
trays per rack); the default compares the 64-chip ones (nl32x2-torus3d
against nl32x2 at switch generations 1, 2 and 3); --nl72x2 runs the
144-chip nl72x2 at switch generations 1, 2 and 3 (sizes to 18 MB; files
collectives-nl72x2.csv and .png). Simulated figures are
deterministic; the wall time of each run is printed too. --channels (2)
runs that many channels (each its own DMA queue and fabric channel, so
routes stripe a peer's data over that many of the equal paths); --engines
sets every chip's DMA engines (default: the model's 4).
"""
import argparse
import csv
import os
import subprocess
import sys
import time


def systems(quick, nl72x2=False):
    if quick:
        return [("nl32x2 (16 chips), gen 1", "nl32x2", ["-p", "nl32x2.trays=4"]),
                ("nl16-torus2d", "nl16-torus2d", [])]
    if nl72x2:
        return [(f"nl72x2, gen {g}", "nl72x2", ["-p", f"nl72x2.switch_gen={g}"]) for g in (1, 2, 3)]
    return [(f"nl32x2, gen {g}", "nl32x2", ["-p", f"nl32x2.switch_gen={g}"]) for g in (1, 2, 3)] + \
           [("nl32x2-torus3d", "nl32x2-torus3d", [])]


def prefix(sku):
    return sku.replace("-", "_")


def run(binary, sku, extra, op, min_bytes, max_bytes, channels, engines):
    p = prefix(sku)
    cmd = [binary, "run", "--platform", sku, "-p", f"{p}.app=collectives", "-p", f"collectives.op={op}",
           "-p", f"collectives.min_bytes={min_bytes}", "-p", f"collectives.max_bytes={max_bytes}",
           "-p", "collectives.factor=4", "-p", "collectives.check_max_bytes=65536",
           "-p", f"collectives.channels={channels}",
           # every size on every channel: the sweep compares fabrics, not the channel choice
           "-p", "collectives.channel_bytes=0"] + extra
    if engines:
        cmd += ["-p", f"{p}.*.dma0.engines={engines}"]
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"collectives_sweep: {' '.join(cmd)} failed ({out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    rows = []
    for line in out.stdout.splitlines():
        fields = line.split()
        if len(fields) == 13 and fields[0].isdigit():
            rows.append({"size": int(fields[0]), "time_us": float(fields[5]), "algbw": float(fields[6]),
                         "busbw": float(fields[7]), "wrong": fields[8]})
    if not rows:
        sys.exit(f"collectives_sweep: no table in the output of {' '.join(cmd)}")
    return rows, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--nl72x2", action="store_true")
    ap.add_argument("--channels", type=int, default=2)
    ap.add_argument("--engines", type=int, default=0)
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--out", default="bench/out")
    a = ap.parse_args()
    binary = os.path.join(a.build, "bin", "trn3vp")
    if not os.access(binary, os.X_OK):
        sys.exit(f"collectives_sweep: no {binary} (build first)")
    os.makedirs(a.out, exist_ok=True)
    chips = 16 if a.quick else 144 if a.nl72x2 else 64
    # Sizes: whole chunks for every op (a multiple of 4 bytes x chips x channels).
    min_bytes = 4 * chips * a.channels * 4
    max_bytes = min_bytes * 4 ** (6 if a.nl72x2 else 8)
    name = "collectives-nl72x2" if a.nl72x2 else "collectives"
    results = []
    for label, sku, extra in systems(a.quick, a.nl72x2):
        for op in ("all_reduce", "all_to_all"):
            rows, wall = run(binary, sku, extra, op, min_bytes, max_bytes, a.channels, a.engines)
            print(f"{label:28} {op:11} {len(rows)} sizes in {wall:6.1f} s wall; busbw at {rows[-1]['size']} B: "
                  f"{rows[-1]['busbw']:.1f} GB/s; time at {rows[0]['size']} B: {rows[0]['time_us']:.2f} us")
            for r in rows:
                results.append({"system": label, "op": op, **r})
    csv_path = os.path.join(a.out, f"{name}.csv")
    try:
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["system", "op", "size", "time_us", "algbw", "busbw", "wrong"])
            w.writeheader()
            w.writerows(results)
    except OSError as e:
        sys.exit(f"collectives_sweep: cannot write {csv_path}: {e}")
    print(f"wrote {csv_path}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, op in zip(axes, ("all_reduce", "all_to_all")):
        for label, _, _ in systems(a.quick, a.nl72x2):
            pts = [r for r in results if r["system"] == label and r["op"] == op]
            ax.plot([r["size"] for r in pts], [r["busbw"] for r in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"{op}, {chips} chips, {a.channels} channels (out of place)")
        ax.grid(True, alpha=0.3)
        ax.legend()
    png = os.path.join(a.out, f"{name}.png")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
