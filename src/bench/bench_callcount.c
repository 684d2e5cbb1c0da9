/*
 * bench_callcount.c - how a level's calls went, counted from its records
 * (bench_calls.h): the records of each call gathered by sorting (call,
 * turn) pairs, O(n log n) in the level's turns.
 */
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/bench.h"
#include "ttsbuf/error.h"

struct turnrec {
    int64_t call;
    int32_t turn;
    uint32_t convo;
    int ok;
};

static int by_call_turn(const void *a, const void *b)
{
    const struct turnrec *x = a, *y = b;
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    return (x->turn > y->turn) - (x->turn < y->turn);
}

int tb_bench_calls_count(const struct tb_bench_recs *r, uint32_t level, const struct tb_convos *cv,
                         size_t turns, struct tb_bench_calls_count *out)
{
    struct turnrec *v;
    size_t n = 0;
    memset(out, 0, sizeof(*out));
    v = malloc((r->n > 0 ? r->n : 1) * sizeof(*v));
    if (v == NULL)
        return TB_ENOMEM;
    for (size_t i = 0; i < r->n; i++) {
        const struct tb_bench_rec *x = &r->v[i];
        int cls = x->interrupted ? TB_END_CLASS_COMPLETE : tb_end_class(x->end);
        if (x->level != level || x->call < 0)
            continue;
        v[n].call = x->call;
        v[n].turn = x->turn;
        v[n].convo = x->prompt;
        v[n].ok = x->error == 0 && cls != TB_END_CLASS_INCOMPLETE && cls != TB_END_CLASS_FAILED;
        n++;
    }
    qsort(v, n, sizeof(*v), by_call_turn);
    out->turns = n;
    for (size_t i = 0; i < n;) {
        size_t j = i, want = 0;
        int all_ok = 1;
        while (j < n && v[j].call == v[i].call) {
            all_ok = all_ok && v[j].ok;
            j++;
        }
        if (cv != NULL && v[i].convo < cv->n) {
            want = cv->v[v[i].convo].n_turns;
            if (turns > 0 && turns < want)
                want = turns;
        }
        out->calls++;
        if (!v[j - 1].ok)
            out->ended_early++;
        else if (all_ok && j - i == want)
            out->completed++;
        i = j;
    }
    free(v);
    return 0;
}
