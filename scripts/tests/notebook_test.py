#!/usr/bin/env python3
"""Runs every cell of scripts/colab_lessons.ipynb with nbclient, in a scratch
folder, as Run all would, and checks what each command printed:

- every nvcc compile exits 0;
- without a GPU, every lesson and exercise run exits 77 with the lesson's
  "<program>: no CUDA device available" line; with one, a lesson run exits 0
  and an exercise run exits 1 (the injected bug is caught);
- every lesson and exercise of scripts/make_notebook.py's tables that the
  notebook holds was compiled and run; the plot commands exit 0 (77 where
  the kernel has no matplotlib) and each drawn plot is shown inline.

Exit 77 (CTest: skipped) with the reason where nbformat, nbclient, a Python 3
Jupyter kernel or nvcc is missing: pip install --user nbclient nbformat ipykernel.

    scripts/tests/notebook_test.py [--keep DIR]
"""
import pathlib
import re
import shutil
import sys
import tempfile

SKIPPED = 77
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

    notebook = nbformat.read(make_notebook.NOTEBOOK, as_version=4)
    scratch = pathlib.Path(keep) if keep else pathlib.Path(tempfile.mkdtemp(prefix="notebook_test_"))
    scratch.mkdir(parents=True, exist_ok=True)
    print(f"running {len(notebook.cells)} cells in {scratch}", flush=True)
    client = NotebookClient(notebook, timeout=1800, kernel_name="python3",
                            resources={"metadata": {"path": str(scratch)}})
    try:
        client.execute()
    except CellExecutionError as error:
        print(f"FAIL: a cell raised (no cell should):\n{error}")
        return 1
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)

    first = next(c for c in notebook.cells if c.cell_type == "code")
    first_text = "".join(o.get("text", "") for o in first.get("outputs", []))
    has_gpu = "No GPU in this runtime" not in first_text
    arch = re.search(r"^ARCH = (\S+)$", first_text, re.M)
    print(f"first cell: {'a GPU' if has_gpu else 'no GPU'}, ARCH = {arch.group(1) if arch else '?'}")

    expected = {}  # binary -> (exit code, what the run must print)
    for folder, program, _ in make_notebook.present_lessons():
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

    for failure in failures:
        print("FAIL:", failure)
    runs = "ran to completion" if has_gpu else "stopped at the no-GPU line"
    print(f"{len(compiled)} compiles, {len(ran)} runs ({runs}), {plotted} plots shown inline"
          + ("" if plots_expected == 0 else " (no matplotlib: plots skipped)")
          + f": {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
