/*
 * bench_filler.c - bench --filler with a real TTS (see bench_filler.h).
 */
#include "bench_filler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ttsclient.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"

/* A call's filler speaking while the call waits for its tool. */
struct fillerjob {
    struct tb_ttsnet *tts;
    uint32_t slot;
    uint64_t call; /* the call's id (a slot is reused by later calls) */
    int ended;     /* its chunk ended: not stepped again */
    struct fillerjob *next;
};

/* Whether x is a call's turn whose filler may go (a real TTS speaks it,
 * --filler). */
static int wants(const struct bench *b, const struct xf *x)
{
    return b->o->filler != NULL && b->calling && !x->warm && x->call >= 0 && x->slot < b->calls.n &&
           x->tts != NULL;
}

/* The filler sent for x now.  0 or TB_ENOMEM. */
static int send_filler(struct bench *b, struct xf *x)
{
    char err[256];
    int rc;
    x->filler_tried = 1;
    rc = tb_bench_tts_client(b, x, "filler", &x->ftts, err, sizeof(err));
    if (rc != 0)
        return rc == TB_ENOMEM ? rc : 0; /* no client: no filler */
    rc = tb_ttsnet_submit(x->ftts, b->o->filler, strlen(b->o->filler));
    return rc == TB_ENOMEM ? rc : 0; /* TB_EINVAL cannot be: checked UTF-8 */
}

int tb_bench_filler_start(struct bench *b, struct xf *x)
{
    if (x->filler_tried || x->stream.ntools == 0 || !wants(b, x) ||
        b->calls.v[x->slot].tool != 0) /* the second request calls again: no filler */
        return 0;
    return send_filler(b, x);
}

int tb_bench_filler_keep(struct bench *b, struct xf *x)
{
    struct fillerjob *j;
    int rc = 0;
    if (!x->filler_tried && wants(b, x))
        rc = send_filler(b, x); /* the call began and ended within one wake-up (its call
                                 * was waiting for no tool before: tb_bench_tool_taken) */
    if (x->ftts == NULL)
        return rc;
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        tb_bench_filler_drop(b, x);
        return TB_ENOMEM;
    }
    j->tts = x->ftts;
    j->slot = x->slot;
    j->call = (uint64_t)x->call;
    j->next = b->fillers;
    b->fillers = j;
    x->ftts = NULL;
    return rc;
}

void tb_bench_filler_drop(struct bench *b, struct xf *x)
{
    if (x->ftts == NULL)
        return;
    tb_ttsnet_destroy(x->ftts);
    x->ftts = NULL;
    b->ntts--;
}

void tb_bench_filler_step(struct bench *b)
{
    for (struct xf *x = b->inflight; x != NULL; x = x->next)
        if (x->ftts != NULL && tb_ttsnet_step(x->ftts, 0) < 0)
            tb_ttsnet_cancel(x->ftts);
    for (struct fillerjob *j = b->fillers; j != NULL; j = j->next) {
        int n;
        if (j->ended)
            continue;
        n = tb_ttsnet_step(j->tts, 0);
        if (n < 0)
            tb_ttsnet_cancel(j->tts);
        j->ended = n <= 0;
    }
}

/* Job j unlinked (pp: the link to it) and freed, its client with it. */
static void job_free(struct bench *b, struct fillerjob **pp)
{
    struct fillerjob *j = *pp;
    *pp = j->next;
    tb_ttsnet_destroy(j->tts);
    free(j);
    b->ntts--;
}

struct tb_tts_log *tb_bench_filler_take(struct bench *b, uint32_t slot, uint64_t call)
{
    struct fillerjob **pp = &b->fillers;
    struct tb_tts_log *log;
    while (*pp != NULL && ((*pp)->slot != slot || (*pp)->call != call))
        pp = &(*pp)->next;
    if (*pp == NULL)
        return NULL;
    if (!(*pp)->ended)
        tb_ttsnet_cancel((*pp)->tts); /* still speaking: what came is its audio */
    else
        (void)tb_ttsnet_finish((*pp)->tts, INFINITY); /* every chunk ended: at once */
    log = malloc(sizeof(*log));
    if (log != NULL)
        tb_ttsnet_take_log((*pp)->tts, log);
    job_free(b, pp);
    return log;
}

void tb_bench_filler_cancel(struct bench *b)
{
    for (struct fillerjob *j = b->fillers; j != NULL; j = j->next)
        if (!j->ended) {
            tb_ttsnet_cancel(j->tts);
            j->ended = 1;
        }
}

void tb_bench_filler_free(struct bench *b)
{
    while (b->fillers != NULL)
        job_free(b, &b->fillers);
}
