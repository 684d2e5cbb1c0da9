/*
 * bench_tts.c - a real TTS per `ttsbuf bench` stream (see bench.h): each
 * stream's segmenter and TTS client on the level's loop thread, the
 * streams still speaking once their LLM transfer ended, and their logs
 * moved into the records.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "bench_filler.h"
#include "bench_tts.h"
#include "bench_ttsclient.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsws.h"

/* The segmenter closed a chunk: its text, pend[0 .. end - seg_from), goes
 * to the stream's client now. */
static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct xf *x = ud;
    size_t len = (size_t)(ch->end - x->seg_from);
    int rc;
    if (len > x->npend)
        len = x->npend;
    rc = x->tts_rc == 0 ? tb_ttsnet_submit(x->tts, x->pend, len) : 0;
    if (rc == TB_ENOMEM)
        x->tts_rc = rc;
    /* TB_EINVAL: the client stopped (a chunk failed, cancel): not sent;
     * TB_ETOOBIG cannot be (a chunk is the stream's own text) */
    memmove(x->pend, x->pend + len, x->npend - len);
    x->npend -= len;
    x->seg_from = ch->end;
}

/* The content events that came since the last feed, to the segmenter at
 * their arrival times; then its timer at `now` (the stream's time). */
static void feed(struct xf *x, double now)
{
    const struct tb_stream *s = &x->stream;
    for (; x->fed < s->n && x->tts_rc == 0; x->fed++) {
        const struct tb_event *e = &s->ev[x->fed];
        if (e->kind != TB_KIND_CONTENT || e->len == 0)
            continue;
        if (x->npend + e->len > x->pendcap) {
            size_t nc = (x->npend + e->len) * 2;
            char *np = realloc(x->pend, nc);
            if (np == NULL) {
                x->tts_rc = TB_ENOMEM;
                return;
            }
            x->pend = np;
            x->pendcap = nc;
        }
        memcpy(x->pend + x->npend, s->text + e->off, e->len);
        x->npend += e->len;
        tb_seg_feed_at(x->seg, e->t, s->text + e->off, e->len, on_chunk, x);
    }
    if (x->tts_rc == 0 && !isinf(tb_seg_deadline(x->seg)))
        tb_seg_tick(x->seg, now, on_chunk, x);
}

int tb_bench_tts_open(struct bench *b, struct xf *x, char *err, size_t errlen)
{
    int rc;
    if (x->seg == NULL) {
        rc = tb_seg_create(&b->o->sim.seg, &x->seg);
        if (rc != 0)
            return tb_seterr(err, errlen, rc, "the chunk policy: %s", tb_strerror(rc));
    }
    tb_seg_reset(x->seg);
    x->npend = 0;
    x->fed = 0;
    x->seg_from = 0;
    x->tts_rc = 0;
    x->tts_dead = 0;
    x->filler_tried = 0;
    return tb_bench_tts_client(b, x, NULL, &x->tts, err, errlen);
}

/* The record of a stream whose TTS is over: its log, and a failed chunk
 * as the record's error when the stream had none. */
static int conclude_rec(struct bench *b, struct tb_ttsnet *c, size_t ri, int crc);

/* The record of a stream whose TTS is over; a call's turn then ends
 * (slot >= 0), its playout measured. */
static int conclude(struct bench *b, struct tb_ttsnet *c, size_t ri, int crc, int64_t slot)
{
    int rc = conclude_rec(b, c, ri, crc);
    if (rc == 0 && slot >= 0 && b->turn_ended != NULL)
        b->turn_ended(b, (uint32_t)slot, ri);
    return rc;
}

static int conclude_rec(struct bench *b, struct tb_ttsnet *c, size_t ri, int crc)
{
    struct tb_bench_rec *rec = &b->out->v[ri];
    struct tb_tts_log *log = malloc(sizeof(*log));
    uint32_t j = tb_ttsnet_failed(c);
    int rc = 0;
    if (log == NULL)
        return TB_ENOMEM;
    tb_ttsnet_take_log(c, log);
    rec->stream->tts = log;
    if (tb_bench_rec_tts(rec, log) != 0)
        return TB_ENOMEM;
    if (rec->error != 0)
        return 0;
    if (crc != 0) {
        rec->error = TB_READER_TTS;
        rc = tb_bench_rec_message(rec, "the TTS client failed: %s", tb_strerror(crc));
    } else if (j > 0 && j <= log->n) {
        const struct tb_tts_chunk *k = &log->c[j - 1];
        char st[24] = "";
        if (k->status != 0)
            snprintf(st, sizeof(st), " %ld", k->status);
        rec->error = TB_READER_TTS;
        rc = tb_bench_rec_message(rec, "TTS chunk %u: %s%s%s%.200s", j, tb_tts_fail_name(k->fail),
                                  st, k->message[0] ? ": " : "", k->message);
    } else if (b->stopped) {
        /* the stream came whole, its speech was cut by the cancel */
        for (size_t i = 0; i < log->n && rec->error == 0; i++)
            if (log->c[i].fail == TB_TTS_CANCELED) {
                rec->error = TB_READER_TTS;
                rc = tb_bench_rec_message(
                    rec, "TTS chunk %zu: canceled: interrupted before its audio ended", i + 1);
            }
    }
    if (rec->error != 0)
        b->errors++;
    return rc;
}

