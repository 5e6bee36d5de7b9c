#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# etc/bash-completion/layoutctl, sourced into a plain bash: the COMPREPLY it
# gives for a line, with the words split the way bash splits them (at
# blanks, and at '=' which stays a word of its own).
import os
import re
import shutil
import subprocess

from taplib import diag, done, is_eq, ok, skip, LAYOUTCTL, ETC

SCRIPT = os.path.join(ETC, "bash-completion", "layoutctl")


def words(line):
    """bash's COMP_WORDS for LINE (cursor at the end)."""
    out = []
    for w in re.split(r"\s+", line.lstrip()):
        out.extend(x for x in re.split(r"(=)", w) if x != "")
    if line.endswith(" ") or not out:
        out.append("")
    return out


def complete(line):
    """The completions for LINE, each as the whole line would read after it."""
    w = words(line)
    w[0] = LAYOUTCTL
    bline = LAYOUTCTL + line[len("layoutctl"):]
    prog = ("source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\nCOMP_LINE=%s\nCOMP_POINT=${#COMP_LINE}\n"
            "_layoutctl\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n") % (
                SCRIPT, " ".join("'%s'" % x for x in w), len(w) - 1, "'%s'" % bline)
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        diag(p.stderr)
    word = w[-1]
    return sorted(line[:len(line) - len(word)] + r for r in p.stdout.split("\n") if r)


if not shutil.which("bash"):
    skip("completion", "no bash")
    raise SystemExit(done())

got = complete("layoutctl pl")
is_eq(got, ["layoutctl place", "layoutctl plan"], "layoutctl pl<TAB>: the commands place and plan")
got = complete("layoutctl ")
ok({"layoutctl plan", "layoutctl topo", "layoutctl status", "layoutctl --version"} <= set(got),
   "layoutctl <TAB>: every command from --help, and --version")
is_eq(complete("layoutctl plan --la"), ["layoutctl plan --layout"], "plan --la<TAB>: --layout")
ok("layoutctl plan --previous" in complete("layoutctl plan --"), "plan --<TAB>: plan's own options")
is_eq(complete("layoutctl plan --layout tp8,mod"), ["layoutctl plan --layout tp8,model="],
      "--layout tp8,mod<TAB>: the model key")
presets = ["layoutctl plan --layout tp8,model=%s" % m for m in ("13b", "405b", "70b", "7b")]
is_eq(complete("layoutctl plan --layout tp8,model="), presets, "model=<TAB>: the presets")
is_eq(complete("layoutctl plan --layout tp8,model=4"), ["layoutctl plan --layout tp8,model=405b"],
      "model=4<TAB>: 405b")
is_eq(complete("layoutctl plan --layout=tp8,mo"), ["layoutctl plan --layout=tp8,model="],
      "--layout=SPEC is completed the same")
is_eq(complete("layoutctl place --layout tp8,order=t"), ["layoutctl place --layout tp8,order=torchtitan"],
      "order= values")
is_eq(complete("layoutctl topo build --slurm-topology-n"), ["layoutctl topo build --slurm-topology-name"],
      "topo build --slurm-topology-n<TAB>: the build subcommand's own options")
ok("layoutctl topo show --svg" in complete("layoutctl topo show --"), "topo show --<TAB>: show's options")
# watch's options come from the daemon commands' option table; its --help
# lists them all, and each one offered is one watch's parser takes.
wopts = sorted(c[len("layoutctl watch "):] for c in complete("layoutctl watch --"))
is_eq(wopts, ["--all-ranks", "--interval", "--json", "--leader", "--local", "--munge-socket",
              "--nodes", "--once", "--scontrol", "--socket", "--stack", "--state-dir", "--timeout",
              "--topology"],
      "watch --<TAB>: watch's options")
refused = []
for o in wopts:
    flag = subprocess.run([LAYOUTCTL, "watch", o, "--help"], capture_output=True, text=True,
                          timeout=60)
    value = subprocess.run([LAYOUTCTL, "watch", o + "=1000", "--help"], capture_output=True,
                           text=True, timeout=60)
    if not any(r.returncode == 0 and r.stdout.startswith("Usage: layoutctl watch ")
               for r in (flag, value)):
        refused.append((o, flag.stderr.strip(), value.stderr.strip()))
ok(not refused, "each option offered for watch is one its parser takes")
if refused:
    diag("refused: %s" % refused)
# Every key the completion offers is one the parser knows, and the reverse.
rc = subprocess.run([LAYOUTCTL, "plan", "--layout", "tp2,frob=1", "--nodes", "1",
                     "--gpus-per-node", "8"], capture_output=True, text=True, timeout=60)
keys = sorted(k[len("layoutctl plan --layout "):].rstrip("=") for k in complete("layoutctl plan --layout "))
missing = [k for k in keys if k not in rc.stderr]
ok(rc.returncode != 0 and not missing, "the keys offered are those the parser lists for an unknown key")
if missing:
    diag("not in the parser's message: %s\n%s" % (missing, rc.stderr))
done()
