#!/usr/bin/env python3
"""Runs scripts/plot_sweep.py with its defaults on a small CSV of each lesson
(scripts/tests/*.csv, the layout every lesson's --csv writes), on every CSV
committed in a lesson folder, and on Day 36's H200 run beside the seed's T4
run, and checks that each writes a PNG. Exit 77 (CTest: skipped) where
matplotlib is missing: python3 -m pip install --user matplotlib.
"""
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PLOT = ROOT / "scripts" / "plot_sweep.py"
PNG = b"\x89PNG\r\n\x1a\n"


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIPPED: matplotlib is not installed (python3 -m pip install --user matplotlib)")
        return 77
    cases = [[p] for p in sorted(HERE.glob("*.csv"))]
    cases += [[p] for p in sorted(ROOT.glob("*/h200-*.csv"))]
    day36 = sorted((ROOT / "day36-merge").glob("h200-*.csv"))
    if day36:
        cases.append([day36[-1], ROOT / "scripts" / "data" / "day36-seed-t4.csv"])
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for number, files in enumerate(cases):
            out = pathlib.Path(scratch) / f"{number}.png"
            names = " ".join(str(f.relative_to(ROOT)) for f in files)
            result = subprocess.run([sys.executable, str(PLOT), *map(str, files), "--out", str(out)],
                                    capture_output=True, text=True)
            ok = result.returncode == 0 and out.is_file() and out.read_bytes()[:8] == PNG
            print(f"{'ok  ' if ok else 'FAIL'} {names}" + ("" if ok else f": exit {result.returncode}\n"
                                                          f"{result.stdout}{result.stderr}"))
            failures += not ok
    print(f"{len(cases) - failures} of {len(cases)} CSVs plotted to PNG")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
