/*
 * import_json.c - the JSON and line helpers the importers share
 * (import_json.h): typed fields, one JSON text or the next of several, and
 * non-blank lines.  Python's json module writes Infinity, -Infinity and NaN,
 * which cJSON rejects; py_tokens rewrites them before cJSON sees the text.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_json.h"
#include "base/jsonscan.h"
#include "base/jsontext.h"
#include "base/readall.h"
#include "ttsbuf/error.h"
#include "ttsbuf/utf8.h"

/*
 * Python's json module writes Infinity, -Infinity and NaN (allow_nan is
 * its default; SGLang writes "request_rate": Infinity at its default
 * rate).  cJSON rejects them, so a copy of the text gets each of them,
 * outside strings, replaced by null: Infinity and -Infinity padded with
 * spaces to their own length, NaN one byte longer.  at[] keeps where each
 * NaN's extra byte went, so an error offset maps back to the file's own.
 * Returns 0 with *out NULL when the text has none of them (parse it as it
 * is), 0 with the copy, or TB_ENOMEM.
 */
struct py_text {
    char *s;
    size_t len;
    size_t *at; /* offsets in s just after each NaN's "null" */
    size_t nat;
};

static int py_tokens(const char *buf, size_t len, struct py_text *out)
{
    static const struct {
        const char *tok;
        size_t n;
    } toks[] = {{"-Infinity", 9}, {"Infinity", 8}, {"NaN", 3}};
    size_t nnan = 0, i, o = 0;
    int in_str = 0, any = 0;
    memset(out, 0, sizeof(*out));
    for (i = 0; i < len; i++) { /* first pass: anything to do? */
        char c = buf[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == 'N' && i + 3 <= len && memcmp(buf + i, "NaN", 3) == 0) {
            nnan++;
            any = 1;
        } else if (c == 'I' && i + 8 <= len && memcmp(buf + i, "Infinity", 8) == 0) {
            any = 1;
        }
    }
    if (!any)
        return 0;
    out->s = malloc(len + nnan + 1);
    out->at = malloc((nnan ? nnan : 1) * sizeof(*out->at));
    if (out->s == NULL || out->at == NULL) {
        free(out->s);
        free(out->at);
        memset(out, 0, sizeof(*out));
        return TB_ENOMEM;
    }
    in_str = 0;
    for (i = 0; i < len;) {
        char c = buf[i];
        size_t k = 0;
        if (in_str) {
            out->s[o++] = buf[i++];
            if (c == '\\' && i < len)
                out->s[o++] = buf[i++];
            else if (c == '"')
                in_str = 0;
            continue;
        }
        if (c == '"')
            in_str = 1;
        for (k = 0; k < sizeof(toks) / sizeof(toks[0]); k++)
            if (i + toks[k].n <= len && memcmp(buf + i, toks[k].tok, toks[k].n) == 0)
                break;
        if (k == sizeof(toks) / sizeof(toks[0])) {
            out->s[o++] = buf[i++];
            continue;
        }
        memcpy(out->s + o, "null", 4);
        if (toks[k].n > 4)
            memset(out->s + o + 4, ' ', toks[k].n - 4);
        o += toks[k].n > 4 ? toks[k].n : 4;
        if (toks[k].n < 4)
            out->at[out->nat++] = o;
        i += toks[k].n;
    }
    out->s[o] = '\0';
    out->len = o;
    return 0;
}

/* An offset in the rewritten text, as an offset in the file. */
static size_t py_offset(const struct py_text *p, size_t off)
{
    size_t d = 0;
    while (d < p->nat && p->at[d] <= off)
        d++;
    return off - d;
}

cJSON *tb_import_parse(const char *buf, size_t len, char *err, size_t errlen)
{
    struct py_text py;
    const char *text = buf, *end = NULL;
    size_t tlen = len, e, cost = tb_jsonscan_cost(buf, len);
    cJSON *root;
    if (cost > TB_JSON_PIECE_MAX) {
        tb_seterr(err, errlen, TB_ETOOBIG,
                  "would take about %zu MiB to read, over the cap of " TB_JSON_PIECE_MAX_TEXT
                  " for one piece",
                  cost >> 20);
        return NULL;
    }
    if (py_tokens(buf, len, &py) != 0) {
        tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
        return NULL;
    }
    if (py.s != NULL) {
        text = py.s;
        tlen = py.len;
    }
    root = tb_jsontext_parse(text, tlen, &end); /* lone surrogate escapes: U+FFFD */
    e = end != NULL && end >= text ? (size_t)(end - text) : 0;
    if (root != NULL)
        while (e < tlen &&
               (text[e] == ' ' || text[e] == '\t' || text[e] == '\r' || text[e] == '\n'))
            e++;
    if (py.s != NULL)
        e = py_offset(&py, e);
    free(py.s);
    free(py.at);
    if (root != NULL && e != len) {
        cJSON_Delete(root);
        root = NULL;
    }
    if (root == NULL)
        tb_seterr(err, errlen, TB_EFORMAT, "invalid JSON near byte %zu", e + 1);
    return root;
}

/* A line's bytes are all blank. */
static int blank(const char *p, size_t n)
{
    size_t k = 0;
    while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
        k++;
    return k == n;
}

static int lines_of_stream(FILE *f, const char *name, char *err, size_t errlen,
                           int (*fn)(void *ud, const char *line, size_t n, size_t lineno), void *ud)
{
    struct tb_lines in;
    int rc = 0, got;
    tb_lines_init(&in, f, TB_IMPORT_LINE_MAX);
    while ((got = tb_lines_next(&in)) == 1)
        if (!blank(in.line, in.len) && (rc = fn(ud, in.line, in.len, in.lineno)) != 0)
            break;
    if (rc == 0 && got < 0)
        rc = tb_lines_fail(&in, got, name, TB_IMPORT_LINE_MAX, err, errlen);
    tb_lines_free(&in);
    return rc;
}

int tb_import_lines(const struct tb_import_in *in, const char *name, char *err, size_t errlen,
                    int (*fn)(void *ud, const char *line, size_t n, size_t lineno), void *ud)
{
    const char *buf = in->buf;
    size_t lineno = 0, i = 0, len = in->len;
    if (in->f != NULL)
        return lines_of_stream(in->f, name, err, errlen, fn, ud);
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t e = nl != NULL ? (size_t)(nl - buf) : len, n = e - i;
        int rc;
        lineno++;
        if (!blank(buf + i, n) && (rc = fn(ud, buf + i, n, lineno)) != 0)
            return rc;
        i = e + 1;
    }
    return 0;
}
