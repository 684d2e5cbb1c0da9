/*
 * plays.h - the chunks a run played, kept for the report's gap list, the
 * pictures and the pages (plays.c): a tb_play_fn that collects them.
 * Keeping them is a convenience: on no memory a list stops growing (the
 * counts in the result stay exact) and its users say so.
 */
#ifndef TTSBUF_CLI_PLAYS_H
#define TTSBUF_CLI_PLAYS_H

#include <stddef.h>

#include "ttsbuf/playout.h"

struct tb_gap_list {
    struct tb_play *v; /* chunks, in order */
    size_t n, cap;
};

/* tb_play_fn that collects underrun chunks into a struct tb_gap_list. */
void tb_cli_collect_gap(void *ud, const struct tb_play *pl);

/* Every chunk's schedule (for --svg) and the underruns among them. */
struct tb_cli_plays {
    struct tb_gap_list gaps; /* the underrun chunks */
    struct tb_gap_list all;  /* every chunk, when keep_all */
    int keep_all;
};

/* Empty lists; keep_all: keep every chunk, not only the underruns.  The
 * lists are freed with tb_cli_plays_free. */
void tb_cli_plays_init(struct tb_cli_plays *p, int keep_all);
void tb_cli_plays_free(struct tb_cli_plays *p);

/* tb_play_fn over a struct tb_cli_plays. */
void tb_cli_collect_play(void *ud, const struct tb_play *pl);

#endif
