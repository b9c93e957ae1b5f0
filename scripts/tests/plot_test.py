#!/usr/bin/env python3
"""Checks scripts/plot_sweep.py by what it draws, read back from the drawn
axes (plot_sweep.render returns, per panel, its title, axis scales, legend
labels, reference-line labels and bars):

- a small CSV of each lesson in the layout the lessons write (scripts/tests/*.csv),
  every CSV committed in a lesson folder, and Day 36's H200 run beside the
  course text's T4 run each draw a PNG, and no legend label is a table title;
- the rules: a log axis for knobs that double or grow by x4 (merge sort's
  widths), a sort's steps as a climb of their times, legends that name the row, the copy and CUB lines wherever a table
  has them (Day 36's CUB row too), the course's kernels on their own scale
  beside the production ones (merge_tiled), a --dist all run drawn as bars,
  one group per distribution (merge sort's as sample sort's, and the old
  CSVs without a summary table), bar-chart titles that say keys or pairs
  and n, a size sweep drawn as lines against log2 n, and a learner's --quick
  run paired with the H200's tables by name.

Exit 77 (CTest: skipped) where matplotlib is missing: python3 -m pip install --user matplotlib.
"""
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIPPED: matplotlib is not installed (python3 -m pip install --user matplotlib)")
        return 77
    sys.path.insert(0, str(ROOT / "scripts"))
    import plot_sweep

    failures = 0

    def expect(ok, what):
        nonlocal failures
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        failures += not ok

    with tempfile.TemporaryDirectory() as scratch:
        drawn = {}

        def draw(*files):
            out = pathlib.Path(scratch) / f"{len(drawn)}.png"
            panels = plot_sweep.render([str(f) for f in files], str(out))
            names = " + ".join(str(pathlib.Path(f).relative_to(ROOT)) for f in files)
            expect(out.is_file() and out.read_bytes()[:8] == PNG, f"{names}: a PNG of {len(panels)} panels")
            for panel in panels:
                long = [label for label in panel["legend"]
                        if len(label) > 60 or (len(label) > 40 and panel["title"].startswith(label))]
                expect(not long, f"{names}: legend labels name rows, not tables ({panel['title'][:50]}...)"
                       + (f": {long}" if long else ""))
            drawn[names] = panels
            return panels

        def titled(panels, words):
            return [p for p in panels if all(w in p["title"] for w in words)]

        # Every committed H200 run draws, but a *-runs.csv: several builds' tables side by side for NOTES.md, no picture.
        lessons = sorted(HERE.glob("*.csv")) + sorted(p for p in ROOT.glob("*/h200-*.csv") if not p.name.endswith("-runs.csv"))
        for files in [[f] for f in lessons] + [[ROOT / "day36-merge" / "h200-2026-12-01.csv",
                                                 ROOT / "scripts" / "data" / "day36-seed-t4.csv"]]:
            draw(*files)

        # Knobs that grow geometrically get a log axis; the pass table's lines are named by the pass.
        widths = [16896 * 4**k for k in range(7)]
        expect(plot_sweep.is_geometric(widths) and plot_sweep.is_geometric([3840, 7680] + [30720 * 4**k for k in range(6)])
               and not plot_sweep.is_geometric([3840, 16896]) and not plot_sweep.is_geometric([1, 3, 5, 7, 9])
               and plot_sweep.is_doubling([1, 2, 4, 8, 16]), "geometric knobs (x2, x4) and only those read as log axes")
        passes = titled(drawn["scripts/tests/merge_sort.csv"], ["each pass of"])
        expect(len(passes) == 1 and passes[0]["x scale"] == "log" and passes[0]["legend"] == ["block sort", "merge x4"]
               and any(r.startswith("device copy") for r in passes[0]["references"]),
               "merge sort's passes: a log axis for the widths, a line per pass named by it, the copy's line")
        steps = titled(drawn["scripts/tests/sample_sort.csv"], ["each step of"])
        expect(len(steps) == 1 and steps[0]["ticks"][0] == "level 1 splitters" and len(steps[0]["ticks"]) == 6
               and "sum" not in steps[0]["ticks"], "sample sort's steps: a climb of the six steps' times, the sum left out"
               + ("" if len(steps) == 1 else f": {steps}"))
        slices = drawn["scripts/tests/merge_path.csv"][0]
        expect(slices["x scale"] == "log", "Day 36's slice sizes (1, 4, ..., 256): a log axis")

        # The copy and CUB lines on Day 36's tables too: its committed run prints '-' for CUB's GB/s.
        for name in ["scripts/tests/merge_path.csv", "day36-merge/h200-2026-12-01.csv"]:
            references = drawn[name][0]["references"]
            expect(any(r.startswith("cudaMemcpy") for r in references) and any(r.startswith("cub::DeviceMerge") for r in references),
                   f"{name}: the copy and CUB reference lines")

        # The course's kernels (hundreds of GB/s) and path_tiles (thousands) each on their own scale.
        for name in ["scripts/tests/merge_tiled.csv", "ch12-merge-tiled/h200-2026-12-02.csv"]:
            keys = titled(drawn[name], ["Merging float keys"])
            upper = [p for p in keys if "own scale" not in p["title"]]
            lower = [p for p in keys if "own scale" in p["title"]]
            expect(len(upper) == 1 and len(lower) == 1 and upper[0]["legend"] == ["path_tiles"]
                   and len(upper[0]["references"]) == 2 and not lower[0]["references"]
                   and "merge_basic" in lower[0]["legend"] and "path_tiles" not in lower[0]["legend"],
                   f"{name}: the course's kernels in a panel of their own, the copy and CUB lines beside path_tiles")

        # A --dist all run: bars, a group per distribution, the sort beside CUB's two sorts, a title with keys and n.
        def bars(name, distributions, words):
            summary = [p for p in drawn[name] if p["bars"]]
            ok = (len(summary) == 1 and sorted(summary[0]["ticks"]) == sorted(distributions)
                  and summary[0]["bars"] == 3 * len(distributions) and all(w in summary[0]["title"] for w in words))
            expect(ok, f"{name}: one bar chart, 3 bars for each of {len(distributions)} distributions, "
                   f"a title with {words}" + ("" if ok else f": {summary}"))
            return summary[0]["title"] if summary else ""

        every = list(plot_sweep.DISTRIBUTIONS)
        bars("scripts/tests/merge_sort_dist_all.csv", ["uniform", "sorted", "reversed"], ["keys", "n=268435456"])
        bars("scripts/tests/sample_sort_dist_all.csv", ["uniform", "sorted", "reversed"], ["keys", "268435456"])
        bars("ch14-mergesort/h200-2026-12-01-dist-all.csv", every, ["keys", "n=268435456"])  # no summary table in it
        keys = bars("ch14-samplesort/h200-2026-12-04-dist-keys.csv", every, ["keys", "268435456"])
        pairs = bars("ch14-samplesort/h200-2026-12-04-dist-pairs.csv", every, ["pairs", "268435456"])
        expect(keys != pairs, "sample sort's two bar charts have different titles")

        # A size sweep: a line against n (log2) for the row the sort chose (the fastest row in the older
        # format) and each of CUB's two sorts, the copy left out (a copy sorts nothing), so the crossover is a
        # crossing of lines.
        for name, sort, row in [("scripts/tests/sample_sort.csv", "sample sort", "fastest row"),
                                ("scripts/tests/merge_sort_sweep.csv", "merge sort", "chosen row")]:
            sweep = titled(drawn[name], ["size sweep"])
            expect(len(sweep) == 1 and sweep[0]["x scale"] == "log" and sweep[0]["lines"] == 3
                   and sweep[0]["legend"] == [f"{sort}, {row}", "CUB merge", "CUB radix"]
                   and sweep[0]["ticks"][:2] == ["2^16", "2^18"] and "keys" in sweep[0]["title"],
                   f"{name}: the size sweep, three lines against log2 n" + ("" if len(sweep) == 1 else f": {sweep}"))

        # A sweep cut short (a failed check, every size too large for the card) writes its header and no row:
        # the other tables are still drawn.
        cut = pathlib.Path(scratch) / "sweep_cut_short.csv"
        cut.write_text((HERE / "sample_sort.csv").read_text().split("\ntable,n,")[0]
                       + "\ntable,n,log2 n,fastest row,time (ms),Gkeys/s,vs merge,vs radix,CUB merge Gkeys/s,"
                       "CUB radix Gkeys/s,copy Gkeys/s\n")
        panels = plot_sweep.render([str(cut)], str(pathlib.Path(scratch) / "cut.png"))
        expect(len(panels) == len(drawn["scripts/tests/sample_sort.csv"]) - 1,
               "a size sweep without rows draws nothing and stops nothing")

        # A learner's --quick run beside the H200's: tables paired by their names, not their order in the file.
        # (The sample sort's 2026-12-01 CSV begins with a table of build steps: pairing in file order would
        # draw the learner's sort beside those steps.)
        for learner, h200 in [("merge_sort.csv", "ch14-mergesort/h200-2026-12-04.csv"),
                              ("sample_sort.csv", "ch14-samplesort/h200-2026-12-04-dist-keys.csv"),
                              ("sample_sort.csv", "ch14-samplesort/h200-2026-12-01.csv")]:
            panels = draw(HERE / learner, ROOT / h200)
            first = panels[0]
            runs = [label for label in first["legend"] if "NVIDIA H200" in label or "test sample" in label]
            expect(len(panels) == len(drawn[f"scripts/tests/{learner}"]) and first["lines"] >= 2 and
                   any("NVIDIA H200" in r for r in runs + first["references"]) and
                   any("test sample" in r for r in runs + first["references"]) and
                   not any(t.startswith("step") for t in first["ticks"]),
                   f"{learner} beside {h200}: the first panel holds both runs' table of that name")

    print(f"{len(drawn)} plots drawn, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
