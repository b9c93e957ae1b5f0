#!/usr/bin/env python3
"""Writes scripts/colab_lessons.ipynb: a Colab notebook that runs every lesson
with nothing to clone or upload. Each lesson's .cu file, the common/ headers,
the sweep plotter and the committed H200 CSVs travel inside the notebook as
%%writefile cells, so the notebook holds the code of the commit it was
generated from.

    scripts/make_notebook.py            regenerate the notebook
    scripts/make_notebook.py --check    exit 1 if the notebook is out of date (CTest runs this)

The notebook: a first cell that shows the GPU and sets ARCH (sm_XX) from its
compute capability; the shared files; then per lesson its source, a cell
that compiles it for ARCH and runs it with --quick --csv, a cell that plots
that CSV inline beside the committed H200 run, and one cell per exercise
(the same file built with the exercise's -D macro, run on the input that
shows the bug, with the failure it should print). No cell raises on a
failed command: each prints the command, its output and its exit code, so
Run all goes to the end (scripts/tests/notebook_test.py relies on that).
Regeneration is deterministic: the same files give the same bytes.
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "scripts" / "colab_lessons.ipynb"

# (folder, program, what it teaches). A lesson is in the notebook when its .cu exists.
LESSONS = [
    ("day36-merge", "merge_path", "Day 36: merge path and the slice-size sweep"),
    ("ch12-merge-tiled", "merge_tiled", "Chapter 12: basic, tiled and circular-buffer merge, thread coarsening"),
    ("ch12-bitonic", "bitonic_sort", "Chapter 12: compare-exchange, bitonic merge, bitonic sort"),
    ("ch14-mergesort", "merge_sort", "Chapter 14.1-14.2: co-rank merge and bottom-up merge sort"),
    ("ch14-samplesort", "sample_sort", "Chapter 14.3: sample sort (splitters, buckets, per-bucket sort)"),
]

# program -> [(macro, run arguments, what the run should print: exit code and the failure)].
# An exercise is in the notebook when its macro appears in the lesson's .cu.
EXERCISES = {
    "merge_path": [
        ("EXERCISE_TIE_BUG", "--input seed-ties --per-thread 3 --no-timing",
         "exit 1: a provenance mismatch at output position 3 (got a[1], expected b[1]): "
         "coRank's second test lost its `=`, so a tie takes from b first; the values still match"),
    ],
    "bitonic_sort": [
        ("EXERCISE_ACTIVE_TID_LT_DIST", "--quick --no-timing",
         "exit 1: 12.2's merge in one block leaves a value mismatch (active threads chosen by tid < dist)"),
        ("EXERCISE_MISSING_PARTNER_GUARD", "--quick --no-timing",
         "exit 1: the one-launch-per-(k,j) sort is not a permutation or mismatches (12.3's partner guard dropped)"),
    ],
    "merge_sort": [
        ("EXERCISE_NO_BOUNDARY_GUARD", "--quick --no-timing",
         "exit 1: a check fails (14.1's trap: the merge reads past the exhausted run)"),
        ("EXERCISE_FORGET_PAIR_START", "--quick --no-timing",
         "exit 1: a check fails (14.2's trap: co-rank forgets where its pair of runs starts)"),
        ("EXERCISE_SEED_TIE_TEST", "--quick --no-timing --pairs --input few-distinct",
         "exit 1: a provenance mismatch in the seed's row (the seed's strict tie test: equal keys leave unstably)"),
    ],
    "sample_sort": [
        ("EXERCISE_UNSTABLE_RANK", "--n 100000 --input few-distinct --pairs --no-timing",
         "exit 1: a provenance mismatch (the rank within a bucket no longer keeps input order)"),
    ],
}

# Runs drawn beside each lesson's own CSV besides its committed H200 run.
EXTRA_RUNS = {"merge_path": ["scripts/data/day36-seed-t4.csv"]}

NOMINAL_CSV = re.compile(r"h200-\d{4}-\d\d-\d\d\.csv")


def present_lessons():
    return [lesson for lesson in LESSONS if (ROOT / lesson[0] / f"{lesson[1]}.cu").exists()]


def exercises_of(folder, program):
    source = (ROOT / folder / f"{program}.cu").read_text()
    return [e for e in EXERCISES.get(program, []) if re.search(rf"\b{e[0]}\b", source)]


# CMake's exercise builds, add_lesson_variant(NAME folder/program.cu MACRO): the notebook
# names each exercise binary as CMake does, so a learner meets one name for it.
CMAKE_VARIANT = re.compile(r"add_lesson_variant\((\S+)\s+(\S+)\s+(\S+)\)")


def exercise_binary(program, macro):
    for name, source, defined in CMAKE_VARIANT.findall((ROOT / "CMakeLists.txt").read_text()):
        if defined == macro and pathlib.Path(source).stem == program:
            return name
    sys.exit(f"make_notebook.py: CMakeLists.txt has no add_lesson_variant for {program} with {macro}")


def committed_csv(folder):
    """The newest h200-<date>.csv of a lesson (the run its README shows), or None."""
    names = sorted(p.name for p in (ROOT / folder).iterdir() if NOMINAL_CSV.fullmatch(p.name))
    return f"{folder}/{names[-1]}" if names else None


def markdown(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text.strip().splitlines(keepends=True)}


def code(text):
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": text.strip().splitlines(keepends=True)}


def write_file_cell(relative):
    body = (ROOT / relative).read_text()
    return code(f"%%writefile {relative}\n{body}")


FIRST_CELL = r"""
# The GPU this runtime has, and ARCH: the -arch every compile below uses, from its compute capability.
import os, re, subprocess
try:
    gpu = subprocess.run(['nvidia-smi', '--query-gpu=name,compute_cap,memory.total', '--format=csv,noheader'],
                         capture_output=True, text=True).stdout.strip().splitlines()
