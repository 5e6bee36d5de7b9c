# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated cluster set up for the job-wide watch, shared by the
end-to-end test and the alert benchmarks: the map with each node's NodeAddr
(from scontrol) and a peer port per node (its slurmd port + 300), a layoutd
per node whose peers talk over loopback TCP with the lab's munged, a real
Alertmanager and a webhook receiver, and nccl_driver steps run through
srun --parallel-layout while Alertmanager is polled."""
import os
import pwd
import shutil
import tempfile
import threading
import time

import amlib
from clusterlib import Lab, LabError, skip_all, unavailable
from taplib import ETC, data, run

EXEC_SH = r"""#!/bin/bash
echo "TASK rank=${RANK:-unset} pid=$$ node=$SLURMD_NODENAME job=$SLURM_JOB_ID step=$SLURM_STEP_ID"
exec "$DRIVER" --sync-dir "$SYNC" "$@" > "$SYNC/exec.$SLURM_JOB_ID.$RANK" 2>&1
"""


def parts(more=None):
    """(PLUGIN, DRIVER, HOOK, LAYOUTD) from the test's environment, or the
    whole test skipped saying what is missing: Slurm, a part not built,
    Alertmanager, or what more() says (None: nothing)."""
    why = unavailable()
    plugin = os.environ.get("PL_PLUGIN", "")
    driver = os.environ.get("NCCL_DRIVER", "")
    hook = os.environ.get("PL_NCCL_HOOK", "")
    layoutd = os.environ.get("LAYOUTD", "")
    if not why and not os.path.exists(plugin):
        why = "the SPANK plugin was not built (no spank.h at configure time)"
    if not why and not (os.path.exists(driver) and os.path.exists(hook) and
                        os.path.exists(layoutd)):
        why = "nccl_driver, the NCCL hook or layoutd was not built"
    if not why and more:
        why = more()
    if not why and not amlib.ALERTMANAGER:
        why = "no prometheus-alertmanager (apt-get install prometheus-alertmanager)"
    if why:
        skip_all(why)
    return plugin, driver, hook, layoutd


def rows_of(text):
    """The TASK lines the step's tasks printed, as dicts."""
    return [dict(kv.split("=", 1) for kv in line.split()[1:])
            for line in text.splitlines() if line.startswith("TASK ")]