int tb_bench_tts_close(struct bench *b, struct xf *x, size_t ri)
{
    int64_t slot = x->call >= 0 ? (int64_t)x->slot : -1;
    struct ttsjob *j;
    int rc;
    tb_bench_filler_drop(b, x); /* the turn was not a tool call's: no filler kept */
    if (x->tts == NULL)
        return 0;
    feed(x, b->clk.virtual_now - x->t_start);
    if (x->tts_rc == 0)
        tb_seg_finish(x->seg, on_chunk, x);
    if (x->barged) /* the caller interrupted it: every TTS stream closed now, the chunks not
                    * sent logged "canceled" (so the replay finds them) */
        tb_ttsnet_cancel(x->tts);
    j = calloc(1, sizeof(*j));
    if (j == NULL) {
        tb_ttsnet_cancel(x->tts);
        rc = conclude(b, x->tts, ri, TB_ENOMEM, slot);
        tb_ttsnet_destroy(x->tts);
        x->tts = NULL;
        b->ntts--;
        return rc != 0 ? rc : TB_ENOMEM;
    }
    j->tts = x->tts;
    j->rec = ri;
    j->rc = x->tts_rc;
    j->slot = slot;
    j->barge_b = x->barged ? NAN : x->barge_b;
    j->t_start = x->t_start;
    j->next = b->jobs;
    b->jobs = j;
    b->njobs++;
    x->tts = NULL;
    return 0;
}

void tb_bench_tts_drop(struct bench *b, struct xf *x)
{
    tb_bench_filler_drop(b, x);
    if (x->tts == NULL)
        return;
    tb_ttsnet_destroy(x->tts);
    x->tts = NULL;
    b->ntts--;
}

double tb_bench_tts_heard(const struct tb_ttsnet *c, double preroll)
{
    const struct tb_tts_log *l = tb_ttsnet_log(c);
    double got = 0;
    for (size_t i = 0; i < l->n; i++)
        for (uint32_t k = 0; k < l->c[i].narr && l->c[i].rate > 0; k++) {
            got += tb_tts_arrival_piece_s(&l->c[i], k);
            if (got > 0 && got >= preroll)
                return l->c[i].arr[k].t;
        }
    return NAN;
}

/* A job whose caller interrupts it (bench.h): at T its TTS is stopped
 * (every stream it has open closed now) and its record says when. */
static void job_barge(struct bench *b, struct ttsjob *j)
{
    double s1, T;
    if (isnan(j->barge_b) || j->rc != 0)
        return;
    s1 = tb_bench_tts_heard(j->tts, b->o->sim.play.preroll);
    if (isnan(s1))
        return;
    T = j->t_start + s1 + j->barge_b;
    if (b->mono.now(&b->mono) < T)
        return;
    j->barge_b = NAN;
    tb_ttsnet_cancel(j->tts);
    b->out->v[j->rec].interrupted = 1;
    b->out->v[j->rec].barge_in = T - j->t_start;
}

int tb_bench_tts_step(struct bench *b)
{
    struct ttsjob **pp = &b->jobs;
    int rc = 0;
    if (b->wsl != NULL) /* what came on every WebSocket, read and stamped */
        tb_ttsws_loop_service(b->wsl);
    for (struct xf *x = b->inflight; x != NULL; x = x->next) {
        if (x->tts == NULL)
            continue;
        if (rc == 0)
            rc = tb_bench_filler_start(b, x); /* a tool call began: the filler goes */
        feed(x, b->clk.virtual_now - x->t_start);
        if (x->tts_rc == 0) {
            int n = tb_ttsnet_step(x->tts, 0);
            if (n < 0) {
                x->tts_rc = n;
                tb_ttsnet_cancel(x->tts);
            } else if (!x->tts_dead && tb_ttsnet_failed(x->tts) > 0 &&
                       tb_tts_log_dead(tb_ttsnet_log(x->tts), NULL, 0) > 0) {
                x->tts_dead = 1; /* its LLM transfer is stopped after the step */
                b->tts_dead++;
            }
        }
    }
    tb_bench_filler_step(b);
    while (*pp != NULL) {
        struct ttsjob *j = *pp;
        int n;
        job_barge(b, j);
        n = j->rc == 0 ? tb_ttsnet_step(j->tts, 0) : 0;
        if (n < 0) {
            j->rc = n;
            tb_ttsnet_cancel(j->tts);
            n = 0;
        }
        if (n > 0) {
            pp = &j->next;
            continue;
        }
        if (j->rc == 0)
            n = tb_ttsnet_finish(j->tts, INFINITY); /* every chunk ended: returns at once */
        if (j->rc != 0)
            tb_ttsnet_cancel(j->tts);
        if (rc == 0)
            rc = conclude(b, j->tts, j->rec, j->rc != 0 ? j->rc : n < 0 ? n : 0, j->slot);
        tb_ttsnet_destroy(j->tts);
        *pp = j->next;
        free(j);
        b->njobs--;
        b->ntts--;
    }
    if (b->wsl != NULL) /* what the steps queued, written now */
        tb_ttsws_loop_service(b->wsl);
    return rc;
}

int tb_bench_tts_cancel(struct bench *b)
{
    for (struct ttsjob *j = b->jobs; j != NULL; j = j->next)
        tb_ttsnet_cancel(j->tts);
    tb_bench_filler_cancel(b);
    return tb_bench_tts_step(b);
}

void tb_bench_tts_free(struct bench *b)
{
    tb_bench_filler_free(b);
    while (b->jobs != NULL) {
        struct ttsjob *j = b->jobs;
        b->jobs = j->next;
        tb_ttsnet_destroy(j->tts);
        free(j);
    }
    b->njobs = 0;
}
