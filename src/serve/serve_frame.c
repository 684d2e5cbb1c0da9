/*
 * serve_frame.c - the mock server's framing (see serve_priv.h): HTTP
 * chunks, each carrying one SSE event or one NDJSON line, written in
 * place into a connection's output buffer.  The crlf and comments faults
 * change the framing here.
 */
#include <string.h>

#include "serve_frame.h"
#include "serve_priv.h"

/* The chunk-size line of an HTTP chunk of `body` bytes, with room made for
 * them (plus `extra`, plus the chunk's closing CRLF).  0, or -1 when the
 * output step failed. */
static int chunk_open(struct tb_serve_conn *c, size_t body, size_t extra)
{
    char hex[2 * sizeof(size_t) + 2];
    size_t hl = sizeof(hex);
    hex[--hl] = '\n';
    hex[--hl] = '\r';
    for (size_t v = body;; v >>= 4) { /* the chunk size in lower-case hex */
        hex[--hl] = "0123456789abcdef"[v & 15];
        if (v < 16)
            break;
    }
    if (tb_serve_out_room(c, sizeof(hex) - hl + body + extra + 2) != 0)
        return -1;
    tb_serve_out_add(c, hex + hl, sizeof(hex) - hl);
    return 0;
}

/*
 * One SSE event (comment line, optional event: line, data line, blank
 * line) in one HTTP chunk,
 * framed in place: sse_open writes the chunk size line and everything
 * before the data, and returns where len data bytes go (with room for
 * `room` >= len of them, so a malformed@K event can be made whole and then
 * cut); the caller writes them, and sse_close ends the event.  NULL when
 * the output step failed (c is broken then).
 */
char *tb_serve_sse_open(struct tb_serve_conn *c, const char *type, size_t len, size_t room)
{
    const char *eol = c->f.crlf ? "\r\n" : "\n";
    size_t el = c->f.crlf ? 2 : 1, tl = type != NULL ? strlen(type) : 0;
    size_t body =
        (c->f.comments ? 12 + el : 0) + (type != NULL ? 7 + tl + el : 0) + 6 + len + 2 * el;
    char *data;

    if (chunk_open(c, body, room - len) != 0)
        return NULL;
    if (c->f.comments) {
        tb_serve_out_add(c, ": keep-alive", 12);
        tb_serve_out_add(c, eol, el);
    }
    if (type != NULL) {
        tb_serve_out_add(c, "event: ", 7);
        tb_serve_out_add(c, type, tl);
        tb_serve_out_add(c, eol, el);
    }
    tb_serve_out_add(c, "data: ", 6);
    data = c->out + c->out_len;
    c->out_len += len;
    return data;
}

void tb_serve_sse_close(struct tb_serve_conn *c)
{
    if (c->f.crlf)
        tb_serve_out_add(c, "\r\n\r\n\r\n", 6);
    else
        tb_serve_out_add(c, "\n\n\r\n", 4);
}

void tb_serve_sse_event(struct tb_serve_conn *c, const char *type, const char *data, size_t len)
{
    char *p = tb_serve_sse_open(c, type, len, len);
    if (p == NULL)
        return;
    memcpy(p, data, len);
    tb_serve_sse_close(c);
}

/* One NDJSON line (Ollama) in one HTTP chunk: data[0..len), then the line
 * end (CRLF with the crlf fault). */
void tb_serve_ndjson_line(struct tb_serve_conn *c, const char *data, size_t len)
{
    size_t el = c->f.crlf ? 2 : 1;
    if (chunk_open(c, len + el, 0) != 0)
        return;
    tb_serve_out_add(c, data, len);
    tb_serve_out_add(c, c->f.crlf ? "\r\n\r\n" : "\n\r\n", el + 2);
}
