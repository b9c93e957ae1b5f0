#!/usr/bin/env python3
"""Plot a lesson's sweep from the CSV its --csv option writes.

    build/merge_path --csv sweep.csv && scripts/plot_sweep.py sweep.csv     # writes sweep.png
    scripts/plot_sweep.py day36-merge/h200-2026-12-01.csv scripts/data/day36-seed-t4.csv --out day36.png
    scripts/plot_sweep.py FILE.csv --table "Key-value" --column "time (ms)" --x vt

One panel per table. A row with a number in the table's knob column (the x
axis: per thread, tile, n, ...; the first knob column that varies, or --x)
is a point, and the rows of one kernel (its name without its numbers) make
a line. The copy row, the library row (cub::..., thrust::...) and rows
without a knob (the one-thread baseline) are labelled horizontal reference
lines (a table with a "% of copy" column but no copy row, merge sort's
passes, gets the copy's line from it; a merge table's library row without
GB/s gets it from its time). A table whose rows have no knob to share
(bitonic's steps, one kernel row) is drawn as a climb, row after row. Lines
whose best value lies below a third of every other line's worst (the
course's kernels beside path_tiles) get a panel of their own. A --dist all
run is drawn as bars, a distribution's side by side: the sort's, then each
library column's beside it (`CUB merge Gkeys/s`, ...), from its summary
table, or built from its per-distribution tables where it wrote none; its
first distribution's table is drawn as well. A sort's steps timed in place
(sample sort's table whose first column is "step") are a climb of their
times (ms), the sum left out. A size sweep (its first column
n) is drawn as lines against n: the row the sort chooses (older CSVs: the
fastest row) and each library
column (`CUB merge Gkeys/s`, ...), so where the sort overtakes CUB shows as a
crossing. The x axis is log2 where the
knob doubles or grows by whole factors, the y axis logarithmic where the
values span more than 50x. The title carries the card and date from each
CSV's first line (`run,<program>,<card>,<date>`). Several CSVs (your card
and the committed H200 run, say) share the panels, one marker and line
style per run; a table of the first CSV is drawn beside the other CSVs'
tables of the same name (the title without its numbers), so a --quick run
meets the H200's table of the same sort.

The value plotted (--column) is by default Gkeys/s where a table has it
(the sorts), else GB/s. CSVs written before the run line existed (the
h200-2026-11-30.csv files of earlier commits) are read too: the card and date come
from the file name, and their old column names (`ms`, `GB/s/pass`, ...) are
mapped onto the common ones.

Needs matplotlib (pip install --user matplotlib). Without it the values are
printed as text and the exit code is 77 (no PNG written).
"""
import argparse
import copy
import csv
import math
import pathlib
import re
import sys
import textwrap

NO_MATPLOTLIB = 77
VALUES = ("time (ms)", "GB/s", "Gkeys/s", "% of copy")      # the first of these ends the knob columns
OLD_NAMES = {"ms": "time (ms)", "GB/s/pass": "GB/s", "version": "kernel", "operation": "kernel"}
COPY_PREFIXES = ("cudaMemcpy", "device copy")
LIBRARY_PREFIXES = ("cub::", "thrust::")
SUMMARY = "distribution"  # the first column of a summary by distribution: a row a distribution
SWEEP = "n"  # the first column of a size sweep (the chapter-14 sorts): a row a size
STEP = "step"  # the first column of a sort's steps timed in place (sample sort): a row a step, then "sum"
DISTRIBUTIONS = ("uniform", "sorted", "reversed", "all-equal", "few-distinct", "zipf", "gaussian", "staggered",
                 "organ-pipe")  # common/inputs.hpp's names, as the sort lessons' --dist all prints them
OWN_SCALE = 3  # lines whose best value lies below a third of every other line's worst get a panel of their own


