/*
 * plays.c - the chunks a run played, collected (see plays.h).
 */
#include "plays.h"

#include <stdlib.h>
#include <string.h>

/* Appends a schedule to a list; on no memory the list just stops growing
 * (it is a convenience: the counts stay exact). */
static void play_push(struct tb_gap_list *g, const struct tb_play *pl)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        struct tb_play *v = realloc(g->v, cap * sizeof(*v));
        if (v == NULL)
            return;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = *pl;
}

void tb_cli_collect_gap(void *ud, const struct tb_play *pl)
{
    if (pl->gap > 0.0)
        play_push(ud, pl);
}

void tb_cli_plays_init(struct tb_cli_plays *p, int keep_all)
{
    memset(p, 0, sizeof(*p));
    p->keep_all = keep_all;
}

void tb_cli_plays_free(struct tb_cli_plays *p)
{
    free(p->gaps.v);
    free(p->all.v);
    tb_cli_plays_init(p, p->keep_all);
}

void tb_cli_collect_play(void *ud, const struct tb_play *pl)
{
    struct tb_cli_plays *p = ud;
    if (pl->gap > 0.0)
        play_push(&p->gaps, pl);
    if (p->keep_all)
        play_push(&p->all, pl);
}
