/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm hostlist expressions: "node[01-16,20],gpu7" <-> names.
 */
#ifndef PL_HOSTS_H
#define PL_HOSTS_H

#include "pl_err.h"

struct hosts {
	long n;
	char **names;
};

/*
 * Expand a hostlist expression into *out (appending, in order, duplicates
 * kept).  Ranges keep zero padding ("n[08-10]" -> n08 n09 n10).  Several
 * bracket groups ("r[1-2]n[1-2]") expand as a product.  A range larger than
 * `limit` names in total is an error (limit <= 0: 10 million).
 * Returns 0, or -1 with err naming the bad part of the expression.
 */
int hosts_expand(struct hosts *out, const char *expr, long limit, pl_err_t *err);

/*
 * The compact form of a list of names ("node[1-4,7],gpu01"), in the given
 * order (consecutive runs only).  Caller frees.
 */
char *hosts_compress(const struct hosts *h);

void hosts_free(struct hosts *h);	/* frees names; *h becomes empty */

/*
 * Natural name order, as Slurm lists nodes: runs of digits compare as
 * numbers of any length (node2 < node10, mlx5_2 < mlx5_10), equal numbers
 * with fewer leading zeros first (n1 < n01), everything else byte by byte.
 * Returns <0, 0 or >0 like strcmp.
 */
int hosts_natural_cmp(const char *a, const char *b);

#endif