class Table:
    def __init__(self, header, title="", rows=None):
        self.header, self.title, self.rows = header, title, rows or []

    def name(self):
        """The title without its numbers: what pairs a table of one run with a table of another
        (n, tile shapes and sizes differ between a learner's --quick run and the H200's)."""
        return " ".join(w for w in self.title.split() if not re.search(r"\d", w))

    def distribution(self):
        """(distribution, the title without it) for one table of a --dist all run, else None."""
        for d in DISTRIBUTIONS:
            found = re.search(rf"(?:^|(?<=[\s,(])){re.escape(d)}(?=$|[\s,)])", self.title)
            if found:
                rest = self.title[:found.start()] + self.title[found.end():]
                return d, re.sub(r"\s*,\s*,|\(\s*\)", ",", re.sub(r"\s+", " ", rest)).strip(" ,")
        return None


class Run:
    def __init__(self, path):
        self.path, self.program, self.card, self.date, self.tables = path, "", "", "", []

    def label(self):
        return f"{self.card}, {self.date}" if self.date else self.card


def number(cell):
    """A cell as a float, or None: '4', '0.346', '2^24', '16777216'."""
    cell = cell.strip()
    power = re.fullmatch(r"(\d+)\^(\d+)", cell)
    if power:
        return float(int(power.group(1)) ** int(power.group(2)))
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_run(path):
    run = Run(path)
    table = None
    with open(path, newline="") as f:
        for cells in csv.reader(f):
            if not cells or not any(c.strip() for c in cells):
                continue
            if cells[0] == "run":
                run.program, run.card, run.date = (cells[1:] + ["", "", ""])[:3]
            elif cells[0] == "table":
                header = [OLD_NAMES.get(c, c) for c in cells[1:]]
                table = Table(header)
                run.tables.append(table)
            elif table is None:
                sys.exit(f"plot_sweep.py: {path} does not look like a lesson's --csv output "
                         "(no 'table' line before its first row)")
            else:
                table.title = table.title or cells[0]
                table.rows.append(cells[1:])
    if not run.card:  # the old layout: h200-2026-11-30.csv
        found = re.match(r"([A-Za-z0-9]+)-(\d{4}-\d\d-\d\d)", pathlib.Path(path).name)
        run.card, run.date = (found.group(1).upper(), found.group(2)) if found else (pathlib.Path(path).stem, "")
    if not run.program:
        run.program = pathlib.Path(path).parent.name or pathlib.Path(path).stem
    for table in run.tables:
        if table.header and table.header[0] not in ("kernel", SUMMARY, SWEEP, STEP):  # Day 36's old part 2: the knob came first
            table.header = ["kernel"] + table.header
            table.rows = [[table.title] + row for row in table.rows]
        fill_library_rate(table)
    return run


def fill_library_rate(table):
    """A merge table (no passes column: every row reads and writes the same bytes) whose library row has
    no GB/s (Day 36's CSVs print '-'): its GB/s is the copy's scaled by the two times."""
    if "passes" in table.header or "Gkeys/s" in table.header or "GB/s" not in table.header or "time (ms)" not in table.header:
        return  # a sort's rows move their own numbers of passes
    rate, time = table.header.index("GB/s"), table.header.index("time (ms)")
    copy_row = next((r for r in table.rows if r[0].startswith(COPY_PREFIXES) and len(r) > rate), None)
    if copy_row is None or number(copy_row[rate]) is None or not number(copy_row[time]):
        return
    for row in table.rows:
        if row[0].startswith(LIBRARY_PREFIXES) and len(row) > rate and number(row[rate]) is None and number(row[time]):
            row[rate] = f"{number(copy_row[rate]) * number(copy_row[time]) / number(row[time]):.0f}"


def knob_columns(header):
    end = next((i for i, title in enumerate(header) if title in VALUES), len(header))
    return list(range(1, end))


def is_reference(name):
    return name.startswith(COPY_PREFIXES) or name.startswith(LIBRARY_PREFIXES)


