/*
 * stream.c - the in-memory token stream (see stream.h).
 *
 * Arrays grow geometrically (x1.5), so appending a million events costs
 * about thirty reallocations.  They start small (64 events, 1 KiB of
 * text): a sweep holds many short streams, and a large first block per
 * stream cost more than the streams themselves.
 */
#include "ttsbuf/stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsmeas.h"

void tb_stream_init(struct tb_stream *s)
{
    memset(s, 0, sizeof(*s));
    s->usage_tokens = -1;
    s->request = -1;
    s->eou_s = NAN;
    s->tool_s = NAN;
    tb_stream_toolturn_init(&s->turn_tool);
    tb_stream_timing_init(&s->server);
    tb_stream_end_init(&s->end);
}

static const char *const end_names[TB_END__COUNT] = {
    "unknown",         "complete", "no_end_marker", "interrupted",
    "connection_lost", "error",    "timeout",       "cap"};

const char *tb_end_name(int kind)
{
    return kind >= 0 && kind < TB_END__COUNT ? end_names[kind] : "?";
}

int tb_end_parse(const char *name)
{
    for (int k = 0; k < TB_END__COUNT; k++)
        if (strcmp(name, end_names[k]) == 0)
            return k;
    return -1;
}

int tb_end_class(int kind)
{
    switch (kind) {
    case TB_END_COMPLETE:
    case TB_END_NO_MARKER: return TB_END_CLASS_COMPLETE;
    case TB_END_INTERRUPTED:
    case TB_END_LOST:
    case TB_END_TIMEOUT:
    case TB_END_CAP: return TB_END_CLASS_INCOMPLETE;
    case TB_END_ERROR: return TB_END_CLASS_FAILED;
    default: return TB_END_CLASS_UNKNOWN;
    }
}

void tb_stream_end_init(struct tb_stream_end *e)
{
    memset(e, 0, sizeof(*e));
    e->kind = TB_END_UNKNOWN;
    e->t = NAN;
}

void tb_stream_timing_init(struct tb_server_timing *t)
{
    t->total_ns = t->load_ns = t->prompt_eval_count = t->prompt_eval_ns = -1;
    t->eval_count = t->eval_ns = -1;
}

/* Every call's arguments text freed. */
static void tools_args_free(struct tb_stream *s)
{
    for (size_t i = 0; i < s->ntools; i++) {
        free(s->tools[i].args);
        s->tools[i].args = NULL;
    }
}

void tb_stream_toolturn_init(struct tb_stream_toolturn *t)
{
    t->calls = 0;
    t->filler = 0;
    t->start = t->end = t->wait = t->filler_at = t->filler_s = NAN;
}

void tb_stream_free(struct tb_stream *s)
{
    if (s == NULL)
        return;
    free(s->ev);
    free(s->text);
    tools_args_free(s);
    free(s->tools);
    free(s->rec);
    tb_tts_log_free(s->tts);
    free(s->tts);
    tb_stream_init(s);
}

int tb_stream_usage_credible(long long usage, uint64_t events)
{
    return usage >= 0 && (uint64_t)usage >= events / 8 + (events % 8 != 0);
}

void tb_stream_clear(struct tb_stream *s)
{
    s->n = 0;
    s->text_len = 0;
    tools_args_free(s);
    s->ntools = 0;
    free(s->rec);
    s->rec = NULL;
    s->usage_tokens = -1;
    s->request = -1;
    s->eou_s = NAN;
    s->tool_s = NAN;
    tb_stream_toolturn_init(&s->turn_tool);
    s->model[0] = '\0';
    s->base_url[0] = '\0';
    s->provider[0] = '\0';
    s->chunk_policy[0] = '\0';
    tb_stream_timing_init(&s->server);
    tb_stream_end_init(&s->end);
    tb_tts_log_free(s->tts);
    free(s->tts);
    s->tts = NULL;
}

