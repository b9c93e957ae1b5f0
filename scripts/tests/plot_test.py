#!/usr/bin/env python3
"""Runs scripts/plot_sweep.py with its defaults on a small CSV of each lesson
(scripts/tests/*.csv, the layout every lesson's --csv writes), on every CSV
committed in a lesson folder, and on Day 36's H200 run beside the course
text's T4 run, and checks that each writes a PNG; and the axis and legend rules on the
knobs the lessons print. Exit 77 (CTest: skipped) where
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
    sys.path.insert(0, str(PLOT.parent))
    import plot_sweep  # the axis rules, on the knobs the lessons print
    widths = [16896 * 4**k for k in range(7)]
    rules = [(plot_sweep.is_geometric(widths), "merge sort's run widths (x4) get a log axis"),
             (plot_sweep.is_geometric([3840, 7680] + [30720 * 4**k for k in range(6)]), "x2 then x4 widths too"),
             (not plot_sweep.is_geometric([3840, 16896]), "two tile sizes stay linear"),
             (not plot_sweep.is_geometric([1, 3, 5, 7, 9]), "an arithmetic knob stays linear"),
             (plot_sweep.is_doubling([1, 2, 4, 8, 16]), "powers of two double")]
    # A table without a kernel column (merge sort's passes) names its lines by their own cells, not its title.
    run = plot_sweep.read_run(HERE / "merge_sort_passes.csv")
    panel = plot_sweep.panels_of(run, "GB/s", "each pass", None)[0]
    rules.append((sorted(panel.series) == ["block sort", "merge x4"], "a pass table's lines are named by the pass"))
    for ok, what in rules:
        print(f"{'ok  ' if ok else 'FAIL'} rule: {what}")
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
    failures += sum(not ok for ok, _ in rules)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