def family(name):
    """A kernel's name without its numbers: 'mergeCoRank 4 per thread' -> 'mergeCoRank per thread',
    'merge_path 256x16 pipelined' -> 'merge_path pipelined'."""
    words = [w for w in name.split() if not re.fullmatch(r"[\d.^]+(x[\d.]+)*,?", w)]
    return " ".join(words) or name


def choose_x(table, wanted):
    knobs = knob_columns(table.header)
    if wanted:
        return table.header.index(wanted) if wanted in table.header[1:] else None
    for c in knobs:
        values = {number(row[c]) for row in table.rows
                  if c < len(row) and not is_reference(row[0]) and number(row[c]) is not None}
        if len(values) >= 2:
            return c
    return None


class Panel:
    """What one table of one run contributes to a panel."""

    def __init__(self, run, table, column, x):
        self.run, self.table, self.column = run, table, column
        self.xtitle = table.header[x] if x is not None else ""
        self.series, self.references, self.climbs = {}, [], {}  # climbs: label -> [(step, value)]
        self.summary = table.header[0] == SUMMARY  # drawn as bars, its libraries its own columns
        self.note = ""  # said after the title: why this panel holds only some of the table's lines
        if self.summary:
            self.summary_climbs()
            return
        if table.header[0] == SWEEP and ("chosen row" in table.header or "fastest row" in table.header):
            self.xtitle = "n (keys)"
            self.sweep_lines()
            return
        y = table.header.index(column)
        points = []
        for row in table.rows:
            if len(row) <= y or number(row[y]) is None or (table.header[0] == STEP and row[0] == "sum"):
                continue
            value, xv = number(row[y]), number(row[x]) if x is not None and x < len(row) else None
            if column == "Gkeys/s" and row[0].startswith(COPY_PREFIXES):
                continue  # a copy sorts nothing: its keys per second are no ceiling for a sort
            if is_reference(row[0]) or xv is None:
                self.references.append((row[0], value))
            else:
                points.append((row, xv, value))
        # One line per kernel family; where a family repeats an x, split it by its next varying knob.
        by_family = {}
        for point in points:
            by_family.setdefault(family(point[0][0]), []).append(point)
        for name, members in by_family.items():
            split = None
            if len({xv for _, xv, _ in members}) < len(members):
                split = next((c for c in knob_columns(table.header)
                              if c != x and len({m[0][c] for m in members if c < len(m[0])}) > 1), None)
            titled = name == family(table.title)  # no kernel column: the rows are named by the split knob alone
            for row, xv, value in members:
                label = name if split is None else row[split] if titled else f"{name}, {table.header[split]} {row[split]}"
                self.series.setdefault(label, []).append((xv, value))
        if self.series and all(len(s) == 1 for s in self.series.values()):
            # Nothing to join into lines: the rows are steps (a climb), drawn in table order.
            # Rows without a number in the knob column are steps of the climb too, not references.
            self.climbs[column] = [(row[0], number(row[y])) for row in table.rows
                                   if len(row) > y and number(row[y]) is not None and not is_reference(row[0])]
            self.references = [(name, value) for name, value in self.references if is_reference(name)]
            self.series = {}
        share = table.header.index("% of copy") if "% of copy" in table.header else None
        if column == "GB/s" and share is not None and not any(n.startswith(COPY_PREFIXES) for n, _ in self.references):
            # No copy row (merge sort's passes), but each row's share of it: the copy's GB/s follows.
            copies = sorted(number(r[y]) * 100 / number(r[share]) for r in table.rows if len(r) > max(y, share)
                            and number(r[y]) and number(r[share]))
            if copies:
                self.references.append(("device copy (from % of copy)", round(copies[len(copies) // 2])))
        if not self.series and any(not is_reference(name) for name, _ in self.references):
            # No knob varies (one kernel row: a --dist all table): the kernel rows are a climb of their own.
            self.climbs[column] = [(name, value) for name, value in self.references if not is_reference(name)]
            self.references = [(name, value) for name, value in self.references if is_reference(name)]
        for line in self.series.values():
            line.sort()

    def title(self):
        """The table's title, saying keys where a sort's does not say pairs (the lessons name only pairs)."""
        title = self.table.title
        if "Gkeys/s" in self.table.header and not re.search(r"\b(pairs|keys|key-value)\b", title):
            title += ", keys"
        return title + self.note

    def summary_climbs(self):
        """The column itself is the sort's (named by the title: 'summary: sampleSort 256-way by
        distribution'); a column 'X <column>' is library X's, on the same rows."""
        sort = re.sub(r"^summary: ", "", self.table.title.split(" by distribution")[0])
        for c, title in enumerate(self.table.header):
            if title == self.column or title.endswith(" " + self.column):
                label = sort if title == self.column else title[:-len(self.column)].strip()
                self.climbs[label] = [(row[0], number(row[c])) for row in self.table.rows
                                      if len(row) > c and number(row[c]) is not None]

    def sweep_lines(self):
        """A size sweep, a line against n a column: the column itself is the row's the sort chose (CSVs before
        2026-12-05: the fastest row's), named by the title ('size sweep: sample sort, uniform uint32 keys'); a
        column 'X <column>' is X's; the copy's keys a second are left out, as everywhere (a copy sorts nothing)."""
        row = "chosen row" if "chosen row" in self.table.header else "fastest row"
        sort = re.sub(r"^size sweep: ", "", self.table.title).split(",")[0] + ", " + row
        for c, title in enumerate(self.table.header):
            if title == self.column or title.endswith(" " + self.column):
                label = sort if title == self.column else title[:-len(self.column)].strip()
                if label.startswith("copy"):
                    continue
                line = sorted((number(row[0]), number(row[c])) for row in self.table.rows
                              if len(row) > c and number(row[0]) is not None and number(row[c]) is not None)
                if line:  # a sweep cut short (a failed check, every size too large) may have no row
                    self.series[label] = line

    def with_lines(self, labels, references, note):
        part = copy.copy(self)
        part.series = {label: line for label, line in self.series.items() if label in labels}
        part.references, part.note = (self.references if references else []), note
        return part

    def plottable(self):
        return bool(self.series or any(self.climbs.values()))

    def values(self):
        return ([v for s in self.series.values() for _, v in s] + [v for c in self.climbs.values() for _, v in c]
                + [v for _, v in self.references])


def per_distribution(run):
    """A --dist all run's tables, one per distribution: [(rest of the title, [(distribution, table)])] for
    tables with a library row whose titles differ only in the distribution."""
    found = {}
    for table in run.tables:
        split = table.distribution()
        if split and any(row[0].startswith(LIBRARY_PREFIXES) for row in table.rows):
            found.setdefault((tuple(table.header), split[1]), []).append((split[0], table))
    return [(rest, members) for (_, rest), members in found.items() if len({d for d, _ in members}) > 1]


def summary_of(rest, members, column):
    """A summary by distribution built from the tables of a --dist all run that wrote none (the CSVs of
    2026-12-01): the best row's value and each library row's, a distribution a row."""
    header = list(members[0][1].header)
    chosen = column or ("Gkeys/s" if "Gkeys/s" in header else "GB/s")
    y = header.index(chosen)
    libraries = [row[0] for row in members[0][1].rows if row[0].startswith(LIBRARY_PREFIXES)]
    rows, bests = [], []
    for distribution, table in members:
        kernels = [r for r in table.rows if not is_reference(r[0]) and len(r) > y and number(r[y]) is not None]
        if not kernels:
            continue
        best = max(kernels, key=lambda r: number(r[y]))
        bests.append(best[0])
        library = {r[0]: r[y] for r in table.rows if r[0] in libraries and len(r) > y}
        rows.append([distribution, best[y]] + [library.get(name, "") for name in libraries])
    sort = bests[0] if len(set(bests)) == 1 else "the fastest row"
    return Table([SUMMARY, chosen] + [f"{name} {chosen}" for name in libraries],
                 f"summary: {sort} by distribution, {rest}", rows)


def tables_to_draw(run, column):
    """A --dist all run draws its first distribution's table and, for the others, one summary by
    distribution: the one the run wrote (its title given n and the key type where it lacks them), else
    one built from the tables."""
    tables, summaries = list(run.tables), [t for t in run.tables if t.header[:1] == [SUMMARY]]
    for rest, members in per_distribution(run):
        tables = [t for t in tables if all(t is not m for _, m in members[1:])]
        for summary in summaries:
            if any(t is summary for t in tables) and not re.search(r"\bn=\d|\b\d{4,}\b", summary.title):  # no n in it
                titled = copy.copy(summary)  # the run's own table keeps its title
                titled.title = f"{summary.title} ({rest})"
                tables = [titled if t is summary else t for t in tables]
        header = members[0][1].header
        if not summaries and (column or ("Gkeys/s" if "Gkeys/s" in header else "GB/s")) in header:
            tables.append(summary_of(rest, members, column))
    return tables


def panels_of(run, column, table_filter, wanted_x):
    """The run's tables that have something to draw, with the tables that only
    hold reference rows (Day 36's old layout) folded into them."""
    panels, loose = [], []
    for table in tables_to_draw(run, column):
        if table_filter not in table.title:
            continue
        chosen = column or ("time (ms)" if table.header[:1] == [STEP] else "Gkeys/s" if "Gkeys/s" in table.header else "GB/s")
        if chosen not in table.header:
            continue
        panel = Panel(run, table, chosen, choose_x(table, wanted_x))
        (panels if panel.plottable() else loose).append(panel)
    for panel in panels:
        for other in loose:
            if other.column == panel.column and not panel.summary:
                panel.references += other.references
    return panels


def pair_runs(per_run):
    """One group of panels per panel of the first run, with the other runs' panels of the same table
    name (the title without its numbers) and value: a learner's --quick run beside the H200's tables."""
    groups, used = [], set()
    for first in per_run[0]:
        group = [first]
        for panels in per_run[1:]:
            match = next((p for p in panels if id(p) not in used and p.column == first.column
                          and p.table.name() == first.table.name()), None)
            if match:
                used.add(id(match))
                group.append(match)
        groups.append(group)
    return groups


def own_scales(group):
    """A group whose lines fall into two bands, the course's kernels far below the production ones
    (every line of the upper band above OWN_SCALE x the lower band's best), is drawn as two panels,
    each on its own scale; the reference lines stay with the upper band."""
    best, worst = {}, {}
    for panel in group:
        if panel.summary or panel.climbs:
            return [group]
        for label, line in panel.series.items():
            values = [v for _, v in line]
            best[label], worst[label] = max(best.get(label, 0), *values), min(worst.get(label, math.inf), *values)
    order = sorted(best, key=best.get)
    cuts = [i for i in range(1, len(order)) if min(worst[h] for h in order[i:]) > OWN_SCALE * best[order[i - 1]]]
    if not cuts:
        return [group]
    low, high = set(order[:cuts[-1]]), set(order[cuts[-1]:])
    note = " (the lines below a third of the panel above's, on their own scale)"
    return [[p.with_lines(high, True, "") for p in group], [p.with_lines(low, False, note) for p in group]]


def is_doubling(xs):
    xs = sorted({x for x in xs if x > 0})
    if len(xs) < 2 or xs[-1] / xs[0] < 4:
        return False
    powers = [x for x in xs if float(x).is_integer() and int(x) & (int(x) - 1) == 0]
    return 2 * len(powers) >= len(xs)


def is_geometric(xs):
    """A knob that grows by whole factors (x2, x4, ...) from one value to the next without being powers of two,
    such as merge sort's run widths (16896 x 4^k): a log2 axis too, its ticks at the values themselves."""
    xs = sorted({x for x in xs if x > 0})
    if len(xs) < 3 or xs[-1] / xs[0] < 8:
        return False
    ratios = [b / a for a, b in zip(xs, xs[1:])]
    return all(r >= 1.99 and abs(r - round(r)) < 0.01 for r in ratios)


def print_text(groups):
    for group in groups:
        for panel in group:
            print(f"\n{panel.table.title} ({panel.column}; {panel.run.label()})")
            for label, line in panel.series.items():
                print(f"  {label}: " + ", ".join(f"{panel.xtitle} {x:g}: {v:g}" for x, v in line))
            for label, climb in panel.climbs.items():
                print(f"  {label}: " + ", ".join(f"{name} {value:g}" for name, value in climb))
            for name, value in panel.references:
                print(f"  [reference] {name}: {value:g}")


def tick_label(t):
    """1024 stays 1024; 2^16 and up read as powers of two; 3.5 stays 3.5."""
    if t.is_integer() and t >= 65536 and int(t) & (int(t) - 1) == 0:
        return f"2^{int(t).bit_length() - 1}"
    return f"{int(t)}" if t.is_integer() else f"{t:g}"


def label_references(ax, references, values):
    """Writes each reference line's name on it, at the right; a label that would
    sit on the one before it goes to the left end instead."""
    logarithmic = values and max(values) / min(values) > 50
    span = (math.log(max(values) / min(values)) if logarithmic else max(values) - min(values)) if values else 1

    def height(v):
        return math.log(v) if logarithmic else v

    last_right = None
    for value, text, colour in sorted(references):
        if value <= 0 and logarithmic:
            continue
        crowded = last_right is not None and abs(height(value) - last_right) < 0.06 * (span or 1)
        x, ha = (0.005, "left") if crowded else (0.995, "right")
        if not crowded:
            last_right = height(value)
        ax.annotate(text, xy=(x, value), xycoords=("axes fraction", "data"), ha=ha, va="bottom",
                    fontsize=7, color=colour)


def draw(groups, runs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator

    markers, styles = "os^Dv", ["-", "--", ":", "-."]
    colours = plt.get_cmap("tab10").colors + plt.get_cmap("Dark2").colors
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 4.6 * len(groups)), squeeze=False)
    for ax, group in zip(axes[:, 0], groups):
        families = []
        for panel in group:
            families += [f for f in list(panel.series) + list(panel.climbs) if f not in families]
        values = [v for panel in group for v in panel.values() if v > 0]
        climbs = [c for panel in group for c in panel.climbs.values() if c]
        names = []  # the steps (or distributions) of every run, the longest run's order first
        for climb in sorted(climbs, key=len, reverse=True):
            names += [name for name, _ in climb if name not in names]
        references = []
        for r, panel in enumerate(group):
            card = f" ({panel.run.card})" if len(runs) > 1 else ""
            for label, line in panel.series.items():
                ax.plot([x for x, _ in line], [v for _, v in line], marker=markers[r % len(markers)],
                        linestyle=styles[r % len(styles)], color=colours[families.index(label) % len(colours)],
                        label=label + card)
            bars = list(panel.climbs.items()) if panel.summary else []
            for b, (label, climb) in enumerate(bars):  # distributions are categories: bars side by side, a run's hatched
                width = 0.8 / (len(bars) * len(group))
                ax.bar([names.index(n) - 0.4 + (r * len(bars) + b + 0.5) * width for n, _ in climb], [v for _, v in climb],
                       width, color=colours[families.index(label) % len(colours)], hatch="//" if r else None,
                       label=f"{label}{card}")
            for label, climb in ([] if bars else panel.climbs.items()):  # the tick labels name the rows,
                colour = colours[r % len(colours)]
                ax.plot([names.index(n) for n, _ in climb], [v for _, v in climb], marker=markers[r % len(markers)],
                        linestyle=styles[r % len(styles)], color=colour, label=panel.run.label())  # the legend the run
            for name, value in panel.references:
                colour = ("black" if name.startswith(COPY_PREFIXES)
                          else "tab:red" if name.startswith(LIBRARY_PREFIXES) else "tab:gray")
                ax.axhline(value, color=colour, linestyle=styles[(r + 1) % len(styles)], linewidth=1.2)
                references.append((value, f"{name}{card}: {value:g}", colour))
        xs = [x for panel in group for line in panel.series.values() for x, _ in line]
        label_references(ax, references, values)
        if climbs:
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels([textwrap.fill(n, 22) for n in names], fontsize=7, rotation=20, ha="right")
        elif xs:
            ticks = sorted(set(xs))
            if is_doubling(xs):
                ax.set_xscale("log", base=2)
                ticks = [t for t in ticks if t.is_integer() and int(t) & (int(t) - 1) == 0]
            elif is_geometric(xs):
                ax.set_xscale("log", base=2)
            if len(ticks) <= 14:
                ax.xaxis.set_major_locator(FixedLocator(ticks))
                ax.xaxis.set_minor_locator(NullLocator())
                ax.set_xticklabels([tick_label(t) for t in ticks], fontsize=8)
            ax.set_xlabel(group[0].xtitle)
        if values and max(values) / min(values) > 50:
            ax.set_yscale("log")
        ax.set_ylabel(group[0].column)
        ax.set_title(textwrap.fill(group[0].title(), 100), fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    program = runs[0].program
    fig.suptitle(f"{program}: " + " and ".join(run.label() for run in runs), fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_figheight()))  # room for the suptitle
    fig.savefig(out, dpi=110, bbox_inches="tight")
    drawn = [read_back(ax) for ax in axes[:, 0]]
    plt.close(fig)
    return drawn


def read_back(ax):
    """What one panel shows, read from the drawn axes (scripts/tests/plot_test.py checks it)."""
    legend = ax.get_legend()
    return {"title": ax.get_title().replace("\n", " "), "x scale": ax.get_xscale(), "y scale": ax.get_yscale(),
            "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
            "references": [t.get_text() for t in ax.texts], "bars": len(ax.patches),
            "ticks": [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()],
            "lines": len([line for line in ax.get_lines() if len(line.get_xdata()) > 0])}


def render(paths, out, table="", column="", x=""):
    """Reads the CSVs and draws the panels to out; returns what each panel shows (read_back), or None
    where matplotlib is missing (then the values are printed as text)."""
    runs = []
    for path in paths:
        if not pathlib.Path(path).is_file():
            sys.exit(f"plot_sweep.py: no such file: {path}")
        runs.append(read_run(path))
    per_run = [panels_of(run, column, table, x) for run in runs]
    if not per_run[0]:
        sys.exit(f"plot_sweep.py: no table in {paths[0]} has a sweep to draw"
                 + (f" in column '{column}'" if column else "")
                 + (f" with a title containing '{table}'" if table else ""))
    groups = [part for group in pair_runs(per_run) for part in own_scales(group)]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print_text(groups)
        print(f"\nplot_sweep.py: matplotlib is not installed, so {out} was not drawn; "
              "install it with: python3 -m pip install --user matplotlib")
        return None
    return draw(groups, runs, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="a lesson's --csv output; several share the panels")
    parser.add_argument("--table", default="", help="only tables whose title contains this")
    parser.add_argument("--column", default="", help='the value to plot (default Gkeys/s where present, else GB/s)')
    parser.add_argument("--x", default="", help="the knob column for the x axis (default: the first that varies)")
    parser.add_argument("--out", default="", help="the PNG to write (default: the first CSV's name with .png)")
    args = parser.parse_args()
    out = args.out or str(pathlib.Path(args.csv[0]).with_suffix(".png"))
    if render(args.csv, out, args.table, args.column, args.x) is None:
        return NO_MATPLOTLIB
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
