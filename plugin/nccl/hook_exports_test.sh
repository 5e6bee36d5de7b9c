#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The hook exports exactly the two tables NCCL looks up, so nothing of it
# can clash with the application or NCCL inside a rank.
echo "1..2"
so=${HOOK_SO:?HOOK_SO names the built hook}
syms=$(nm -D --defined-only "$so" | awk '{ print $NF }' | sort | tr '\n' ' ')
if [ "$syms" = "ncclProfiler_v4 ncclProfiler_v5 " ]; then
	echo "ok 1 - exports exactly ncclProfiler_v4 and ncclProfiler_v5"
else
	echo "not ok 1 - exports exactly ncclProfiler_v4 and ncclProfiler_v5"
	echo "#   got: $syms"
fi
# Links nothing beyond libc (and the loader; a sanitizer build adds its
# runtime).
libs=$(objdump -p "$so" | awk '/NEEDED/ { print $2 }' | grep -v -e '^libc\.so' -e '^ld-linux' -e '^lib[a-z]*san\.so' | tr '\n' ' ')
if [ -z "$libs" ]; then
	echo "ok 2 - needs only libc"
else
	echo "not ok 2 - needs only libc"
	echo "#   also needs: $libs"
fi
