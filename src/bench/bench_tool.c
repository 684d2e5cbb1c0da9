/*
 * bench_tool.c - a call's tool turn (see bench_tool.h and bench_calls.h,
 * Tool calls).
 */
#include "bench_tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_filler.h"
#include "ttsbuf/bench_calls.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttslat.h"
#include "ttsbuf/ttsmeas.h"

/* The tool's wait for call id's turn (bench_calls.h). */
static double tool_wait(const struct tb_bench_opts *o, uint64_t id, uint32_t turn)
{
    struct tb_ttslat_seeded v;
    if (o->tool_latency == NULL)
        return 0;
    tb_ttslat_seeded_init(&v, o->tool_latency, tb_ttslat_draw_seed(o->seed, id));
    return tb_ttslat_seeded_at(&v, turn + 1);
}

/* The call's first tool call's arguments kept for the exchange (a
 * copy), and whether they are a JSON object the other dialects can
 * carry.  0 or TB_ENOMEM. */
static int keep_args(struct call *c, const struct tb_tool_call *t)
{
    cJSON *j;
    tb_bench_tool_forget(c);
    if (t->args_over) {
        c->tool_args_bad = 1; /* too long to keep: {} is sent */
        return 0;
    }
    if (t->args == NULL)
        return 0; /* none came: {} is sent */
    j = cJSON_ParseWithLength(t->args, (size_t)t->args_bytes);
    c->tool_args_bad = !cJSON_IsObject(j);
    cJSON_Delete(j);
    c->tool_args = strdup(t->args);
    return c->tool_args != NULL ? 0 : TB_ENOMEM;
}

void tb_bench_tool_forget(struct call *c)
{
    free(c->tool_args);
    c->tool_args = NULL;
    c->tool_args_bad = 0;
}

int tb_bench_tool_taken(struct bench *b, struct xf *x)
{
    const struct tb_stream *s = &x->stream;
    struct call *c;
    double end = 0, wait;
    if (!b->calling || b->call_wait == NULL || x->warm || x->call < 0 || x->rd.error != 0 ||
        x->barged || s->ntools == 0 || x->slot >= b->calls.n ||
        tb_end_class(s->end.kind) != TB_END_CLASS_COMPLETE)
        return 0; /* a stream cut short is a cut turn: its call ends */
    c = &b->calls.v[x->slot];
    if (c->tool != 0)
        return 0; /* the second request called again: not answered */
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == TB_KIND_CONTENT)
            return 0; /* it spoke: spoken as any other */
    for (size_t i = 0; i < s->ntools; i++)
        end = fmax(end, isnan(s->tools[i].t_end) ? s->tools[i].t_start : s->tools[i].t_end);
    c->tool = 1;
    c->tool_calls = (uint32_t)s->ntools;
    c->tool_t0 = x->t_start;
    c->tool_start = s->tools[0].t_start;
    c->tool_end = end;
    snprintf(c->tool_id, sizeof(c->tool_id), "%s", s->tools[0].id);
    snprintf(c->tool_name, sizeof(c->tool_name), "%s", s->tools[0].name);
    if (keep_args(c, &s->tools[0]) != 0 && b->calls.rc == 0)
        b->calls.rc = tb_seterr(b->calls.err, sizeof(b->calls.err), TB_ENOMEM, "out of memory");
    /* The tool runs once the stream has ended (its call is whole then). */
    wait = tool_wait(b->o, c->id, c->turn);
    if (b->call_wait(b, x->slot, b->clk.virtual_now + wait) != 0 && b->calls.rc == 0)
        b->calls.rc = tb_seterr(b->calls.err, sizeof(b->calls.err), TB_ENOMEM, "out of memory");
    return 1;
}

