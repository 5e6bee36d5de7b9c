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
# Links nothing beyond libc (and the loader).  A sanitizer build adds its
# runtime, which brings libm and libgcc_s with it.
needed=$(objdump -p "$so" | awk '/NEEDED/ { print $2 }')
allow='^libc\.so|^ld-linux'
if echo "$needed" | grep -q '^lib[a-z]*san\.so'; then
	allow="$allow"'|^lib[a-z]*san\.so|^libm\.so|^libgcc_s\.so'
fi
libs=$(echo "$needed" | grep -v -E "$allow" | tr '\n' ' ')
if [ -z "$libs" ]; then
	echo "ok 2 - needs only libc"
else
	echo "not ok 2 - needs only libc"
	echo "#   also needs: $libs"
fi
