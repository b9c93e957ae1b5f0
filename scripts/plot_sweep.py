#!/usr/bin/env python3
"""Plot a lesson's sweep from the CSV its --csv option writes.

    ./merge_path --csv sweep.csv
    scripts/plot_sweep.py sweep.csv                      # every table, GB/s, to sweep.png
    scripts/plot_sweep.py sweep.csv --table "Part 2" --column "time (ms)" --out part2.png

The CSV holds one block per table: a header line starting with "table", then
that table's rows, each starting with the table's title. Each row is drawn as
one bar, labelled by the columns before "time (ms)". Without matplotlib the
same bars are printed as text.
"""
import argparse
import csv
import sys


def read_tables(path):
    """Returns [(title, header, rows)] in file order."""
    tables, header = [], None
    with open(path, newline="") as f:
        for cells in csv.reader(f):
            if not cells:
                continue
            if cells[0] == "table":
                header = cells[1:]
                continue
            if header is None:
                sys.exit(f"plot_sweep.py: {path} does not look like a lesson's --csv output")
            title, row = cells[0], cells[1:]
            if not tables or tables[-1][0] != title or tables[-1][1] != header:
                tables.append((title, header, []))
            tables[-1][2].append(row)
    return tables


def bars(header, rows, column):
    """(label, value) per row. A label is the first cell ("per thread 4" when
    it is a number), plus as many of the next cells before the time column as
    it takes to tell the rows apart ("merge_tiled, tile 1024, vt 8")."""
    value_at = header.index(column)
    label_end = header.index("time (ms)") if "time (ms)" in header else 1

    def label(row, width):
        parts = []
        for title, cell in zip(header[:width], row[:width]):
            numeric = cell.replace(".", "", 1).isdigit()
            parts.append(f"{title} {cell}" if numeric else cell)
        return ", ".join(p for p in parts if p)

    width = 1
    while width < label_end and len({label(r, width) for r in rows}) < len(rows):
        width += 1
    out = []
    for row in rows:
        try:
            out.append((label(row, width), float(row[value_at])))
        except (ValueError, IndexError):
            continue  # a "-" cell: nothing to draw
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--table", default="", help="only tables whose title contains this")
    parser.add_argument("--column", default="GB/s", help='the value to plot (default "GB/s")')
    parser.add_argument("--out", default="sweep.png", help="the PNG to write (default sweep.png)")
    args = parser.parse_args()

    chosen = []
    for title, header, rows in read_tables(args.csv):
        if args.table in title and args.column in header:
            chosen.append((title, bars(header, rows, args.column)))
    if not chosen:
        sys.exit(f"plot_sweep.py: no table in {args.csv} has a '{args.column}' column"
                 + (f" and a title containing '{args.table}'" if args.table else ""))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        for title, data in chosen:
            print(f"\n{title} ({args.column})")
            top = max((v for _, v in data), default=1.0) or 1.0
            for label, value in data:
                print(f"  {label[:40]:<40} {value:>10.3f} {'#' * int(50 * value / top)}")
        print("\n(matplotlib is not installed: printed instead of plotted)")
        return

    fig, axes = plt.subplots(len(chosen), 1, figsize=(9, 1.2 + 0.35 * sum(len(d) for _, d in chosen)),
                             squeeze=False)
    for ax, (title, data) in zip(axes[:, 0], chosen):
        labels = [label for label, _ in data][::-1]
        values = [value for _, value in data][::-1]
        ax.barh(labels, values, color="tab:blue")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(args.column)
        for y, value in enumerate(values):
            ax.text(value, y, f" {value:g}", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
