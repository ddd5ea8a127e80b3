"""Running one benchmark script at its smallest size, as a test (issue 43: benchmarks
cannot rot). Nothing is timed or judged on its figures; the run must end with status 0,
its own correctness checks holding, and print the line it always prints at its end."""

import pytest

from benchmarks import suite


def runs_to_its_end(name, folder):
    why = suite.cannot_run(name)
    if why:
        pytest.skip(why)
    done = suite.run(name, "smoke", folder)
    said = f"{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-5000:]}"
    assert done.returncode == 0, f"benchmarks/{name}.py exited {done.returncode}:\n{said}"
    assert suite.SCRIPTS[name].prints in done.stdout, (
        f"benchmarks/{name}.py ended without printing {suite.SCRIPTS[name].prints!r}:\n{said}")