except FileNotFoundError:
    gpu = []
cc = gpu[0].split(',')[1].strip() if gpu and gpu[0].count(',') >= 2 else ''
if re.fullmatch(r'\d+\.\d+', cc):
    print('GPU:', gpu[0])
    ARCH = 'sm_' + cc.replace('.', '')
else:
    print('No GPU in this runtime: Runtime > Change runtime type > T4 GPU, then Run all again.')
    print('The compiles below still work (for sm_75, the T4); each run stops at its no-GPU line.')
    ARCH = 'sm_75'
known = re.findall(r'compute_(\d+)\b', subprocess.run(['nvcc', '--list-gpu-arch'], capture_output=True, text=True).stdout)
if known and ARCH[3:] not in known:
    newest = max(known, key=int)
    print(f'this nvcc cannot build {ARCH}; building PTX for compute_{newest}, which the driver compiles for the card')
    ARCH = 'compute_' + newest
os.environ['ARCH'] = ARCH  # for !nvcc ... -arch=$ARCH in cells of your own
print('ARCH =', ARCH)
!nvcc --version | tail -n 2
"""

HELPERS = r"""
# sh() runs one command and prints it, its output and its exit code; it never raises, so Run all
# goes on past a failure. plot() draws a lesson's CSV inline, beside the committed H200 run.
import shlex, sys
from IPython.display import Image, display

