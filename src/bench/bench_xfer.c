/*
 * bench_xfer.c - one `ttsbuf bench` stream (see bench_xfer.h): its
 * request body, its transfer on the level's multi handle, its bytes
 * through the stream reader (reader.h, as `run` reads them), and the
 * record it leaves.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_barge_rt.h"
#include "bench_loop.h"
#include "bench_retry.h"
#include "bench_tool.h"
#include "bench_xfer.h"
#include "bench_filler.h"
#include "bench_tts.h"
#include "ttsbuf/api.h"
#include "ttsbuf/error.h"

uint64_t tb_bench_held(const struct tb_stream *s)
{
    return (uint64_t)s->n * sizeof(struct tb_event) + s->text_len;
}

static void unlink_inflight(struct bench *b, struct xf *x)
{
    if (x->prev != NULL)
        x->prev->next = x->next;
    else
        b->inflight = x->next;
    if (x->next != NULL)
        x->next->prev = x->prev;
    x->next = x->prev = NULL;
    b->ninflight--;
}

/* The reader's hook after each delta: bench's total of what it keeps of
 * all its streams (the delta is recorded; the total may pass the cap by
 * that one delta). */
static int held_push(void *ud, struct tb_reader *rd, double t, const char *text, size_t len,
                     uint8_t kind)
{
    struct xf *x = ud;
    (void)t;
    (void)text;
    (void)kind;
    x->b->held += sizeof(struct tb_event) + len;
    if (x->b->held <= x->b->held_max)
        return 0;
    tb_reader_fail(rd, TB_READER_TOO_LONG,
                   "over %llu MiB held of all the streams: the stream stops there (bench's total "
                   "cap)",
                   (unsigned long long)(x->b->held_max >> 20));
    return -1;
}

static struct xf *get_xf(struct bench *b)
{
    struct xf *x = b->free_list;
    if (x != NULL) {
        b->free_list = x->next;
        return x;
    }
    x = calloc(1, sizeof(*x));
    if (x == NULL)
        return NULL;
    x->b = b;
    tb_stream_init(&x->stream);
    if (tb_reader_init(&x->rd, b->o->req.api) != 0) {
        free(x);
        return NULL;
    }
    x->rd.push = held_push;
    x->rd.push_ud = x;
    return x;
}

static void put_xf(struct bench *b, struct xf *x)
{
    x->next = b->free_list;
    x->prev = NULL;
    b->free_list = x;
}

void tb_bench_xf_destroy(struct xf *x)
{
    while (x != NULL) {
        struct xf *nx = x->next;
        tb_reader_free(&x->rd);
        tb_stream_free(&x->stream);
        tb_ttsnet_destroy(x->tts);
        tb_ttsnet_destroy(x->ftts);
        tb_seg_destroy(x->seg);
        tb_bench_barge_free(x);
        free(x->hdrs);
        free(x->pend);
        free(x->body);
        free(x);
        x = nx;
    }
}

/* The global id of local request k: this shard's k-th id. */
static uint64_t global_id(const struct bench *b, uint64_t k)
{
    uint32_t n = b->o->nshards > 0 ? b->o->nshards : 1;
    return b->o->shard + k * n;
}

/* The request body for prompt p with the template's dialect, model and
 * options.  *out is malloc'd.  Returns 0, TB_EINVAL (bad messages/extra
 * JSON, err says) or TB_ENOMEM. */
static int request_body(const struct tb_api_request *tmpl, const struct tb_bench_prompt *p,
                        const char *tools_json, char **out, char *err, size_t errlen)
{
    struct tb_api_request q = *tmpl;
    q.prompt = p->prompt != NULL ? p->prompt : "";
    q.messages_json = p->messages_json;
    q.tools_json = tools_json;
    q.include_usage =
        q.include_usage && tb_api_info(q.api) != NULL && tb_api_info(q.api)->usage_option;
    return tb_api_request_body(&q, out, err, errlen);
}

