/*
 * chunks.c - `sim --chunks` (see chunks.h).
 */
#include "chunks.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"
#include "ttsbuf/seg.h"

struct collect {
    struct tb_cli_chunks *c;
    size_t cap;
    uint64_t from;
    int oom;
};

static void on_chunk(void *ud, const struct tb_chunk *ch)
{
    struct collect *x = ud;
    struct tb_cli_chunks *c = x->c;
    if (x->oom)
        return;
    if (c->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        struct tb_cli_chunk *v = realloc(c->v, cap * sizeof(*v));
        if (v == NULL) {
            x->oom = 1;
            return;
        }
        c->v = v;
        x->cap = cap;
    }
    c->v[c->n].from = x->from;
    c->v[c->n].to = ch->end;
    c->v[c->n].event = ch->event;
    c->n++;
    x->from = ch->end;
}

int tb_cli_chunks_build(const struct tb_stream *s, const struct tb_seg_opts *opts,
                        const struct tb_gap_list *plays, int stage, struct tb_cli_chunks *out)
{
    struct collect x = {out, 0, 0, 0};
    struct tb_seg *seg = NULL;
    uint64_t len = 0;
    int rc;
    memset(out, 0, sizeof(*out));
    out->plays = plays;
    out->stage = stage;
    for (size_t k = 0; k < s->n; k++)
        if (s->ev[k].kind == TB_KIND_CONTENT)
            len += s->ev[k].len;
    out->text = malloc(len + 1);
    if (out->text == NULL)
        return TB_ENOMEM;
    rc = tb_seg_create(opts, &seg);
    if (rc != 0)
        return rc;
    len = 0;
    for (size_t k = 0; k < s->n; k++) {
        const struct tb_event *e = &s->ev[k];
        if (e->kind != TB_KIND_CONTENT)
            continue;
        memcpy(out->text + len, s->text + e->off, e->len);
        len += e->len;
        tb_seg_feed_at(seg, e->t, s->text + e->off, e->len, on_chunk, &x);
    }
    tb_seg_finish(seg, on_chunk, &x);
    tb_seg_destroy(seg);
    out->text[len] = '\0';
    if (x.oom)
        return TB_ENOMEM;
    out->mismatch = plays->n != out->n;
    for (size_t i = 0; !out->mismatch && i < plays->n; i++)
        out->mismatch = plays->v[i].chunk != i + 1;
    return 0;
}

void tb_cli_chunks_free(struct tb_cli_chunks *c)
{
    free(c->text);
    free(c->v);
    memset(c, 0, sizeof(*c));
}

/* The text between quotes, with \n, \t, \" and \\ escaped. */
static void print_text(FILE *f, const char *t, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (ch == '\n')
            fputs("\\n", f);
        else if (ch == '\t')
            fputs("\\t", f);
        else if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void tb_cli_chunks_print(FILE *f, const struct tb_cli_chunks *c)
{
    if (c->stage)
        fprintf(f, "\n  chunks (event: the content event, from 0, whose arrival released it; "
                   "sent: its text to the TTS, ready: its first audio, done: all of it):\n"
                   "      #   event       sent      ready       done      start   duration  text\n");
    else
        fprintf(f, "\n  chunks (event: the content event, from 0, whose arrival released it):\n"
                   "      #   event      ready      start   duration  text\n");
    if (c->mismatch)
        fprintf(f, "  note: the ring forced cuts, so the schedule is not shown per chunk\n");
    for (size_t i = 0; i < c->n; i++) {
        const struct tb_cli_chunk *k = &c->v[i];
        fprintf(f, "  %5zu  %6" PRIu32, i + 1, k->event);
        if (c->mismatch) {
            fprintf(f, "  %9s  %9s  %9s  ", "-", "-", "-");
            if (c->stage)
                fprintf(f, "%9s  %9s  ", "-", "-");
        } else if (c->stage) {
            const struct tb_play *p = &c->plays->v[i];
            fprintf(f, "  %7.3f s  %7.3f s  %7.3f s  %7.3f s  %7.3f s  ", p->begin, p->ready,
                    p->done, p->start, p->end - p->start);
        } else {
            const struct tb_play *p = &c->plays->v[i];
            fprintf(f, "  %7.3f s  %7.3f s  %7.3f s  ", p->ready, p->start, p->end - p->start);
        }
        print_text(f, c->text + k->from, (size_t)(k->to - k->from));
        fputc('\n', f);
    }
}

/* A time written so that it reads back as exactly v (a replayed
 * recording's times are the trace's own), or null when the ring forced
 * cuts. */
static int add_time(cJSON *o, const char *key, const struct tb_cli_chunks *c, double v)
{
    cJSON *n = c->mismatch ? cJSON_CreateNull() : tb_json_num(v);
    if (n == NULL || !cJSON_AddItemToObject(o, key, n)) {
        cJSON_Delete(n);
        return TB_ENOMEM;
    }
    return 0;
}

int tb_cli_chunks_json(void *root, const struct tb_cli_chunks *c)
{
    cJSON *a = cJSON_CreateArray();
    /* Beside the report's chunk count ("chunks"): one name, one shape. */
    if (a == NULL)
        return TB_ENOMEM;
    cJSON_AddItemToObject(root, "chunk_list", a);
    for (size_t i = 0; i < c->n; i++) {
        const struct tb_cli_chunk *k = &c->v[i];
        const struct tb_play *p = c->mismatch ? NULL : &c->plays->v[i];
        cJSON *o = cJSON_CreateObject();
        char *t;
        int rc = 0;
        if (o == NULL)
            return TB_ENOMEM;
        cJSON_AddItemToArray(a, o);
        t = malloc((size_t)(k->to - k->from) + 1);
        if (t == NULL)
            return TB_ENOMEM;
        memcpy(t, c->text + k->from, (size_t)(k->to - k->from));
        t[k->to - k->from] = '\0';
        if (cJSON_AddStringToObject(o, "text", t) == NULL ||
            cJSON_AddNumberToObject(o, "event", k->event) == NULL)
            rc = TB_ENOMEM;
        free(t);
        if (rc == 0 && c->stage)
            rc = add_time(o, "sent_s", c, p ? p->begin : 0.0);
        if (rc == 0)
            rc = add_time(o, "ready_s", c, p ? p->ready : 0.0);
        if (rc == 0 && c->stage)
            rc = add_time(o, "done_s", c, p ? p->done : 0.0);
        if (rc == 0)
            rc = add_time(o, "start_s", c, p ? p->start : 0.0);
        if (rc == 0)
            rc = add_time(o, "duration_s", c, p ? p->end - p->start : 0.0);
        if (rc != 0)
            return rc;
    }
    return 0;
}