void tb_stream_shrink(struct tb_stream *s)
{
    if (s->cap > s->n && s->n > 0) {
        struct tb_event *ev = realloc(s->ev, s->n * sizeof(*ev));
        if (ev != NULL) {
            s->ev = ev;
            s->cap = s->n;
        }
    }
    if (s->text_cap > s->text_len && s->text_len > 0) {
        char *t = realloc(s->text, (size_t)s->text_len);
        if (t != NULL) {
            s->text = t;
            s->text_cap = s->text_len;
        }
    }
}

char *tb_stream_content_text(const struct tb_stream *s)
{
    size_t len = 0, k = 0;
    char *a;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == TB_KIND_CONTENT)
            len += s->ev[i].len;
    a = malloc(len + 1);
    if (a == NULL)
        return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == TB_KIND_CONTENT) {
            memcpy(a + k, s->text + s->ev[i].off, s->ev[i].len);
            k += s->ev[i].len;
        }
    a[k] = '\0';
    return a;
}

int tb_stream_reserve(struct tb_stream *s, size_t nev, uint64_t ntext)
{
    if (nev > s->cap) {
        size_t cap = s->cap < 64 ? 64 : s->cap + s->cap / 2;
        struct tb_event *ev;
        if (cap < nev)
            cap = nev;
        ev = realloc(s->ev, cap * sizeof(*ev));
        if (ev == NULL)
            return TB_ENOMEM;
        s->ev = ev;
        s->cap = cap;
    }
    if (ntext > s->text_cap) {
        uint64_t cap = s->text_cap < 1024 ? 1024 : s->text_cap + s->text_cap / 2;
        char *t;
        if (cap < ntext)
            cap = ntext;
        if (cap > SIZE_MAX)
            return TB_ENOMEM;
        t = realloc(s->text, (size_t)cap);
        if (t == NULL)
            return TB_ENOMEM;
        s->text = t;
        s->text_cap = cap;
    }
    return 0;
}

int tb_stream_append(struct tb_stream *s, double t, const char *text, size_t len, uint32_t tokens,
                     enum tb_kind kind)
{
    struct tb_event *e;
    int rc;
    if (len == 0)
        return 0;
    if (!isfinite(t))
        return TB_ERANGE;
    if (len > TB_EVENT_TEXT_MAX || tokens == 0 || tokens > TB_EVENT_TOKENS_MAX ||
        s->n >= TB_STREAM_EVENTS_MAX)
        return TB_ETOOBIG;
    rc = tb_stream_reserve(s, s->n + 1, s->text_len + len);
    if (rc != 0)
        return rc;
    memcpy(s->text + s->text_len, text, len);
    e = &s->ev[s->n++];
    e->t = t;
    e->off = s->text_len;
    e->len = (uint32_t)len;
    e->tokens = tokens;
    e->kind = (uint8_t)kind;
    s->text_len += len;
    return 0;
}

int tb_stream_tool_add(struct tb_stream *s, const struct tb_tool_call *c)
{
    if (s->ntools >= TB_STREAM_TOOLS_MAX)
        return TB_ETOOBIG;
    if (s->ntools == s->tools_cap) {
        struct tb_tool_call *nt = tb_grow(s->tools, &s->tools_cap, sizeof(*nt), 4);
        if (nt == NULL)
            return TB_ENOMEM;
        s->tools = nt;
    }
    s->tools[s->ntools++] = *c;
    return 0;
}

int tb_stream_tool_args(struct tb_stream *s, size_t i, const char *bytes, size_t n)
{
    struct tb_tool_call *c = &s->tools[i];
    uint64_t had = c->args_bytes;
    char *na;
    c->args_bytes += n;
    if (n == 0 || c->args_over)
        return 0;
    if (c->args_bytes > TB_TOOL_ARGS_KEEP) {
        free(c->args);
        c->args = NULL;
        c->args_over = 1;
        return 0;
    }
    na = realloc(c->args, (size_t)c->args_bytes + 1);
    if (na == NULL) {
        free(c->args);
        c->args = NULL;
        c->args_over = 1;
        return TB_ENOMEM;
    }
    memcpy(na + had, bytes, n);
    na[c->args_bytes] = '\0';
    c->args = na;
    return 0;
}