class WatchLab:
    """lab, am (Alertmanager), hook (webhook), tmp, sync; .up() raises
    LabError or RuntimeError with what failed."""

    def __init__(self, plugin, hook_so, driver, layoutd, name=None, threshold=5, interval_ms=200,
                 **conf):
        self.tmp = tempfile.mkdtemp(prefix="pl-watchlab-")
        os.chmod(self.tmp, 0o755)
        self.map = os.path.join(self.tmp, "map.json")
        self.sync = os.path.join(self.tmp, "sync")
        os.mkdir(self.sync)
        os.chmod(self.sync, 0o777)
        self.exec = os.path.join(self.tmp, "exec.sh")
        with open(self.exec, "w") as f:
            f.write(EXEC_SH)
        os.chmod(self.exec, 0o755)
        self.layoutd = layoutd
        self.lab = Lab(name=name, plugin=plugin,
                       plugin_args="map=%s timeout_ms=1000 socket=@LAB@/run/layoutd-%%n.sock hook=%s "
                       "watch_dir=@LAB@/watch" % (self.map, hook_so))
        self.lab.knobs["plugin_args"] = self.lab.knobs["plugin_args"].replace("@LAB@", self.lab.dir)
        self.lab.env.update(DRIVER=driver, SYNC=self.sync)
        self.am = amlib.Alertmanager()
        self.hook = amlib.Webhook()
        self.conf = dict(hang_threshold_s=threshold, watch_interval_ms=interval_ms, peer_listen="auto",
                         munge_socket=os.path.join(self.lab.dir, "munge", "munge.socket"),
                         alert_resend_s=10, state_dir=os.path.join(self.tmp, "state", "%n"))
        self.conf.update(conf)
        self.nconf = 0
        self.per_node = {}
        self.user = pwd.getpwuid(os.getuid()).pw_name

    def build_map(self, *extra):
        rc, out, err = run("topo", "build", "--name", "lab", "-o", self.map,
                           "--slurm-topology", data("lab-topology.conf"),
                           "--node", os.path.join(ETC, "examples", "h100-node-topo.txt"),
                           "--gpu-mem", "80", *extra)
        if rc != 0:
            raise RuntimeError("layoutctl topo build: %s" % err.strip())

    def up(self):
        """The lab, the map with the peers' addresses, Alertmanager, the
        webhook, and a layoutd per node."""
        self.build_map()
        self.lab.up()
        rc, listing, err = self.lab.run(["scontrol", "show", "nodes", "-o"], timeout=15)
        if rc != 0:
            raise RuntimeError("scontrol show nodes: %s" % err.strip())
        path = os.path.join(self.tmp, "scontrol-nodes.txt")
        with open(path, "w") as f:
            f.write(listing)
        self.build_map("--slurm-nodes", path, "--peer-port", "slurmd+300")
        self.am.start()
        self.hook.start()
        self.conf.update(alertmanager_url=self.am.url, webhook_url=self.hook.url)
        self.restart_layoutds()
        return self

    def restart_layoutds(self, per_node=None, **more):
        """(Re)start every node's layoutd with the config and more keys (a
        new file each time: the lab restarts a layoutd whose config path
        changed); per_node: {node: {key: value}} for some nodes only (a
        file a node then, the lab's %n)."""
        self.conf.update(more)
        self.nconf += 1
        self.per_node = per_node or {}
        path = self.conf_path()
        for n in (["node%d" % (k + 1) for k in range(self.lab.nodes)] if self.per_node
                  else [None]):
            with open(path.replace("%n", n) if n else path, "w") as f:
                for k, v in dict(self.conf, **self.per_node.get(n, {})).items():
                    f.write("%s = %s\n" % (k, v))
        self.lab.up(layoutd=self.layoutd, layoutd_map=self.map, layoutd_conf=path)

    def conf_path(self):
        """The config file the layoutds run with (%n: one a node)."""
        return os.path.join(self.tmp, "layoutd.%d%s.conf" %
                            (self.nconf, ".%n" if self.per_node else ""))

    def last_job_id(self):
        rc, out, err = self.lab.run(["scontrol", "-o", "show", "jobs"], timeout=15)
        ids = [int(kv.split("=", 1)[1]) for kv in out.split() if kv.startswith("JobId=")]
        return max(ids) if ids else 0

    def watched(self, args, until, timeout=180, poll=0.05, at_sighting=None):
        """srun args in the background while Alertmanager is polled until
        until(alerts) holds or srun ends: (rc, out, err, wall time of the
        first sighting or None, the alerts then, what at_sighting(alerts)
        returned then)."""
        res = {}
        th = threading.Thread(target=lambda: res.update(r=self.lab.srun(args, timeout=timeout)))
        th.start()
        when, seen, extra = None, [], None
        while th.is_alive():
            if when is None:
                got = self.am.alerts()
                if until(got):
                    when, seen = time.time(), got
                    extra = at_sighting(got) if at_sighting else None
            time.sleep(poll)
        th.join()
        rc, out, err = res.get("r", (124, "", "no answer"))
        return rc, out, err, when, seen, extra

    def stopped_at(self, job, rank):
        """Wall time the driver's rank said it stopped (its output file was
        last written then: it sleeps after that line, for its --timeout),
        or None.  job None: the newest job with such a file."""
        if job is None:
            jobs = [n.split(".")[1] for n in os.listdir(self.sync) if n.startswith("exec.")]
            job = max(jobs, key=int) if jobs else "0"
        path = os.path.join(self.sync, "exec.%s.%s" % (job, rank))
        try:
            with open(path) as f:
                if "result=stopped" not in f.read():
                    return None
            return os.stat(path).st_mtime
        except OSError:
            return None

    def down(self):
        rc, err = self.lab.down()
        self.am.cleanup()
        try:
            self.hook.stop()
        except OSError:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)
        return rc, err


__all__ = ["WatchLab", "LabError", "rows_of"]
