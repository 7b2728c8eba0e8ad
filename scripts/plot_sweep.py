#!/usr/bin/python3
"""Plots one figure of a sweep (trn3vp sweep's sweep.csv) against a param,
one line per value of another: what `trn3vp sweep` runs when its file has a
"plot" (docs/sweeps.md). Non-numeric x values are placed in their order.

    scripts/plot_sweep.py sweep.csv --x PARAM --y FIGURE [--series PARAM] [--where PARAM=VALUE] -o plot.svg
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def as_number(text):
    """A value as a number: plain, or with a size suffix (K, M, G: binary)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        return float(text)
    except ValueError:
        if text and text[-1] in scale:
            return float(text[:-1]) * scale[text[-1]]
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--x", required=True)
    ap.add_argument("--y", required=True)
    ap.add_argument("--series", default="")
    ap.add_argument("--where", action="append", default=[], help="PARAM=VALUE: only these rows (repeatable)")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    for w in a.where:
        key, _, value = w.partition("=")
        if rows and key not in rows[0]:
            sys.exit(f"plot_sweep: no column '{key}' in {a.csv}")
        rows = [r for r in rows if r[key] == value]
    for col in [a.x, a.y] + ([a.series] if a.series else []):
        if rows and col not in rows[0]:
            sys.exit(f"plot_sweep: no column '{col}' in {a.csv}")
    xs = []
    for r in rows:
        if r[a.x] not in xs:
            xs.append(r[a.x])
    try:
        position = {x: as_number(x) for x in xs}
        numeric = True
    except ValueError:
        position = {x: i for i, x in enumerate(xs)}
        numeric = False
    lines = {}
    for r in rows:
        if r[a.y] == "":
            continue
        lines.setdefault(r[a.series] if a.series else a.y, []).append((position[r[a.x]], float(r[a.y])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in lines.items():
        pts.sort()
        label = f"{a.series}={name}" if a.series else name
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    if numeric and len(xs) > 2 and max(position.values()) / max(min(position.values()), 1e-30) >= 100:
        ax.set_xscale("log", base=2)
    if not numeric:
        ax.set_xticks(list(position.values()), xs)
    ax.set_xlabel(a.x)
    ax.set_ylabel(a.y)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out)


if __name__ == "__main__":
    main()
