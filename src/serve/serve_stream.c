/*
 * serve_stream.c - a mock-server streamed response (see serve_priv.h):
 * the response head, then each item of the plan when it is due, in the
 * connection's dialect, then the stream's end.  Faults that end a stream
 * early (error@K, drop@K) end it here.
 */
#include <string.h>

#include "serve_chunk.h"
#include "serve_conn.h"
#include "serve_dialect.h"
#include "serve_frame.h"
#include "serve_http.h"
#include "serve_json.h"
#include "serve_oai.h"
#include "serve_plan.h"
#include "serve_priv.h"
#include "serve_reply.h"
#include "serve_stream.h"
#include "ttsbuf/clock.h"

/* Finish chunk, usage, [DONE], end of the chunked body. */
static void stream_end(struct tb_serve_conn *c)
{
    if (tb_serve_is_dialect(c)) {
        tb_serve_dialect_end(c);
        return;
    }
    tb_serve_oai_part(c, TB_SERVE_PART_FINISH, c->plan.cut ? "length" : "stop");
    if (c->rq.include_usage)
        tb_serve_oai_part(c, TB_SERVE_PART_USAGE, NULL);
    if (!c->f.nodone)
        tb_serve_sse_event(c, NULL, "[DONE]", 6);
    tb_serve_out_put(c, "0\r\n\r\n", 5);
}

/* Sends the items that are due, then waits for the next one.  A
 * connection makes at most PASS_BYTES of events per call: past that it
 * yields, due again at once but behind every connection already due, so
 * a client reading a flood at full speed gets its share of the loop and
 * no more (run_due). */
int tb_serve_advance(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    int64_t now = tb_clock_mono_ns();
    size_t made = 0;
    c->yielded = 0;
    for (;;) {
        struct tb_serve_item *it = &c->item;
        int64_t due;
        if (c->broken)
            return tb_serve_flush(s, c);
        if (!c->have_item) {
            if (!tb_serve_plan_next(&c->plan, it)) {
                stream_end(c);
                return tb_serve_finish(s, c);
            }
            c->have_item = 1;
        }
        due = c->t0 + it->due;
        if (due > now) {
            if (tb_serve_heap_set(&s->heap, &c->hn, due) != 0)
                return tb_serve_conn_close(s, c, 1);
            return tb_serve_flush(s, c);
        }
        c->have_item = 0;
        c->lg.fault |= it->drop || it->error;
        if (it->drop) {
            c->hard_close = 1;
            return tb_serve_finish(s, c);
        }
        if (it->error && tb_serve_is_dialect(c)) {
            const char *msg = "Internal server error (ttsbuf fault error@K)";
            tb_serve_dialect_json(c, "error",
                                  c->ctx.api == TB_API_ANTHROPIC
                                      ? tb_serve_json_anth_error("api_error", msg)
                                      : tb_serve_json_ollama_error(msg),
                                  0);
            tb_serve_out_put(c, "0\r\n\r\n", 5);
            return tb_serve_finish(s, c);
        }
        if (it->error) {
            char *json = tb_serve_json_error(
                "The server had an error while processing your request. Sorry about that!",
                "server_error", NULL);
            if (json == NULL)
                return tb_serve_conn_close(s, c, 1);
            tb_serve_sse_event(c, NULL, json, strlen(json));
            tb_serve_json_free(json);
            tb_serve_out_put(c, "0\r\n\r\n", 5);
            return tb_serve_finish(s, c);
        }
        {
            size_t before = c->out_len;
            if (tb_serve_is_dialect(c))
                tb_serve_dialect_item(s, c, it, now - due);
            else
                tb_serve_oai_item(s, c, it, now - due);
            made += c->out_len >= before ? c->out_len - before : c->out_len;
        }
        int rc = tb_serve_piece_made(s, c, made);
        if (rc != 1)
            return rc;
    }
}

void tb_serve_stream_head(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    char head[512], extra[192];
    size_t hl;
    tb_serve_plan_head(c, "Cache-Control: no-cache\r\n", extra, sizeof(extra));
    hl = tb_serve_http_resp(
        head, sizeof(head), 200,
        c->ctx.api == TB_API_OLLAMA ? "application/x-ndjson" : "text/event-stream", -1, extra);
    tb_serve_out_put(c, head, hl);
    c->lg.status = 200;
    c->lg.stream = 1;
    s->st.requests++;
    s->st.streams++;
}

int tb_serve_stream_start(struct tb_serve_loop *s, struct tb_serve_conn *c)
{
    tb_serve_stream_head(s, c);
    if (!tb_serve_is_dialect(c) && tb_serve_chunk_init(&c->chunk, &c->ctx) != 0)
        return tb_serve_conn_close(s, c, 1);
    c->st = C_STREAM;
    c->block = -1;
    c->first_due = -1;
    if (c->ctx.api == TB_API_CHAT)
        tb_serve_oai_part(c, TB_SERVE_PART_ROLE, "");
    if (c->ctx.api == TB_API_ANTHROPIC) {
        tb_serve_anth_event(c, TB_SERVE_ANTH_START, NULL, 0);
        tb_serve_anth_event(c, TB_SERVE_ANTH_PING, NULL, 0);
    }
    return tb_serve_advance(s, c);
}
