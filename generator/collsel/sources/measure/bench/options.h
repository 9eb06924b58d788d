/* The command line: every rank parses the same argv, so all agree on success or failure without
 * talking. Each parser returns 0, or the exit code 2 after one usage message (rank 0 prints). */
#ifndef OPTIONS_H
#define OPTIONS_H

#include "bench.h"

/* The whole command line into o (defaults first); 0 or 2. */
int options_parse(int argc, char **argv, int rank, struct options *o);
/* The usage message: `fmt` (one %s, `arg`) first, then how to call the program; returns 2. */
int options_usage_error(int rank, const char *fmt, const char *arg);
/* An integer in [low, high] / a number in [low, high], the whole text; 0 or -1. */
int options_parse_long(const char *text, long low, long high, long *out);
int options_parse_double(const char *text, double low, double high, double *out);
/* --mapping R0,R1,...: the rank playing each tree node, a permutation of 0..nprocs-1 (the
 * identity without it); map[v] and this rank's node. 0 or 2. */
int options_mapping(const struct options *o, int rank, int nprocs, int *map, int *node);

#endif