/* Every request carries "X-Ttsbuf-Request-Id" (bench.h) after the
 * level's headers: cCALL.tTURN for a call's turn, rID for a request.
 * 0 or TB_ENOMEM. */
static int id_header(struct bench *b, struct xf *x)
{
    size_t n = b->http.nheaders;
    if (x->hdrcap < n + 1) {
        const char **h = realloc(x->hdrs, (n + 1) * sizeof(*h));
        if (h == NULL)
            return TB_ENOMEM;
        x->hdrs = h;
        x->hdrcap = n + 1;
    }
    for (size_t i = 0; i < n; i++)
        x->hdrs[i] = b->http.headers[i];
    if (x->call >= 0)
        snprintf(x->rid, sizeof(x->rid), "X-Ttsbuf-Request-Id: c%lld.t%d", (long long)x->call,
                 (int)x->turn);
    else
        snprintf(x->rid, sizeof(x->rid), "X-Ttsbuf-Request-Id: r%llu",
                 (unsigned long long)x->id);
    x->hdrs[n] = x->rid;
    x->q.headers = x->hdrs;
    x->q.nheaders = n + 1;
    return 0;
}

/* --llm-capacity (bench.h): x asks for a slot as it starts.  Returns 1
 * when it must wait (queued: waiting, as a retry waits, until
 * tb_bench_xf_retry sees it granted), 0 when it may go (a slot, or no
 * capacity). */
static int llm_enter(struct bench *b, struct xf *x)
{
    x->llm_queued = x->llm_held = 0;
    x->llm_wait = NAN;
    if (b->o->llm_capacity == NULL)
        return 0;
    if (tb_capq_enter(b->o->llm_capacity, &x->llm_slot)) {
        x->llm_held = 1;
        x->llm_wait = 0.0;
        return 0;
    }
    x->llm_queued = 1;
    x->waiting = 1;
    x->retry_at = INFINITY;
    x->running = 0;
    tb_http_resp_free(&x->hr);
    x->hr.status = 0; /* nothing was sent */
    b->nwaiting++;
    b->nllmq++;
    return 1;
}

/* x's slot given back (or its place in the queue left), if it has one. */
static void llm_leave(struct bench *b, struct xf *x)
{
    if (!x->llm_queued && !x->llm_held)
        return;
    tb_capq_leave(b->o->llm_capacity, &x->llm_slot);
    if (x->llm_queued)
        b->nllmq--;
    x->llm_queued = x->llm_held = 0;
}

/* Starts transfer x, its body set (warm-up or measured, scheduled at
 * t_sched).  x goes back to the free list on failure. */
static int launch(struct bench *b, struct xf *x, int warm, double t_sched, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    int rc;
    x->q = b->http;
    x->q.body = x->body;
    rc = id_header(b, x);
    if (rc != 0) {
        put_xf(b, x);
        return tb_seterr(err, errlen, rc, "out of memory");
    }
    tb_bench_loop_stamp(b);
    x->t_sched = warm ? b->clk.virtual_now : t_sched;
    x->t_start = b->clk.virtual_now;
    x->nretries = 0;
    x->waiting = 0;
    b->held -= tb_bench_held(&x->stream); /* a warm-up's, given back */
    tb_stream_clear(&x->stream);
    x->stream.usage_tokens = -1;
    x->rd.secrets = b->secrets; /* what the server says is masked as it is kept */
    tb_reader_begin(&x->rd, &x->stream, x->t_start);
    if (!warm && o->tts != NULL) {
        rc = tb_bench_tts_open(b, x, err, errlen);
        if (rc != 0) {
            put_xf(b, x);
            return rc;
        }
    }
    if (llm_enter(b, x))
        goto in_flight; /* sent once a slot is its (tb_bench_xf_retry) */
    rc = tb_bench_barge_begin(b, x, err, errlen);
    if (rc != 0) {
        llm_leave(b, x);
        put_xf(b, x);
        return rc;
    }
    rc = tb_http_xfer_begin(&x->hx, &x->q, &b->clk, tb_reader_feed, &x->rd, &x->hr);
    if (rc == 0)
        curl_easy_setopt(x->hx.h, CURLOPT_PRIVATE, (void *)x);
    if (rc == 0 && curl_multi_add_handle(b->m, x->hx.h) != CURLM_OK) {
        tb_http_xfer_end(&x->hx, CURLE_FAILED_INIT);
        tb_http_resp_free(&x->hr);
        rc = tb_seterr(err, errlen, TB_EIO, "libcurl would not add a transfer");
    }
    if (rc != 0) {
        tb_bench_barge_drop(b, x);
        tb_bench_tts_drop(b, x);
        llm_leave(b, x);
        put_xf(b, x);
        return rc;
    }
    x->running = 1;
in_flight:
    x->next = b->inflight;
    x->prev = NULL;
    if (b->inflight != NULL)
        b->inflight->prev = x;
    b->inflight = x;
    b->ninflight++;
    if (warm)
        b->warm_left--;
    else
        b->started++;
    return 0;
}

