#!/usr/bin/env python3
"""GEMM shapes and dtypes on one simulated NeuronCore: TFLOP/s against the
size, a line per dtype (docs/python.md).

    PYTHONPATH=build/release/python python3 sw/python/examples/gemm_sweep.py --out gemm_tflops.png
"""
import argparse

import trn3vp


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gemm_tflops.png", help="the plot (PNG or SVG)")
    ap.add_argument("--quick", action="store_true", help="two sizes only (a test)")
    ap.add_argument("-j", "--jobs", type=int, default=None, help="simulations at once (default: the cores)")
    args = ap.parse_args()
    sizes = [512, 1024] if args.quick else [512, 1024, 2048, 4096]
    points = [{"neuroncore.m": n, "neuroncore.n": n, "neuroncore.k": n, "neuroncore.dtype": t}
              for t in ("bf16", "e4m3fn", "mxfp8", "mxfp4") for n in sizes]
    rows = trn3vp.sweep("neuroncore", points, jobs=args.jobs,
                        figures={"TFLOP/s": trn3vp.stat_rate("neuroncore.nc0.matmul_flops", 1e-12)})
    print(f"{'dtype':<8} {'M=N=K':>6} {'TFLOP/s':>8} {'simulated us':>13} {'wall s':>7}")
    for r in rows:
        print(f"{r['neuroncore.dtype']:<8} {r['neuroncore.m']:>6} {r['TFLOP/s']:>8.2f} "
              f"{r['simulated_s'] * 1e6:>13.3f} {r['wall_s']:>7.2f}")
    if not all(r["passed"] for r in rows):
        raise SystemExit("a GEMM did not match its fp64 reference")
    trn3vp.plot(rows, x="neuroncore.m", y="TFLOP/s", series="neuroncore.dtype", path=args.out, logx=True,
                title="GEMM M = N = K on one NeuronCore-v4")
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
