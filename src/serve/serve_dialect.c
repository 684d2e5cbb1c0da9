/*
 * serve_dialect.c - the mock server's Anthropic and Ollama streams (see
 * serve_priv.h): Anthropic's typed SSE events (message_start, content
 * blocks, message_delta, message_stop) and Ollama's NDJSON lines.
 */
#include <string.h>

#include "serve_dialect.h"
#include "serve_frame.h"
#include "serve_json.h"
#include "serve_plan.h"
#include "serve_priv.h"
#include "ttsbuf/clock.h"

/* A rendered piece (freed here) as an Anthropic event or an Ollama line;
 * malformed: cut mid-object (malformed@K). */
void tb_serve_dialect_json(struct tb_serve_conn *c, const char *type, char *json, int malformed)
{
    size_t len;
    if (json == NULL) {
        c->broken = 1;
        return;
    }
    len = strlen(json);
    if (malformed)
        len /= 2;
    if (c->ctx.api == TB_API_OLLAMA)
        tb_serve_ndjson_line(c, json, len);
    else
        tb_serve_sse_event(c, type, json, len);
    tb_serve_json_free(json);
}

void tb_serve_anth_event(struct tb_serve_conn *c, enum tb_serve_anth ev, const char *text,
                         int malformed)
{
    tb_serve_dialect_json(c, tb_serve_json_anth_name(ev),
                          tb_serve_json_anth(&c->ctx, ev, c->block, c->block_reasoning, text,
                                             c->rq.prompt_tokens, c->sent_tokens),
                          malformed);
}

/* A token item: an Anthropic content_block_delta (opening a thinking or
 * text block when the kind changes), or an Ollama line. */
void tb_serve_dialect_item(struct tb_serve_loop *s, struct tb_serve_conn *c,
                           const struct tb_serve_item *it, int64_t late)
{
    int reasoning = it->kind == TB_KIND_REASONING;
    size_t n = tb_serve_plan_text(&c->plan, it, &s->text, &s->text_cap);
    if (n == (size_t)-1) {
        c->broken = 1;
        return;
    }
    if (c->ctx.api == TB_API_ANTHROPIC) {
        if (c->block < 0 || c->block_reasoning != reasoning) {
            if (c->block >= 0)
                tb_serve_anth_event(c, TB_SERVE_ANTH_BLOCK_STOP, NULL, 0);
            c->block++;
            c->block_reasoning = reasoning;
            tb_serve_anth_event(c, TB_SERVE_ANTH_BLOCK_START, NULL, 0);
        }
        tb_serve_anth_event(c, TB_SERVE_ANTH_DELTA, s->text, it->malformed);
    } else {
        tb_serve_dialect_json(c, NULL,
                              tb_serve_json_ollama(&c->ctx, reasoning ? "" : s->text,
                                                   reasoning ? s->text : NULL, NULL),
                              it->malformed);
    }
    if (c->first_due < 0)
        c->first_due = it->due;
    c->last_due = it->due;
    c->sent_tokens += it->ntok;
    s->st.events++;
    s->st.tokens += it->ntok;
    tb_serve_late_record(s, c, late);
}

/* Anthropic: close the block, message_delta, message_stop; Ollama: the
 * final line with the server's durations.  Then the chunked body's end. */
void tb_serve_dialect_end(struct tb_serve_conn *c)
{
    if (c->ctx.api == TB_API_ANTHROPIC) {
        if (c->block >= 0)
            tb_serve_anth_event(c, TB_SERVE_ANTH_BLOCK_STOP, NULL, 0);
        tb_serve_anth_event(c, TB_SERVE_ANTH_MSG_DELTA, c->plan.cut ? "max_tokens" : "end_turn", 0);
        if (!c->f.nodone)
            tb_serve_anth_event(c, TB_SERVE_ANTH_STOP, NULL, 0);
    } else if (!c->f.nodone) {
        int64_t first = c->first_due < 0 ? 0 : c->first_due;
        struct tb_serve_ollama_end e = {c->plan.cut ? "length" : "stop",
                                        c->rq.prompt_tokens,
                                        c->sent_tokens,
                                        tb_clock_mono_ns() - c->t0,
                                        first,
                                        c->first_due < 0 ? 0 : c->last_due - first};
        tb_serve_dialect_json(c, NULL, tb_serve_json_ollama(&c->ctx, "", NULL, &e), 0);
    }
    tb_serve_out_put(c, "0\r\n\r\n", 5);
}
