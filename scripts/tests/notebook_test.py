#!/usr/bin/env python3
"""Runs every cell of scripts/colab_lessons.ipynb with nbclient, in a scratch
folder, as Run all would, and checks what each command printed:

- every nvcc compile exits 0;
- without a GPU, every lesson and exercise run exits 77 with the lesson's
  "<program>: no CUDA device available" line; with one, a lesson run exits 0
  and an exercise run exits 1 (the injected bug is caught);
- every lesson and exercise of scripts/make_notebook.py's tables that the
  notebook holds was compiled and run; the plot commands exit 0 (77 where
  the kernel has no matplotlib) and each drawn plot is shown inline;
- then, in a fresh kernel and folder, the setup cell and one lesson's cells
  alone (ALONE, not the first lesson): a lesson needs no other lesson's cells.
It prints how long Run all took (without a GPU: the compiles), the figure the
notebook's first cell and the README quote.

Exit 77 (CTest: skipped) with the reason where nbformat, nbclient, a Python 3
Jupyter kernel or nvcc is missing: pip install --user nbclient nbformat ipykernel.

    scripts/tests/notebook_test.py [--keep DIR]
"""
import copy
import pathlib
import re
import shutil
import sys
import tempfile
import time

SKIPPED = 77
ALONE = "ch12-merge-tiled"  # run again with the setup cell alone: one compile, no exercise
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import make_notebook  # noqa: E402  (the tables the notebook is generated from)


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIPPED)


def commands(notebook):
    """[(cell index, command, output, exit code)] from sh()'s '$ cmd' ... '[exit N]' blocks."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        for match in re.finditer(r"^\$ (.*)\n((?:.*\n)*?)\[exit (-?\d+)\]$", text, re.M):
            found.append((index, match.group(1), match.group(2), int(match.group(3))))
    return found


def images(cell):
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


# Appended to each run: drops the compiles still queued and waits for those running, so that no nvcc
# outlives the kernel (the setup cell queues every lesson's compiles; a run of one lesson needs one).
FINISH = """with _lock:
    _queue.clear()
for job in list(_jobs.values()):
    if job['key'] in _running:
        job['done'].wait()"""


def execute(notebook, scratch, client_class):
    import nbformat
    notebook.cells.append(nbformat.v4.new_code_cell(FINISH))
    scratch.mkdir(parents=True, exist_ok=True)
    client = client_class(notebook, timeout=1800, kernel_name="python3",
                          resources={"metadata": {"path": str(scratch)}})
    client.execute()


def check(notebook, lessons, plots_expected):
    """The failures in an executed notebook holding the given lessons' cells (it prints what it compiled,
    ran and plotted)."""
    first = next(c for c in notebook.cells if c.cell_type == "code")
    first_text = "".join(o.get("text", "") for o in first.get("outputs", []))
    has_gpu = "No GPU in this runtime" not in first_text
    arch = re.search(r"^ARCH = (\S+)$", first_text, re.M)
    print(f"setup cell: {'a GPU' if has_gpu else 'no GPU'}, ARCH = {arch.group(1) if arch else '?'}")

    expected = {}  # binary -> (exit code, what the run must print)
    for folder, program, _ in lessons:
        no_gpu = f"{program}: no CUDA device available"
        expected[program] = (0, "") if has_gpu else (SKIPPED, no_gpu)
        for macro, _, _ in make_notebook.exercises_of(folder, program):
            expected[make_notebook.exercise_binary(program, macro)] = (1, "") if has_gpu else (SKIPPED, no_gpu)

    failures, compiled, ran, plotted = [], set(), set(), 0
    for index, command, output, code in commands(notebook):
        if command.startswith("nvcc "):
            binary = re.search(r" -o (\S+)", command).group(1)
            compiled.add(binary)
            if code != 0:
                failures.append(f"cell {index}: compile exited {code}: {command}\n{output[-3000:]}")
        elif command.startswith("./"):
            binary = command.split()[0][2:]
            ran.add(binary)
            want_code, want_text = expected.get(binary, (None, ""))
            if code != want_code or want_text not in output:
                failures.append(f"cell {index}: '{command}' exited {code} (expected {want_code}"
                                + (f" and the line '{want_text}'" if want_text else "") + f"):\n{output[-3000:]}")
        elif "plot_sweep.py" in command:
            if code != plots_expected:
                failures.append(f"cell {index}: the plot exited {code} (expected {plots_expected}):\n{output}")
            elif code == 0 and images(notebook.cells[index]) != 1:
                failures.append(f"cell {index}: the plot was drawn but not shown inline")
            plotted += code == 0
        else:
            failures.append(f"cell {index}: a command the test does not know: {command}")
    for binary in sorted(set(expected) - compiled):
        failures.append(f"{binary} was never compiled")
    for binary in sorted(compiled - ran):
        failures.append(f"{binary} was compiled but never run")
    runs = "ran to completion" if has_gpu else "stopped at the no-GPU line"
    print(f"{len(compiled)} compiles, {len(ran)} runs ({runs}), {plotted} plots shown inline"
          + ("" if plots_expected == 0 else " (no matplotlib: plots skipped)"))
    return failures


def main():
    keep = sys.argv[2] if sys.argv[1:2] == ["--keep"] else None
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError as missing:
        skip(f"{missing.name} is not installed (python3 -m pip install --user nbclient nbformat ipykernel)")
    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        skip("no 'python3' Jupyter kernel (python3 -m pip install --user ipykernel && "
             "python3 -m ipykernel install --user)")
    if not shutil.which("nvcc"):
        skip("nvcc is not on PATH")
    try:
        import matplotlib  # noqa: F401
        plots_expected = 0
    except ImportError:
        plots_expected = SKIPPED

    lessons = make_notebook.present_lessons()
    notebook = nbformat.read(make_notebook.NOTEBOOK, as_version=4)
    # The same notebook cut to the setup cell and one lesson's cells (not the first lesson's): a lesson
    # needs nothing but the setup cell.
    alone = next((lesson for lesson in lessons[1:] if lesson[0] == ALONE), None)
    alone_notebook = copy.deepcopy(notebook)
    alone_notebook.cells = [c for c in alone_notebook.cells if c.cell_type == "code" and
                            set(c.metadata.get("tags", [])) & {"setup", f"lesson:{ALONE}"}]
    scratch = pathlib.Path(keep) if keep else pathlib.Path(tempfile.mkdtemp(prefix="notebook_test_"))
    print(f"running all {len(notebook.cells)} cells in {scratch / 'all'}", flush=True)
    failures = []
    try:
        started = time.monotonic()
        execute(notebook, scratch / "all", NotebookClient)
        minutes = (time.monotonic() - started) / 60
        failures += check(notebook, lessons, plots_expected)
        print(f"Run all took {minutes:.1f} minutes", flush=True)
        if alone:
            print(f"running the setup cell and {ALONE}'s {len(alone_notebook.cells) - 1} cells alone in "
                  f"{scratch / 'alone'}", flush=True)
            execute(alone_notebook, scratch / "alone", NotebookClient)
            failures += [f"{ALONE} after the setup cell alone: {f}" for f in check(alone_notebook, [alone], plots_expected)]
        else:
            failures.append(f"the notebook has no lesson {ALONE} after its first to run alone")
    except CellExecutionError as error:
        failures.append(f"a cell raised (no cell should):\n{error}")
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL:", failure)
    print("passed" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
