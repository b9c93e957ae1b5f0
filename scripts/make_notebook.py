#!/usr/bin/env python3
"""Writes scripts/colab_lessons.ipynb: a Colab notebook that runs every lesson
with nothing to clone or upload. Each lesson's .cu file, the common/ headers,
the sweep plotter and the committed H200 CSVs travel inside the notebook, so
the notebook holds the code of the commit it was generated from.

    scripts/make_notebook.py            regenerate the notebook
    scripts/make_notebook.py --check    exit 1 if the notebook is out of date (CTest runs this)

The notebook: one setup cell (a Colab form: its code hidden until opened)
that shows the GPU, sets ARCH (sm_XX) from its compute capability, defines
the helpers and writes the shared files; then per lesson, its cells tagged
lesson:<folder> and needing nothing but the setup cell: its source and its
newest committed H200 CSV as %%writefile cells, a cell that waits for its
compile for ARCH (the setup cell queued every compile, two run at a time)
and runs it with --quick --csv, a cell that plots that CSV inline beside the
committed run, and one cell per exercise (the same file built with the
exercise's -D macro, run on the input that shows the bug, with the failure
it should print). No cell raises on a failed command: each prints the
command, its output and its exit code, so Run all goes to the end
(scripts/tests/notebook_test.py relies on that). Regeneration is
deterministic: the same files give the same bytes.
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

# A lesson's committed runs: h200-<date>.csv, or h200-<date>-<what>.csv (-pairs, -dist-keys, ...).
COMMITTED_CSV = re.compile(r"h200-(\d{4}-\d\d-\d\d)(-[a-z-]+)?\.csv")

# What Run all's compiles take, measured by scripts/tests/notebook_test.py on a 2-core machine without a GPU.
RUN_ALL_COMPILE = "3.0 minutes, measured 2026-12-05 on a 2-core machine without a GPU"


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
    """The run a learner's --quick run is drawn beside: the newest committed one, keys before pairs (the
    --quick run sorts keys), a plain name before a suffixed one; or None."""
    def rank(name):
        date, what = COMMITTED_CSV.fullmatch(name).groups()
        return date, "pairs" not in (what or ""), not what
    names = [p.name for p in (ROOT / folder).iterdir() if COMMITTED_CSV.fullmatch(p.name)]
    return f"{folder}/{max(names, key=rank)}" if names else None


def markdown(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text.strip().splitlines(keepends=True)}


def code(text, tag, form=False):
    """A code cell; its tag ("setup" or "lesson:<folder>") lets notebook_test.py run one lesson's cells alone."""
    metadata = {"tags": [tag]}
    if form:
        metadata["cellView"] = "form"  # Colab shows the title and hides the code until double-clicked
    return {"cell_type": "code", "metadata": metadata, "execution_count": None, "outputs": [],
            "source": text.strip().splitlines(keepends=True)}


def write_file_cell(relative, tag):
    body = (ROOT / relative).read_text()
    return code(f"%%writefile {relative}\n{body}", tag)


SETUP = r"""
# @title Setup: the GPU, ARCH, the helpers and the shared files (run this first; double-click to see the code)
# ARCH is the -arch every compile uses, from the card's compute capability.
import hashlib, os, pathlib, re, shlex, subprocess, sys, threading
from IPython.display import Image, display
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
print(subprocess.run('nvcc --version | tail -n 2', shell=True, capture_output=True, text=True).stdout, end='')

# sh() runs one command and prints it, its output and its exit code; it never raises, so Run all goes on
# past a failure.
def sh(command, cwd='.'):
    print('$', command, flush=True)
    process = subprocess.Popen(command, shell=True, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    for line in process.stdout:
        print(line, end='', flush=True)
    code = process.wait()
    print(f'[exit {code}]', flush=True)
    return code

# build() queues one compile of a lesson file; two compiles run at a time in the background (a Colab
# runtime has two cores). This cell queues every lesson's compiles in the notebook's order, so later
# lessons compile while earlier ones run; a lesson's cell moves its own to the front. A source whose
# bytes changed (you edited its %%writefile cell) compiles again. run() waits for the build, prints it
# as sh() does, then runs the program.
_jobs, _queue, _running, _lock = {}, [], set(), threading.Condition()

def build(folder, program, binary=None, macro=None, ahead=False):
    binary = binary or program
    command = f'nvcc -std=c++17 -O3 -arch={ARCH}' + (f' -D{macro}' if macro else '') + f' -o {binary} {program}.cu'
    with open(os.path.join(folder, program + '.cu'), 'rb') as f:
        source = hashlib.sha1(f.read()).hexdigest()
    with _lock:
        job = _jobs.get((folder, binary))
        if not job or (job['command'], job['source']) != (command, source):
            if job in _queue:  # replaced before it started: it need not compile
                _queue.remove(job)
            job = {'key': (folder, binary), 'command': command, 'source': source, 'ahead': ahead,
                   'done': threading.Event()}
            _jobs[job['key']] = job
            _queue.append(job)
        job['ahead'] = job['ahead'] and ahead
        _lock.notify_all()
    return job

def _compile_jobs():
    while True:
        with _lock:  # the first queued job (a cell's own before those queued ahead) whose binary is not being built
            ready = lambda: [j for j in _queue if j['key'] not in _running]
            _lock.wait_for(ready)
            job = min(ready(), key=lambda j: j['ahead'])
            _queue.remove(job)
            _running.add(job['key'])
        try:
            done = subprocess.run(job['command'], shell=True, cwd=job['key'][0], capture_output=True, text=True)
            job['output'], job['code'] = done.stdout + done.stderr, done.returncode
        except OSError as error:  # the folder is gone, say: a failed build, never a cell waiting forever
            job['output'], job['code'] = f'{error}\n', 1
        with _lock:
            _running.discard(job['key'])
            _lock.notify_all()
        job['done'].set()

for _ in range(2):
    threading.Thread(target=_compile_jobs, daemon=True).start()

def run(folder, program, arguments, binary=None, macro=None):
    job = build(folder, program, binary, macro)
    job['done'].wait()
    print('$', job['command'])
    print(job['output'], end='')
    print(f"[exit {job['code']}]", flush=True)
    if job['code'] == 0:
        sh(f'./{binary or program} {arguments}', cwd=folder)

# %%writefile as IPython's, but the file is replaced in one step, and left alone where the bytes are the
# same: a compile reading it in the background never sees it half-written.
from IPython.core.magic import register_cell_magic

@register_cell_magic
def writefile(line, cell):
    path, text = line.strip(), cell if cell.endswith('\n') else cell + '\n'
    if os.path.exists(path) and pathlib.Path(path).read_text() == text:
        print(f'{path}: unchanged')
        return
    print(('Overwriting ' if os.path.exists(path) else 'Writing ') + path)
    with open(path + '.new', 'w') as f:
        f.write(text)
    os.replace(path + '.new', path)

# plot() draws a lesson's CSV inline, beside the committed H200 run (tables paired by their titles).
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

# The files as in the repository: the shared ones (common/, the plotter, the course text's T4 run) and each
# lesson's source, written here too so that its compiles can start now (its %%writefile cell holds the same).
def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
"""