def sh(command, cwd='.'):
    print('$', command, flush=True)
    process = subprocess.Popen(command, shell=True, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    for line in process.stdout:
        print(line, end='', flush=True)
    code = process.wait()
    print(f'[exit {code}]', flush=True)
    return code

def plot(csv, *others):
    files = [f for f in (csv,) + others if os.path.exists(f)]
    if not os.path.exists(csv):
        print(f'{csv} was not written (the run above stopped early: no GPU?); plotting the committed runs alone')
    if not files:
        return
    png = files[0][:-len('.csv')] + '.png'
    command = f'{shlex.quote(sys.executable)} scripts/plot_sweep.py ' + ' '.join(files) + f' --out {png}'
    if sh(command) == 0:
        display(Image(png))
"""


def build():
    present = [(folder, program, title, exercises_of(folder, program), committed_csv(folder))
               for folder, program, title in present_lessons()]
    headers = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "common").iterdir()
                     if p.suffix in (".hpp", ".cuh"))
    extras = sorted({f for _, program, *_ in present for f in EXTRA_RUNS.get(program, [])})
    folders = sorted({"common", "scripts"} | {str(pathlib.PurePosixPath(f).parent) for f in extras}
                     | {lesson[0] for lesson in present})
    cells = [
        markdown("""
# GPU merge and sort lessons

Runtime > Change runtime type > T4 GPU (any NVIDIA GPU works), then Runtime > Run all.
The lesson sources are inside this notebook (generated by `scripts/make_notebook.py`
from the repository), so nothing needs to be cloned or uploaded. The first cell
reads the card's compute capability and sets `ARCH`, which every compile uses.
Each lesson compiles its one `.cu` file, runs with `--quick` (smaller sizes, for a
short cell; drop it for the full sizes) and `--csv`, and plots its sweep beside
the committed H200 run. The exercise cells build the same file with an injected
bug and show the check that catches it: those runs are meant to fail (exit 1).
"""),
        code(FIRST_CELL),
        code(HELPERS + f"\nfor folder in {folders!r}:\n    os.makedirs(folder, exist_ok=True)"),
        markdown("## The shared headers (`common/`), the plotter and the committed runs"),
    ]
    cells += [write_file_cell(h) for h in headers]
    cells.append(write_file_cell("scripts/plot_sweep.py"))
    cells += [write_file_cell(f) for f in extras]
    for folder, program, title, exercises, h200 in present:
        cells.append(markdown(f"## {title}\n\n`{folder}/{program}.cu`; its `README.md` in the repository "
                              "explains the tables and the exercises."))
        cells.append(write_file_cell(f"{folder}/{program}.cu"))
        if h200:
            cells.append(write_file_cell(h200))
        cells.append(code(
            f"# Build the one file for this card, then run it: --quick for smaller sizes, --csv for the plot below.\n"
            f"if sh(f'nvcc -std=c++17 -O3 -arch={{ARCH}} -o {program} {program}.cu', cwd='{folder}') == 0:\n"
            f"    sh('./{program} --quick --csv {program}.csv', cwd='{folder}')"))
        others = ([h200] if h200 else []) + EXTRA_RUNS.get(program, [])
        cells.append(code(f"plot({', '.join(repr(f) for f in [f'{folder}/{program}.csv'] + others)})"))
        for macro, arguments, expected in exercises:
            binary = exercise_binary(program, macro)
            cells.append(markdown(f"### Exercise: `-D{macro}`\n\nExpected: {expected}. The lesson's README "
                                  "has the hints and the fix."))
            cells.append(code(
                f"if sh(f'nvcc -std=c++17 -O3 -arch={{ARCH}} -D{macro} -o {binary} {program}.cu', "
                f"cwd='{folder}') == 0:\n"
                f"    sh('./{binary} {arguments}', cwd='{folder}')"))
    notebook = {
        "cells": cells,
        "metadata": {"accelerator": "GPU", "colab": {"provenance": []},
                     "kernelspec": {"display_name": "Python 3", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 0,
    }
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def main():
    text = build()
    if sys.argv[1:] == ["--check"]:
        if not NOTEBOOK.exists() or NOTEBOOK.read_text() != text:
            print(f"{NOTEBOOK.relative_to(ROOT)} is out of date: run scripts/make_notebook.py")
            return 1
        print(f"{NOTEBOOK.relative_to(ROOT)} matches the sources")
        return 0
    if sys.argv[1:]:
        print("usage: scripts/make_notebook.py [--check]", file=sys.stderr)
        return 2
    NOTEBOOK.write_text(text)
    print(f"wrote {NOTEBOOK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
