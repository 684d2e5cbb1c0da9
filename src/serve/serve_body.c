/*
 * serve_body.c - the mock server's non-streamed responses (see
 * serve_priv.h): the whole body, in the connection's dialect, sent when
 * its last token is due.
 */
#include <string.h>

#include "serve_body.h"
#include "serve_conn.h"
#include "serve_json.h"
#include "serve_plan.h"
#include "serve_priv.h"
#include "serve_reply.h"
#include "ttsbuf/clock.h"

/* Walks a copy of the plan to find when and how the response ends,
 * PASS_ITEMS items a call (yielding between, as advance does). */
int tb_serve_body_walk(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    struct tb_serve_item it;
    int more = 1;
    c->yielded = 0;
    for (size_t k = 0; k < PASS_ITEMS && (more = tb_serve_plan_next(&c->walk, &it)) != 0; k++) {
        if (it.due > c->body_due)
            c->body_due = it.due;
        c->body_malformed |= it.malformed;
        if (it.drop)
            c->ending = END_DROP;
        else if (it.error)
            c->ending = END_ERROR;
    }
    c->walking = more;
    c->yielded = more;
    if (tb_serve_heap_set(&s->heap, &c->hn, more ? tb_clock_mono_ns() : c->t0 + c->body_due) != 0)
        return tb_serve_conn_close(s, c, 1);
    return 0;
}

int tb_serve_body_start(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    c->walk = c->plan;
    c->body_due = 0;
    c->first_due = -1;
    c->ending = END_BODY;
    c->st = C_WAIT;
    return tb_serve_body_walk(s, c);
}

/* Sends a non-streamed body when it is due.  The texts are gathered
 * PASS_BYTES a call (a million reasoning deltas take many passes, and the
 * others get theirs in between); then the body is rendered and sent. */
int tb_serve_body_send(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    struct tb_serve_item it;
    int64_t first = c->first_due, last = c->last_due;
    char *json = NULL, extra[160];
    size_t made = 0;
    int rc, failed = 0;

    c->yielded = 0;
    c->lg.fault |= c->ending != END_BODY;
    if (c->ending == END_DROP)
        return tb_serve_conn_close(s, c, 0);
    if (c->ending == END_ERROR)
        return tb_serve_respond_error(
            s, c, 500, "The server had an error while processing your request. Sorry about that!",
            "server_error", NULL, NULL);
    if (c->content.p == NULL)
        failed |=
            tb_serve_sbuf_put(s, &c->content, "", 0) | tb_serve_sbuf_put(s, &c->reasoning, "", 0);
    while (!failed && made < PASS_BYTES && tb_serve_plan_next(&c->plan, &it)) {
        size_t n = tb_serve_plan_text(&c->plan, &it, &s->text, &s->text_cap);
        if (n == (size_t)-1) {
            failed = -1;
            break;
        }
        failed |= tb_serve_sbuf_put(s, it.kind == TB_KIND_REASONING ? &c->reasoning : &c->content,
                                    s->text, n);
        made += n;
        c->body_tokens += it.ntok;
        c->body_events++;
        if (first < 0)
            first = it.due;
        last = it.due;
    }
    c->first_due = first;
    c->last_due = last;
    if (failed > 0)
        return tb_serve_busy(s, c);
    if (failed != 0)
        return tb_serve_conn_close(s, c, 1);
    if (!c->plan.done && made >= PASS_BYTES) {
        c->yielded = 1;
        if (tb_serve_heap_set(&s->heap, &c->hn, tb_clock_mono_ns()) != 0)
            return tb_serve_conn_close(s, c, 1);
        return 0;
    }
    if (c->ctx.api == TB_API_ANTHROPIC) {
        json = tb_serve_json_anth_body(
            &c->ctx, c->content.p, c->reasoning.len > 0 ? c->reasoning.p : NULL,
            c->plan.cut ? "max_tokens" : "end_turn", c->rq.prompt_tokens, c->body_tokens);
    } else if (c->ctx.api == TB_API_OLLAMA) {
        struct tb_serve_ollama_end e = {
            c->plan.cut ? "length" : "stop", c->rq.prompt_tokens,   c->body_tokens,
            tb_clock_mono_ns() - c->t0,      first < 0 ? 0 : first, first < 0 ? 0 : last - first};
        json = tb_serve_json_ollama(&c->ctx, c->content.p,
                                    c->reasoning.len > 0 ? c->reasoning.p : NULL, &e);
    } else {
        json = tb_serve_json_body(
            &c->ctx, c->content.p, c->reasoning.len > 0 ? c->reasoning.p : NULL,
            c->plan.cut ? "length" : "stop", c->rq.prompt_tokens, c->body_tokens);
    }
    tb_serve_sbuf_free(s, &c->content);
    tb_serve_sbuf_free(s, &c->reasoning);
    if (json == NULL)
        return tb_serve_conn_close(s, c, 1);
    s->st.events += c->body_events;
    s->st.tokens += c->body_tokens;
    tb_serve_late_record(s, c, tb_clock_mono_ns() - (c->t0 + c->body_due));
    tb_serve_plan_head(c, "", extra, sizeof(extra));
    c->sent_tokens = c->body_tokens; /* the body carries them all */
    rc = tb_serve_respond(s, c, 200, "application/json", json,
                          c->body_malformed ? strlen(json) / 2 : strlen(json), extra);
    tb_serve_json_free(json);
    return rc;
}
