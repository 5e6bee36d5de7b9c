# SPDX-License-Identifier: GPL-2.0-or-later
"""What the benchmarks on the emulated cluster (bench_alert.py,
bench_verdicts.py) share before the lab comes up: the environment the
tests' modules read at import (set before importing them), and the parts
built in BUILD_DIR, or why the benchmark is skipped."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parts(build, prog):
    """The built parts in build as (PLUGIN, HOOK, DRIVER, LAYOUTD), with
    the tests' modules on the path; exits 0 saying why when the lab cannot
    run or a part is not built."""
    b = os.path.abspath(build)
    os.environ.setdefault("LAYOUTCTL", os.path.join(b, "ctl", "layoutctl"))
    os.environ.setdefault("PL_TEST_DATA", os.path.join(HERE, "..", "tests", "data"))
    os.environ.setdefault("PL_ETC", os.path.join(HERE, "..", "etc"))
    os.environ.setdefault("LABCTL", os.path.join(HERE, "..", "tests", "cluster", "lab"))
    os.environ.setdefault("LAB_DIR", os.path.join(b, "tests", "lab"))
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from clusterlib import unavailable
    got = (os.path.join(b, "plugin", "spank", ".libs", "parallel_layout.so"),
           os.path.join(b, "plugin", "nccl", ".libs", "libparallel-layout-nccl.so"),
           os.path.join(b, "tests", "nccl_driver"),
           os.path.join(b, "daemon", "layoutd"))
    why = unavailable()
    for f in got:
        if not why and not os.path.exists(f):
            why = "%s is not built (make, and make -C tests nccl_driver)" % f
    if why:
        print("%s: skipped: %s" % (prog, why))
        sys.exit(0)
    return got
