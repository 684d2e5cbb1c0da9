/*
 * serve_oai.c - the mock server's OpenAI stream events (see serve_priv.h):
 * chat.completion.chunk and text_completion objects as SSE events.
 */
#include <string.h>

#include "serve_chunk.h"
#include "serve_frame.h"
#include "serve_json.h"
#include "serve_oai.h"
#include "serve_priv.h"

void tb_serve_oai_part(struct tb_serve_conn *c, enum tb_serve_json_part part, const char *text)
{
    char *json = tb_serve_json_chunk(&c->ctx, part, text, c->rq.prompt_tokens, c->sent_tokens);
    if (json == NULL) {
        c->broken = 1;
        return;
    }
    tb_serve_sse_event(c, NULL, json, strlen(json));
    tb_serve_json_free(json);
}

/* A token event: its chunk is rendered straight into the output buffer
 * (serve_chunk.c), with no allocation or copy on the way. */
void tb_serve_oai_item(struct tb_serve_loop *s, struct tb_serve_conn *c,
                       const struct tb_serve_item *it, int64_t late)
{
    size_t len = tb_serve_chunk_len(&c->chunk, &c->plan, it);
    size_t cut = it->malformed ? len / 2 : len; /* malformed@K: cut mid-object */
    char *p = tb_serve_sse_open(c, NULL, cut, len);
    if (p == NULL)
        return;
    tb_serve_chunk_write(&c->chunk, &c->plan, it, p);
    tb_serve_sse_close(c);
    c->sent_tokens += it->ntok;
    s->st.events++;
    s->st.tokens += it->ntok;
    tb_serve_late_record(s, c, late);
}