def setup_cell(shared, present):
    sources = [f"{folder}/{program}.cu" for folder, program, *_ in present]
    lines = [SETUP.strip(), ""]
    for relative in shared + sources:
        text = (ROOT / relative).read_text()
        lines.append(f"write({relative!r}, [")
        lines += [f"    {json.dumps(line, ensure_ascii=False)}," for line in text.split("\n")]
        lines.append("])")
    lines.append(f"print('wrote the {len(shared)} shared files and the {len(sources)} lesson sources')")
    lines.append("# Every compile, queued ahead in the notebook's order.")
    for folder, program, _, exercises, _ in present:
        lines.append(f"build('{folder}', '{program}', ahead=True)")
        lines += [f"build('{folder}', '{program}', '{exercise_binary(program, macro)}', '{macro}', ahead=True)"
                  for macro, _, _ in exercises]
    lines.append("print(len(_jobs), 'compiles queued: two run at a time in the background')")
    return code("\n".join(lines), "setup", form=True)


def notebook_text():
    present = [(folder, program, title, exercises_of(folder, program), committed_csv(folder))
               for folder, program, title in present_lessons()]
    headers = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "common").iterdir()
                     if p.suffix in (".hpp", ".cuh"))
    extras = sorted({f for _, program, *_ in present for f in EXTRA_RUNS.get(program, [])})
    cells = [
        markdown(f"""
# GPU merge and sort lessons

Runtime > Change runtime type > T4 GPU (any NVIDIA GPU works), then Runtime > Run all.
The lesson sources are inside this notebook (generated by `scripts/make_notebook.py`
from the repository), so nothing needs to be cloned or uploaded. Run the setup cell
first: it reads the card's compute capability, sets `ARCH`, which every compile uses,
writes the shared headers and the lesson sources and queues every compile; after it,
any lesson's cells run on their own.
Each lesson compiles its one `.cu` file, runs with `--quick` (smaller sizes, for a
short cell; drop it for the full sizes) and `--csv`, and plots its run beside
the committed H200 run. The exercise cells build the same file with an injected
bug and show the check that catches it: those runs are meant to fail (exit 1).

Compiling takes time: Run all takes about 3 minutes on a 2-core machine such as
a Colab T4 runtime, nearly all of it compiling ({RUN_ALL_COMPILE}). The setup
cell queues every compile, and two run at a time in the background, so later
lessons compile while earlier ones run; a lesson's own cell moves its compile
to the front of the queue.
"""),
        setup_cell(headers + ["scripts/plot_sweep.py"] + extras, present),
    ]
    for folder, program, title, exercises, h200 in present:
        tag = f"lesson:{folder}"
        cells.append(markdown(f"## {title}\n\n`{folder}/{program}.cu`; its `README.md` in the repository "
                              "explains the tables and the exercises."))
        cells.append(write_file_cell(f"{folder}/{program}.cu", tag))
        if h200:
            cells.append(write_file_cell(h200, tag))
        cells.append(code(
            "# Wait for this file's build (for this card's ARCH), then run it: --quick for smaller sizes, --csv for\n"
            f"# the plot below.\nrun('{folder}', '{program}', '--quick --csv {program}.csv')", tag))
        others = ([h200] if h200 else []) + EXTRA_RUNS.get(program, [])
        cells.append(code(f"plot({', '.join(repr(f) for f in [f'{folder}/{program}.csv'] + others)})", tag))
        for macro, arguments, expected in exercises:
            binary = exercise_binary(program, macro)
            cells.append(markdown(f"### Exercise: `-D{macro}`\n\nExpected: {expected}. The lesson's README "
                                  "has the hints and the fix."))
            cells.append(code(f"run('{folder}', '{program}', '{arguments}', '{binary}', '{macro}')", tag))
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
    text = notebook_text()
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
