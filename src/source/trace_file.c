/*
 * trace_file.c - traces read from a file a line at a time: one trace
 * (tb_trace_load_file), each trace of a file of several in turn
 * (tb_trace_file_next), or the one of a given request
 * (tb_trace_load_request).  See trace.h.
 *
 * A file is read a line at a time, the line cap enforced as the bytes
 * arrive: memory holds the events loaded so far and one line, never the
 * file (a sparse file of gigabytes, /dev/zero, a pipe that never ends).
 * The reader's cap leaves room for a '\r' (and a byte order mark) past a
 * line of exactly TB_TRACE_LINE_MAX bytes; the loader checks the cap
 * itself.
 */
#include "ttsbuf/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/readall.h"
#include "ttsbuf/error.h"
#include "trace_priv.h"
#include "ttsbuf/utf8.h"

struct tb_trace_file {
    FILE *f;
    int is_stdin;
    char *name;
    struct tb_lines in;
    int pending; /* in.line holds the header of the next trace */
    int done;    /* the end of the file, or an error, was met */
    size_t count;
};

int tb_trace_file_open(const char *path, struct tb_trace_file **out, char *err, size_t errlen)
{
    struct tb_trace_file *tf = calloc(1, sizeof(*tf));
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    *out = NULL;
    if (tf == NULL || (tf->name = strdup(name)) == NULL) {
        free(tf);
        tb_seterr(err, errlen, TB_ENOMEM, "%s: out of memory", name);
        return TB_ENOMEM;
    }
    tf->is_stdin = strcmp(path, "-") == 0;
    tf->f = tf->is_stdin ? stdin : fopen(path, "rb");
    if (tf->f == NULL) {
        tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno));
        free(tf->name);
        free(tf);
        return TB_EIO;
    }
    tb_lines_init(&tf->in, tf->f, (size_t)TB_TRACE_LINE_MAX + 4);
    *out = tf;
    return 0;
}

void tb_trace_file_close(struct tb_trace_file *tf)
{
    if (tf == NULL)
        return;
    tb_lines_free(&tf->in);
    if (!tf->is_stdin)
        fclose(tf->f);
    free(tf->name);
    free(tf);
}

/* The current line into L (the first line may start with a byte order
 * mark). */
static int feed(struct tb_trace_file *tf, struct trace_loader *L)
{
    size_t skip = tf->in.lineno == 1 ? tb_utf8_bom_len(tf->in.line, tf->in.len) : 0;
    L->line = tf->in.lineno;
    return tb_trace_load_line(L, tf->in.line + skip, tf->in.len - skip);
}

int tb_trace_file_next(struct tb_trace_file *tf, struct tb_stream *out, char *err, size_t errlen)
{
    struct trace_loader L = {tf->name, 0, 0.0, 0, 0, 0, 0, 0, out, err, errlen};
    size_t n0 = out->n;
    int rc = 0, got = 1;
    if (tf->done)
        return 0;
    if (tf->pending) {
        tf->pending = 0;
        rc = feed(tf, &L); /* a header: the loader is new, so never NEXT */
    }
    while (rc == 0 && (got = tb_lines_next(&tf->in)) == 1)
        rc = feed(tf, &L);
    if (rc == TB_TRACE_NEXT) {
        tf->pending = 1;
        rc = 0;
    } else if (rc == 0 && got < 0) {
        rc = tb_lines_fail(&tf->in, got, tf->name, TB_TRACE_LINE_MAX, err, errlen);
    } else if (rc == 0 && L.lines_seen == 0 && tf->count > 0) {
        tf->done = 1; /* blank lines after the last trace */
        return 0;
    }
    if (rc != 0 || !tf->pending)
        tf->done = 1;
    if (rc != 0)
        return rc;
    tf->count++;
    rc = tb_trace_load_done(&L, n0);
    tb_stream_shrink(out);
    return rc != 0 ? rc : 1;
}

int tb_trace_file_more(const struct tb_trace_file *tf, char *err, size_t errlen)
{
    return tf->pending ? tb_trace_several(tf->name, tf->in.lineno, err, errlen) : 0;
}

int tb_trace_load_file(const char *path, struct tb_stream *out, char *err, size_t errlen)
{
    struct tb_trace_file *tf;
    int rc = tb_trace_file_open(path, &tf, err, errlen);
    if (rc != 0)
        return rc;
    rc = tb_trace_file_next(tf, out, err, errlen);
    if (rc == 1 || rc == TB_EEMPTY) {
        int more = tb_trace_file_more(tf, err, errlen);
        if (more != 0)
            rc = more;
    }
    tb_trace_file_close(tf);
    return rc == 1 ? 0 : rc;
}

/* What the file held, for the message of a request it does not hold. */
struct seen {
    size_t n, named;
    long long lo, hi;
};

static void saw(struct seen *s, long long request)
{
    s->n++;
    if (request < 0)
        return;
    s->lo = s->named == 0 || request < s->lo ? request : s->lo;
    s->hi = s->named == 0 || request > s->hi ? request : s->hi;
    s->named++;
}

static int not_there(const char *name, long long id, const struct seen *s, char *err,
                     size_t errlen)
{
    if (s->named == 0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "%s: no trace of request %lld (its %zu trace%s name%s no request)",
                         name, id, s->n, s->n == 1 ? "" : "s", s->n == 1 ? "s" : "");
    return tb_seterr(err, errlen, TB_EINVAL,
                     "%s: no trace of request %lld (it holds %zu, of requests %lld to %lld)", name,
                     id, s->n, s->lo, s->hi);
}

int tb_trace_load_request(const char *path, long long id, struct tb_stream *out, char *err,
                          size_t errlen)
{
    struct tb_trace_file *tf;
    struct seen s = {0, 0, 0, 0};
    int rc = tb_trace_file_open(path, &tf, err, errlen);
    if (rc != 0)
        return rc;
    for (;;) {
        rc = tb_trace_file_next(tf, out, err, errlen);
        if (rc != 1 && rc != TB_EEMPTY)
            break;
        if (out->request == id)
            break; /* 1, or TB_EEMPTY: the recording of a request that failed */
        saw(&s, out->request);
        tb_stream_clear(out);
    }
    if (rc == 0)
        rc = not_there(tf->name, id, &s, err, errlen);
    tb_trace_file_close(tf);
    return rc == 1 ? 0 : rc;
}
