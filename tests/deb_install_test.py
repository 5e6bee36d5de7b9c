#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Debian packages, end to end: build them (or take them from
PL_DEB_DIR), dpkg -i them, run srun --parallel-layout on the emulated
cluster with the installed plugin, layoutd and layoutctl, rebuild the same
version and upgrade over it (an edited conffile kept), purge, and check that
nothing is left.  It changes this machine's /usr and /etc, so it purges at
the end whatever happens, and the installed snippet never enables the
plugin in any plugstack.conf."""
import glob
import os
import shutil
import subprocess
import tempfile

from clusterlib import Lab, LabError, skip_all, unavailable
from taplib import data, diag, done, is_eq, ok, skip

PKGS = ["slurm-spank-parallel-layout", "parallel-layout-nccl", "layoutd", "layoutctl"]
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEB_DIR = os.environ.get("PL_DEB_DIR", "")

why = None
if os.geteuid() != 0:
    why = "not root: dpkg -i needs root"
elif not DEB_DIR and not (shutil.which("dpkg-buildpackage") and shutil.which("dh")):
    why = "dpkg-buildpackage or debhelper missing (apt-get install dpkg-dev debhelper)"
elif not os.path.isdir(os.path.join(SRC, "debian")):
    why = "no debian/ directory beside the tests"
elif os.environ.get("PL_DEB_TESTS", "").lower() in ("0", "no", "skip", "off"):
    why = "PL_DEB_TESTS=%s" % os.environ["PL_DEB_TESTS"]
if not why:
    # A second suite run at once (scripts/check runs distcheck's beside the
    # build tree's) would install and purge the same packages: one run of
    # this test at a time on the machine, from here to its end.
    import fcntl
    deb_lock = open(os.environ.get("LAB_LOCK", "/tmp/pl-lab.lock") + ".deb", "a")
    try:
        fcntl.flock(deb_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("# waiting for %s (another run of this test)" % deb_lock.name, flush=True)
        fcntl.flock(deb_lock, fcntl.LOCK_EX)
    installed = [p for p in PKGS if subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout.endswith(" installed")]
    if installed:
        why = "%s already installed here: not touching an admin's packages" % " ".join(installed)
if why:
    skip_all(why)

tmp = tempfile.mkdtemp(prefix="pl-deb-")


def sh(argv, timeout=600, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode != 0:
        diag("%s: rc %d\n%s%s" % (" ".join(argv), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def build(where):
    """Build the packages from a clean copy of the tracked tree; their paths."""
    if DEB_DIR:
        return sorted(glob.glob(os.path.join(DEB_DIR, "*_*.deb")))
    src = os.path.join(where, "parallel-layout")
    os.makedirs(src)
    g = sh(["git", "-C", SRC, "ls-files", "-co", "--exclude-standard"]) if shutil.which("git") else None
    if g is not None and g.returncode == 0:
        files = g.stdout.split("\n")
    else:
        # A tree without git (the copy in another release's root): all of
        # it but builds.
        files = []
        for d, dirs, names in os.walk(SRC):
            dirs[:] = [x for x in dirs if not (x.startswith("_build") or x in (".git", "example-out"))]
            files += [os.path.relpath(os.path.join(d, n), SRC) for n in names]
    for f in files:
        if f and os.path.isfile(os.path.join(SRC, f)):
            os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
            shutil.copy2(os.path.join(SRC, f), os.path.join(src, f))
    # Not this make check's variables (TESTS, MAKEFLAGS): the package's
    # own build must not see them.
    env = {k: v for k, v in os.environ.items()
           if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME")}
    # At a lower priority: the build is two minutes of CPU, and the tests
    # run beside it (make -j) wait on timers that a busy CPU makes late.
    p = sh(["nice", "-n", "10", "dpkg-buildpackage", "-b", "-us", "-uc", "-j2"], cwd=src, timeout=1200,
           env=env)
    if p.returncode != 0:
        return []
    return sorted(glob.glob(os.path.join(where, "*_*.deb")))


def debs_of(paths):
    return [d for d in paths if os.path.basename(d).split("_")[0] in PKGS]


def listed():
    out = []
    for p in PKGS:
        out += [x for x in sh(["dpkg", "-L", p]).stdout.split("\n") if x.startswith("/")]
    return out


def purge():
    return sh(["dpkg", "--purge"] + PKGS)


lab = None
try:
    debs = debs_of(build(os.path.join(tmp, "b1")))
    is_eq(sorted(os.path.basename(d).split("_")[0] for d in debs), sorted(PKGS), "four packages built")
    if len(debs) != 4:
        raise SystemExit(done())
    p = sh(["lintian", "--fail-on", "error,warning"] + debs) if shutil.which("lintian") else None
    ok(p is None or p.returncode == 0, "lintian finds no error or warning")
    ok(sh(["dpkg", "-i"] + debs).returncode == 0, "dpkg -i installs them")
    files = listed()
    plugin = [f for f in files if f.endswith("/slurm-wlm/parallel_layout.so")]
    ok(len(plugin) == 1 and os.path.isfile(plugin[0]), "the plugin is in Slurm's plugin directory")
    ok(os.path.isfile("/usr/share/bash-completion/completions/layoutctl"), "completion installed")
    unitdir = sh(["pkg-config", "--variable=systemdsystemunitdir", "systemd"]).stdout.strip() \
        or "/lib/systemd/system"
    with open("/etc/debian_version") as f:
        debver = f.read().strip()
    is_eq([f for f in files if f.endswith("/layoutd.service")], [unitdir + "/layoutd.service"],
          "Debian %s: the unit is where this release keeps units (%s)" % (debver, unitdir))
    v = sh(["/usr/bin/layoutctl", "--version"]).stdout
    ok(v.startswith("layoutctl ") and "plugin built for Slurm" in v, "installed layoutctl --version: " + v.strip())
    with open("/etc/slurm/plugstack.conf.d/parallel-layout.conf") as f:
        live = [ln for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    is_eq(live, [], "the installed plugstack snippet enables nothing")

    # The main job from the installed paths.
    why = unavailable()
    if why:
        skip("srun --parallel-layout with the installed packages", why)
    else:
        mp = os.path.join(tmp, "map.json")
        p = sh(["/usr/bin/layoutctl", "topo", "build", "--name", "lab", "-o", mp,
                "--slurm-topology", data("lab-topology.conf"),
                "--node", "/usr/share/parallel-layout/examples/h100-node-topo.txt", "--gpu-mem", "80"])
        ok(p.returncode == 0, "the installed layoutctl builds the lab's map")
        lab = Lab(plugin=plugin[0] if plugin else "", layoutd="/usr/sbin/layoutd", layoutd_map=mp,
                  plugin_args="map=%s socket=@LAB@/run/layoutd-%%n.sock timeout_ms=2000" % mp)
        lab.knobs["plugin_args"] = lab.knobs["plugin_args"].replace("@LAB@", lab.dir)
        try:
            lab.up()
            rc, out, err = lab.srun(["-N4", "-n32", "--parallel-layout=tp8,pp4,model=13b,gbs=64",
                                     "bash", "-c", "echo $SLURM_PROCID $RANK $PARALLEL_LAYOUT_TP_RANK"],
                                    timeout=120)
            rows = [ln.split() for ln in out.split("\n") if ln.strip()]
            ranks = sorted(int(r[1]) for r in rows if len(r) == 3 and r[1].isdigit())
            ok(rc == 0 and ranks == list(range(32)),
               "srun --parallel-layout on the lab with the installed plugin and layoutd: 32 ranks")
            if rc != 0 or ranks != list(range(32)):
                diag(out[-1500:] + err[-1500:])
        except LabError as e:
            ok(False, "the lab comes up with the installed layoutd: %s" % e)
        finally:
            lab.down()
            lab = None

    # Upgrade: the same version rebuilt, over an edited conffile.
    conf = "/etc/parallel-layout/layoutd.conf"
    with open(conf, "a") as f:
        f.write("# edited by the admin\n")
    debs2 = debs_of(build(os.path.join(tmp, "b2")))
    ok(len(debs2) == 4 and sh(["dpkg", "-i", "--force-confold"] + debs2).returncode == 0,
       "the rebuilt packages install over the first ones")
    with open(conf) as f:
        ok(f.read().endswith("# edited by the admin\n"), "the edited conffile is kept")
    files = listed()

    # Purge: nothing left.
    os.makedirs("/var/lib/parallel-layout", exist_ok=True)   # as systemd's StateDirectory= would
    ok(purge().returncode == 0, "dpkg --purge removes them")
    left = [f for f in files if os.path.lexists(f) and not os.path.isdir(f)]
    is_eq(left, [], "no file dpkg -L listed is left")
    for d in ("/etc/parallel-layout", "/var/lib/parallel-layout", "/run/parallel-layout",
              "/etc/slurm/plugstack.conf.d/parallel-layout.conf"):
        ok(not os.path.exists(d), "%s is gone" % d)
finally:
    if lab:
        lab.down()
    if any(subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                          text=True).stdout.endswith(" installed") for p in PKGS):
        purge()
    shutil.rmtree(tmp, ignore_errors=True)
done()