int tb_bench_tool_exchange(cJSON *msgs, const struct call *c)
{
    cJSON *a = cJSON_CreateObject(), *t = cJSON_CreateObject(), *calls, *tc, *fn;
    int ok = a != NULL && t != NULL && cJSON_AddItemToArray(msgs, a);
    if (!ok) {
        cJSON_Delete(a);
        cJSON_Delete(t);
        return -1;
    }
    ok = cJSON_AddItemToArray(msgs, t);
    if (!ok)
        cJSON_Delete(t);
    ok = ok && cJSON_AddStringToObject(a, "role", "assistant") != NULL &&
         cJSON_AddNullToObject(a, "content") != NULL &&
         (calls = cJSON_AddArrayToObject(a, "tool_calls")) != NULL &&
         (tc = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(calls, tc) &&
         cJSON_AddStringToObject(tc, "id", c->tool_id) != NULL &&
         cJSON_AddStringToObject(tc, "type", "function") != NULL &&
         (fn = cJSON_AddObjectToObject(tc, "function")) != NULL &&
         cJSON_AddStringToObject(fn, "name", c->tool_name) != NULL &&
         cJSON_AddStringToObject(fn, "arguments", c->tool_args != NULL ? c->tool_args : "{}") !=
             NULL &&
         cJSON_AddStringToObject(t, "role", "tool") != NULL &&
         cJSON_AddStringToObject(t, "tool_call_id", c->tool_id) != NULL &&
         cJSON_AddStringToObject(t, "content", TB_TOOL_RESULT) != NULL;
    return ok ? 0 : -1;
}

/* A real TTS's filler that failed (not one stopped as the record was
 * made: "canceled") says so in the record's warning, when it has none:
 * its figures count only the audio that came. */
static void filler_failed(struct tb_bench_rec *rec)
{
    const struct tb_tts_chunk *k =
        rec->filler_log != NULL && rec->filler_log->n > 0 ? &rec->filler_log->c[0] : NULL;
    if (k == NULL || k->fail == TB_TTS_OK || k->fail == TB_TTS_CANCELED || rec->warning[0] != '\0')
        return;
    (void)tb_bench_rec_warning(
        rec, "the filler's TTS request failed (%s%s%.80s): only the audio that came counts",
        tb_tts_fail_name(k->fail), k->message[0] ? ": " : "", k->message);
}

void tb_bench_tool_rec(struct bench *b, const struct call *c, struct tb_bench_rec *rec)
{
    const struct tb_playout_opts *p = &b->o->sim.play;
    const char *f = b->o->filler;
    tb_bench_rec_tool_clear(rec);
    if (c->tool != 2)
        return;
    rec->tool_calls = c->tool_calls;
    rec->tool_start = c->tool_start;
    rec->tool_end = c->tool_end;
    rec->tool_head = rec->t_start - c->tool_t0;
    rec->tool_s = rec->tool_head - c->tool_end;
    rec->tool_args_bad = c->tool_args_bad;
    if (c->tool_args_bad && rec->warning[0] == '\0') {
        /* counted as a warning (out of memory: the warning is "") */
        if (c->tool_args == NULL)
            (void)tb_bench_rec_warning(rec,
                                       "the model's tool call arguments were over %u bytes: "
                                       "sent back as {}",
                                       TB_TOOL_ARGS_KEEP);
        else
            (void)tb_bench_rec_warning(rec, "the model's tool call arguments are not a JSON "
                                            "object: sent back as received in OpenAI's shape, as "
                                            "{} in Anthropic's and Ollama's");
    }
    if (f == NULL)
        return;
    rec->filler = 1;
    if (b->o->tts != NULL) {
        /* Said by the real TTS (bench_filler.h): its log, which
         * tb_bench_rec_tool_lat plays; none when no client was made. */
        rec->filler_log = tb_bench_filler_take(b, (uint32_t)(c - b->calls.v), c->id);
        tb_bench_rec_filler_log(rec);
        filler_failed(rec);
        return;
    }
    tb_bench_rec_filler_model(rec, f, p); /* the modelled TTS */
}