int tb_bench_xf_start(struct bench *b, double t_sched, char *err, size_t errlen)
{
    const struct tb_bench_opts *o = b->o;
    struct xf *x = get_xf(b);
    int warm = b->warm_left > 0;
    uint64_t k = warm ? b->next_local : b->next_local - o->warmup;
    int rc;
    if (x == NULL) {
        snprintf(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    x->warm = warm;
    x->fd = -1;
    x->call = -1;
    x->turn = -1;
    x->id = global_id(b, k);
    x->prompt = (uint32_t)(x->id % o->prompts->n);
    free(x->body);
    x->body = NULL;
    rc = request_body(&o->req, &o->prompts->v[x->prompt], NULL, &x->body, err, errlen);
    if (rc != 0) {
        put_xf(b, x);
        return rc;
    }
    rc = launch(b, x, warm, t_sched, err, errlen);
    if (rc == 0)
        b->next_local++;
    return rc;
}

int tb_bench_xf_start_turn(struct bench *b, uint32_t slot, const char *messages_json,
                           const char *tools_json, double t_sched, char *err, size_t errlen)
{
    const struct call *c = &b->calls.v[slot];
    struct tb_bench_prompt p = {NULL, (char *)(uintptr_t)messages_json};
    struct xf *x = get_xf(b);
    int rc;
    if (x == NULL) {
        snprintf(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    x->warm = 0;
    x->fd = -1;
    x->slot = slot;
    x->call = (int64_t)c->id;
    x->turn = (int32_t)c->turn;
    x->id = c->id * TB_CONVO_TURNS_MAX + c->turn;
    x->prompt = c->convo;
    free(x->body);
    x->body = NULL;
    rc = request_body(&b->o->req, &p, tools_json, &x->body, err, errlen);
    if (rc != 0) {
        put_xf(b, x);
        return rc;
    }
    return launch(b, x, 0, t_sched, err, errlen);
}

/* The record of a stream the caller closed at T (bench.h): ended by the
 * caller, not failed; its end says so and when it was decided. */
static void barged_rec(struct bench *b, struct xf *x, struct tb_bench_rec *rec)
{
    rec->error = 0;
    (void)tb_bench_rec_message(rec, "%s", ""); /* frees; "" cannot fail */
    rec->end = TB_END_INTERRUPTED;
    rec->interrupted = 1;
    rec->barge_in = x->barge_t - x->t_start;
    rec->cancel_s = x->cancel_s;
    rec->cancel_mono_s = b->mono.origin + x->cancel_s;
    x->stream.end.kind = TB_END_INTERRUPTED;
    x->stream.end.error[0] = '\0';
    snprintf(x->stream.end.message, sizeof(x->stream.end.message),
             "barge-in: the caller interrupted the answer at %.3f s", rec->barge_in);
}

int tb_bench_xf_barge(struct bench *b, struct xf *x)
{
    /* The decision, then the close: no reuse, so removing the unfinished
     * transfer closes its socket now (libcurl would otherwise keep a
     * connection that is known good for the next request).  Its TTS
     * is stopped right after, once its last chunks are logged (bench_tts.c). */
    x->cancel_s = b->mono.now(&b->mono);
    x->barged = 1;
    curl_easy_setopt(x->hx.h, CURLOPT_FORBID_REUSE, 1L);
    x->hr.cancelled = 1;
    return tb_bench_xf_finish(b, x, CURLE_ABORTED_BY_CALLBACK);
}

int tb_bench_xf_stop_dead(struct bench *b)
{
    int rc = 0;
    for (struct xf *x = b->inflight, *nx; x != NULL && rc == 0; x = nx) {
        char msg[640];
        nx = x->next; /* x leaves the list */
        if (!x->tts_dead)
            continue;
        x->tts_dead = 0;
        /* The record's error first (the reader keeps the first), with the
         * time it was stopped; the connection closed, as at a barge-in. */
        tb_tts_log_dead(tb_ttsnet_log(x->tts), msg, sizeof(msg));
        tb_bench_loop_stamp(b);
        x->rd.t_now = b->clk.virtual_now;
        tb_reader_fail(&x->rd, TB_READER_TTS, "%s", msg);
        curl_easy_setopt(x->hx.h, CURLOPT_FORBID_REUSE, 1L);
        x->hr.cancelled = 1;
        rc = tb_bench_xf_finish(b, x, CURLE_ABORTED_BY_CALLBACK);
    }
    b->tts_dead = 0;
    return rc;
}

/* drop_streams (bench.h): the record's stream played out now (a call's
 * turn was, when it ended), handed to the caller's record callback, and
 * given back to the transfer, whose next request reuses its memory; the
 * record keeps its fields and gaps, or with fold (bench.h) is folded into
 * its level's summary and dropped.  0, the playout's error (b->play_err
 * says) or the callback's. */
static int play_drop(struct bench *b, struct xf *x, size_t rec_index)
{
    struct tb_bench_rec *rec = &b->out->v[rec_index];
    int rc = 0;
    if (rec->call < 0)
        rc = tb_bench_analyze(rec, &b->o->sim, b->play_err, sizeof(b->play_err));
    if (rc == 0 && b->o->record != NULL && (rc = b->o->record(b->o->record_ud, rec)) != 0)
        snprintf(b->play_err, sizeof(b->play_err), "writing request %llu's record: %s",
                 (unsigned long long)rec->id, tb_strerror(rc));
    tb_stream_free(&x->stream); /* empty: the record took it */
    x->stream = *rec->stream;   /* held: given back when x starts again */
    free(rec->stream);
    rec->stream = NULL;
    /* fold: an ok record outside calls lives on in its level's fold only */
    if (rc == 0 && b->o->fold && rec_index + 1 == b->out->n && rec->error == 0 &&
        rec->call < 0 && !rec->barge && !rec->tts &&
        (rc = tb_bench_recs_fold(b->out, b->o->slo)) != 0)
        snprintf(b->play_err, sizeof(b->play_err), "folding request %llu's record: %s",
                 (unsigned long long)rec->id, tb_strerror(rc));
    return rc;
}

/* Turns a finished transfer into a record (measured ones only). */
/* A transfer that ended in a tool call: the turn goes on with its result
 * (bench_tool.h), its filler speaking on (bench_filler.h); the transfer
 * is put back without a record. */
static void tool_goes_on(struct bench *b, struct xf *x)
{
    if (tb_bench_filler_keep(b, x) != 0 && b->calls.rc == 0)
        b->calls.rc = tb_seterr(b->calls.err, sizeof(b->calls.err), TB_ENOMEM, "out of memory");
    tb_bench_tts_drop(b, x);
    b->held -= tb_bench_held(&x->stream);
    tb_stream_clear(&x->stream);
    tb_http_resp_free(&x->hr);
    put_xf(b, x);
}

int tb_bench_xf_finish(struct bench *b, struct xf *x, int curl_code)
{
    struct tb_bench_rec *rec;
    int rc = 0;
    tb_bench_loop_stamp(b);
    if (x->waiting) {
        /* Stopped while waiting to retry: its last refusal is its end;
         * while waiting for an LLM slot: never sent, cancelled. */
        x->waiting = 0;
        b->nwaiting--;
        if (x->llm_queued) {
            x->rd.error = TB_READER_CANCELLED;
            snprintf(x->rd.message, sizeof(x->rd.message),
                     "stopped while waiting for an LLM slot (--llm-capacity): never sent");
        }
    } else {
        curl_multi_remove_handle(b->m, x->hx.h);
        /* A redirect: the same transfer goes on to the next hop, by the
         * rules `run` follows (http_xfer.h). */
        if (tb_http_xfer_redirect(&x->hx, &curl_code)) {
            if (curl_multi_add_handle(b->m, x->hx.h) == CURLM_OK)
                return 0;
            curl_code = CURLE_FAILED_INIT;
        }
        tb_http_xfer_end(&x->hx, curl_code);
        tb_reader_conclude(&x->rd, &x->hr, &b->o->http, b->clk.virtual_now);
        tb_bench_barge_drop(b, x);
        if (tb_bench_retry_take(b, x))
            return 0; /* still in flight: tb_bench_xf_retry sends it again */
    }
    unlink_inflight(b, x);
    x->running = 0;
    llm_leave(b, x);
    if (tb_bench_tool_taken(b, x)) {
        tool_goes_on(b, x);
        return 0;
    }
    if (!x->warm) {
        rec = tb_bench_recs_add(b->out);
        if (rec == NULL) {
            tb_bench_tts_drop(b, x);
            rc = TB_ENOMEM;
        } else {
            rec->level = b->level;
            rec->id = x->id;
            rec->prompt = x->prompt;
            rec->call = x->call;
            rec->turn = x->turn;
            rec->t_sched = x->t_sched;
            rec->t_start = x->t_start;
            rec->t_end = b->clk.virtual_now;
            rec->error = x->rd.error;
            rec->end = x->stream.end.kind;
            if (tb_bench_rec_message(rec, "%s", x->rd.message) != 0 ||
                tb_bench_rec_warning(rec, "%s", x->rd.warning) != 0)
                rc = TB_ENOMEM;
            rec->http_status = x->hr.status;
            rec->nretries = x->nretries;
            rec->refusals = x->nretries + (uint32_t)tb_bench_retry_refused(x);
            memcpy(rec->retry_wait, x->retry_wait, sizeof(rec->retry_wait));
            rec->llm_wait = x->llm_wait;
            if (x->barged)
                barged_rec(b, x, rec);
            uint64_t nc = 0;
            for (size_t i = 0; i < x->stream.n; i++)
                nc += x->stream.ev[i].kind == TB_KIND_CONTENT;
            rec->usage_tokens = x->rd.usage_completion;
            if (x->rd.usage_completion >= 0 &&
                !tb_stream_usage_credible(x->rd.usage_completion, nc)) {
                rec->usage_ignored = x->rd.usage_completion; /* events are counted instead */
                rec->usage_tokens = -1;
            }
            rec->surrogates_replaced = tb_api_replaced(x->rd.parser);
            x->stream.usage_tokens = rec->usage_tokens;
            /* The last chunks go to the TTS (the stream is whole now); a
             * call's turn with one ends when its speech does. */
            int speaking = x->tts != NULL;
            if (tb_bench_tts_close(b, x, b->out->n - 1) != 0)
                rc = TB_ENOMEM;
            /* The record takes the stream; the transfer starts a new one. */
            *rec->stream = x->stream;
            tb_stream_init(&x->stream);
            b->done++;
            if (rec->error != 0)
                b->errors++;
            b->events += nc;
            if (rc == 0 && x->call >= 0 && b->turn_ended != NULL && !speaking)
                b->turn_ended(b, x->slot, b->out->n - 1);
            if (rc == 0 && b->o->drop_streams && b->o->tts == NULL)
                rc = play_drop(b, x, b->out->n - 1);
        }
    }
    tb_http_resp_free(&x->hr);
    put_xf(b, x);
    return rc;
}

int tb_bench_xf_drain(struct bench *b)
{
    CURLMsg *msg;
    int left, rc = 0;
    while ((msg = curl_multi_info_read(b->m, &left)) != NULL) {
        char *p = NULL;
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
        if (p != NULL && rc == 0)
            rc = tb_bench_xf_finish(b, (struct xf *)(void *)p, (int)msg->data.result);
        (void)tb_bench_loop_watch(b); /* an epoll error shows at the loop's next wait */
    }
    return rc;
}

/* Ends transfers the loop itself stops: idle ones, or all on cancel. */
int tb_bench_xf_stop(struct bench *b, int all)
{
    double now = b->clk.virtual_now;
    struct xf *x = b->inflight;
    int rc = 0;
    while (x != NULL) {
        struct xf *nx = x->next;
        double idle = b->o->http.idle_timeout;
        if (all) {
            x->hr.cancelled = !x->waiting; /* a waiting one ends with its refusal */
        } else if (x->waiting) {
            x = nx;
            continue;
        } else if (idle > 0 && now - x->rd.last_data > idle) {
            x->hr.idle_timeout = 1;
        } else {
            x = nx;
            continue;
        }
        if (rc == 0)
            rc = tb_bench_xf_finish(b, x, CURLE_ABORTED_BY_CALLBACK);
        x = nx;
    }
    return rc;
}

/* Sends x again (bench.h's Retries): a new transfer of the same request,
 * its times still from the first attempt's send. */
static int resend(struct bench *b, struct xf *x, char *err, size_t errlen)
{
    int rc;
    x->waiting = 0;
    b->nwaiting--;
    tb_http_resp_free(&x->hr);
    b->held -= tb_bench_held(&x->stream);
    tb_stream_clear(&x->stream);
    x->stream.usage_tokens = -1;
    tb_reader_begin(&x->rd, &x->stream, x->t_start);
    x->rd.last_data = b->clk.virtual_now; /* idle from now, not from the first send */
    rc = tb_bench_barge_begin(b, x, err, errlen);
    if (rc != 0)
        return rc;
    rc = tb_http_xfer_begin(&x->hx, &x->q, &b->clk, tb_reader_feed, &x->rd, &x->hr);
    if (rc != 0)
        return tb_seterr(err, errlen, rc, "out of memory");
    curl_easy_setopt(x->hx.h, CURLOPT_PRIVATE, (void *)x);
    if (curl_multi_add_handle(b->m, x->hx.h) != CURLM_OK) {
        tb_http_xfer_end(&x->hx, CURLE_FAILED_INIT);
        return tb_seterr(err, errlen, TB_EIO, "libcurl would not add a transfer");
    }
    x->running = 1;
    return 0;
}

int tb_bench_xf_retry(struct bench *b, char *err, size_t errlen)
{
    int rc = 0;
    if (b->nwaiting == 0)
        return 0;
    tb_bench_loop_stamp(b);
    for (struct xf *x = b->inflight; x != NULL && rc == 0; x = x->next) {
        double g;
        if (x->waiting && x->llm_queued && tb_capq_held(b->o->llm_capacity, &x->llm_slot, &g)) {
            x->llm_queued = 0; /* granted: sent now, its wait the queue's */
            x->llm_held = 1;
            x->llm_wait = g - x->llm_slot.enter;
            b->nllmq--;
            x->retry_at = b->clk.virtual_now;
        }
        if (x->waiting && !x->llm_queued && x->retry_at <= b->clk.virtual_now) {
            rc = resend(b, x, err, errlen);
            (void)tb_bench_loop_watch(b);
        }
    }
    return rc;
}
