/*
 * sse.c - the text/event-stream parser (see sse.h for the rules).
 *
 * Scanning: each feed is cut into lines with memchr, looking for '\n' and
 * '\r' separately.  The position of the next '\n' and of the next '\r' is
 * remembered until the scan passes it, so a stream that uses only one
 * kind of line ending is not rescanned for the other kind on every line:
 * each byte is looked at a bounded number of times whatever the endings.
 *
 * Copies: a line wholly inside one feed is interpreted where it lies in
 * the caller's buffer; only the tail of a feed (a line still open when
 * the feed ends) is copied into `line`, and the next feed appends to it.
 * Data values are copied once, into `data`.  Buffers grow geometrically
 * up to their caps and are kept across events and resets, so a parser
 * that has seen its largest event allocates nothing more.
 *
 * Caps: a line may hold line_max bytes (terminator not counted) and an
 * event's data event_max bytes.  Both are checked on every piece of a
 * line as it arrives, not only when the line ends, so a 100 MB line with
 * no newline fails once its first line_max + 1 bytes are seen and never
 * costs more than line_max bytes of memory.  When one line breaks both
 * caps, the error names whichever cap ran out at the earlier stream
 * byte; that makes the error the same however the bytes were split.
 *
 * Split invariance is the design rule throughout: the events, their
 * offsets, the counters and any error depend only on the bytes, never on
 * where the feeds were cut.  That is why an event ended by CR LF is
 * dispatched at the CR (waiting for a possible LF would delay it until
 * the next read, and its offset would then depend on the split).
 */
#include "ttsbuf/sse.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ttsbuf/error.h"

/* Caps above this are lowered to it, so that cap + 1 and offset + cap
 * cannot overflow; no machine could fill such a buffer anyway. */
#define CAP_CEILING ((size_t)-1 / 4)

enum { BAD_NONE, BAD_LINE, BAD_DATA };

struct tb_sse {
    size_t line_max, event_max;
    uint64_t off;        /* bytes consumed so far */
    uint64_t comments;   /* comment lines so far */
    uint64_t line_start; /* stream offset of the open line's first byte */
    char *line;          /* the open line, when it spans feeds */
    size_t line_len, line_cap;
    char *data; /* data buffer: each data value plus "\n" */
    size_t data_len, data_cap;
    char *type; /* event type buffer ("" means "message") */
    size_t type_len, type_cap;
    char *id; /* last event ID buffer */
    size_t id_len, id_cap;
    long retry;   /* last valid retry: value, or -1 */
    int cr;       /* the last line ended in CR: an LF next belongs to it */
    int at_start; /* no byte seen yet other than a byte order mark prefix */
    int nbom;     /* byte order mark bytes matched so far at the start */
    int fail;     /* sticky TB_E* code once a feed failed */
    char failmsg[96];
};

static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};

int tb_sse_create(size_t line_max, size_t event_max, struct tb_sse **out)
{
    struct tb_sse *p = calloc(1, sizeof(*p));
    *out = NULL;
    if (p == NULL)
        return TB_ENOMEM;
    p->line_max = line_max != 0 ? line_max : TB_SSE_LINE_MAX;
    p->event_max = event_max != 0 ? event_max : TB_SSE_EVENT_MAX;
    if (p->line_max > CAP_CEILING)
        p->line_max = CAP_CEILING;
    if (p->event_max > CAP_CEILING)
        p->event_max = CAP_CEILING;
    tb_sse_reset(p);
    *out = p;
    return 0;
}

void tb_sse_destroy(struct tb_sse *p)
{
    if (p == NULL)
        return;
    free(p->id);
    free(p->type);
    free(p->data);
    free(p->line);
    free(p);
}

void tb_sse_reset(struct tb_sse *p)
{
    /* The limits and the buffers stay; everything read starts again. */
    *p = (struct tb_sse){.line_max = p->line_max,
                         .event_max = p->event_max,
                         .line = p->line,
                         .line_cap = p->line_cap,
                         .data = p->data,
                         .data_cap = p->data_cap,
                         .type = p->type,
                         .type_cap = p->type_cap,
                         .id = p->id,
                         .id_cap = p->id_cap,
                         .retry = -1,
                         .at_start = 1};
}

size_t tb_sse_pending(const struct tb_sse *p)
{
    /* A partial byte order mark is an unfinished line too: it may turn
     * out to be the start of a line that happens to begin with EF. */
    return p->line_len + p->data_len + (p->at_start ? (size_t)p->nbom : 0);
}

uint64_t tb_sse_offset(const struct tb_sse *p)
{
    return p->off;
}

uint64_t tb_sse_comments(const struct tb_sse *p)
{
    return p->comments;
}

/* Makes the failure sticky: every later feed returns it until a reset. */
static int fail(struct tb_sse *p, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(struct tb_sse *p, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->failmsg, sizeof(p->failmsg), fmt, ap);
    va_end(ap);
    p->fail = code;
    return code;
}

/*
 * Grows *buf to hold need bytes: doubling, but never past limit, so that
 * memory stays within the caps (the callers guarantee need <= limit).
 */
static int reserve(struct tb_sse *p, char **buf, size_t *cap, size_t need, size_t limit)
{
    size_t nc;
    char *nb;
    if (need <= *cap)
        return 0;
    nc = *cap >= 64 ? *cap : 64;
    while (nc < need)
        nc *= 2; /* need <= CAP_CEILING + 1: no overflow */
    if (nc > limit)
        nc = limit;
    nb = realloc(*buf, nc);
    if (nb == NULL)
        return fail(p, TB_ENOMEM, "out of memory");
    *buf = nb;
    *cap = nc;
    return 0;
}

/*
 * Checks both caps against a line of n bytes so far (complete or not)
 * starting at stream offset start, of which the first head_len bytes are
 * at head (head_len is n, or line_max when more arrived).
 *
 * A data line takes the event over event_max when the data buffer (each
 * earlier value plus its "\n") plus this value exceeds it; the offending
 * byte is value byte event_max - data_len.  When the earlier data already
 * fills the cap exactly, the "\n" joining this value is what overflows, and
 * it is charged to where the value starts.  The value's start is only
 * known once the byte after the colon has arrived (it may be the one space
 * that is removed), so a partial "data:" is checked when that byte comes.
 */
static int check_caps(struct tb_sse *p, const char *head, size_t head_len, size_t n, uint64_t start,
                      int complete)
{
    uint64_t at = UINT64_MAX;
    int what = BAD_NONE;
    size_t vstart = 0;
    int known = 0;

    if (n > p->line_max) {
        at = start + p->line_max;
        what = BAD_LINE;
    }
    if (head_len >= 4 && memcmp(head, "data", 4) == 0) {
        if (n == 4) {
            known = complete; /* "data" alone: an empty value */
            vstart = 4;
        } else if (head_len >= 5 && head[4] == ':') {
            if (n == 5) {
                known = complete;
                vstart = 5;
            } else if (head_len >= 6) {
                known = 1;
                vstart = head[5] == ' ' ? 6 : 5;
            }
        }
        /* When head_len is too short to tell, line_max < 6 and the line
         * cap has already run out at an earlier byte than any data byte. */
    }
    if (known && p->data_len + (n - vstart) > p->event_max) {
        size_t k = p->event_max >= p->data_len ? p->event_max - p->data_len : 0;
        if (start + vstart + k < at) {
            at = start + vstart + k;
            what = BAD_DATA;
        }
    }
    if (what == BAD_LINE)
        return fail(p, TB_ETOOBIG, "line over %zu bytes at byte %" PRIu64, p->line_max, at);
    if (what == BAD_DATA)
        return fail(p, TB_ETOOBIG, "event data over %zu bytes at byte %" PRIu64, p->event_max, at);
    return 0;
}

/*
 * Adds s[0..t) to the open line (which starts at stream offset start when
 * there is none yet), copying at most up to line_max bytes, and checks the
 * caps.  On success the line holds line_len <= line_max bytes.
 */
static int take(struct tb_sse *p, const char *s, size_t t, uint64_t start, int complete)
{
    size_t have = p->line_len, room, k;
    int rc;
    if (have == 0)
        p->line_start = start;
    room = p->line_max - have;
    k = t < room ? t : room;
    if (k > 0) {
        rc = reserve(p, &p->line, &p->line_cap, have + k, p->line_max);
        if (rc != 0)
            return rc;
        memcpy(p->line + have, s, k);
    }
    rc = check_caps(p, p->line, have + k, have + t, p->line_start, complete);
    if (rc != 0)
        return rc;
    p->line_len = have + t;
    return 0;
}

/* Replaces a type or id buffer's contents with v[0..vl). */
static int set_buf(struct tb_sse *p, char **buf, size_t *cap, size_t *len, const char *v, size_t vl)
{
    if (vl > 0) {
        int rc = reserve(p, buf, cap, vl, p->line_max);
        if (rc != 0)
            return rc;
        memcpy(*buf, v, vl);
    }
    *len = vl;
    return 0;
}

/* retry: only ASCII digits, at least one.  A value too large for a long
 * is ignored like any other value the parser cannot use. */
static void set_retry(struct tb_sse *p, const char *v, size_t vl)
{
    long r = 0;
    if (vl == 0)
        return;
    for (size_t i = 0; i < vl; i++) {
        int d = v[i] - '0';
        if (d < 0 || d > 9)
            return;
        if (r > (LONG_MAX - d) / 10)
            return;
        r = r * 10 + d;
    }
    p->retry = r;
}

/* Dispatches the event ended by an empty line that stops at offset end. */
static int dispatch(struct tb_sse *p, uint64_t end, tb_sse_fn fn, void *ud)
{
    struct tb_sse_event ev;
    if (p->data_len == 0) {
        p->type_len = 0;
        return 0;
    }
    ev.type = p->type_len > 0 ? p->type : "message";
    ev.type_len = p->type_len > 0 ? p->type_len : 7;
    ev.data = p->data;
    ev.data_len = p->data_len - 1; /* the last value's "\n" */
    ev.id = p->id_len > 0 ? p->id : "";
    ev.id_len = p->id_len;
    ev.retry_ms = p->retry;
    ev.offset = end;
    /* The buffers are emptied before the call but their bytes stay put
     * until the next feed, which is all the event pointers promise. */
    p->data_len = 0;
    p->type_len = 0;
    p->off = end; /* so tb_sse_offset is the event's offset in the callback */
    return fn != NULL ? fn(ud, &ev) : 0;
}

/*
 * Interprets one complete line s[0..n) whose terminator ends at stream
 * offset end.  Returns 0 or a TB_E* code; a callback's non-zero value goes
 * to *stop.  The caps have been checked.
 */
static int interpret(struct tb_sse *p, const char *s, size_t n, uint64_t end, tb_sse_fn fn,
                     void *ud, int *stop)
{
    const char *colon, *v;
    size_t fl, vl;

    if (n == 0) {
        *stop = dispatch(p, end, fn, ud);
        return 0;
    }
    if (s[0] == ':') {
        p->comments++;
        return 0;
    }
    colon = memchr(s, ':', n);
    if (colon == NULL) {
        fl = n;
        v = s + n;
        vl = 0;
    } else {
        fl = (size_t)(colon - s);
        v = colon + 1;
        vl = n - fl - 1;
        if (vl > 0 && *v == ' ') {
            v++;
            vl--;
        }
    }
    switch (fl) {
    case 4:
        if (memcmp(s, "data", 4) == 0) {
            int rc = reserve(p, &p->data, &p->data_cap, p->data_len + vl + 1, p->event_max + 1);
            if (rc != 0)
                return rc;
            if (vl > 0)
                memcpy(p->data + p->data_len, v, vl);
            p->data[p->data_len + vl] = '\n';
            p->data_len += vl + 1;
        }
        break;
    case 5:
        if (memcmp(s, "event", 5) == 0)
            return set_buf(p, &p->type, &p->type_cap, &p->type_len, v, vl);
        if (memcmp(s, "retry", 5) == 0)
            set_retry(p, v, vl);
        break;
    case 2:
        /* An id with a NUL is ignored as a whole (it could not be sent
         * back in a Last-Event-ID header). */
        if (memcmp(s, "id", 2) == 0 && memchr(v, '\0', vl) == NULL)
            return set_buf(p, &p->id, &p->id_cap, &p->id_len, v, vl);
        break;
    default: break; /* unknown fields are ignored */
    }
    return 0;
}

/* Offset of the first c in buf[from..len), or len. */
static size_t find(const char *buf, size_t from, size_t len, char c)
{
    const char *q = memchr(buf + from, c, len - from);
    return q != NULL ? (size_t)(q - buf) : len;
}

int tb_sse_feed(struct tb_sse *p, const char *buf, size_t len, tb_sse_fn fn, void *ud, char *err,
                size_t errlen)
{
    const uint64_t base = p->off;
    size_t i = 0, nl = SIZE_MAX, cr = SIZE_MAX;
    int rc = 0;

    if (p->fail != 0)
        return tb_seterr(err, errlen, p->fail, "%s", p->failmsg);

    /* One byte order mark at the very start is skipped, possibly split
     * over feeds.  Bytes that turn out not to be one start the first
     * line, at offset 0. */
    while (p->at_start && i < len) {
        if ((unsigned char)buf[i] == bom[p->nbom]) {
            i++;
            if (++p->nbom == 3)
                p->at_start = 0;
        } else {
            p->at_start = 0;
            if (p->nbom > 0) {
                rc = take(p, (const char *)bom, (size_t)p->nbom, 0, 0);
                if (rc != 0)
                    goto out;
            }
        }
    }

    while (i < len) {
        const char *s;
        size_t e, n;
        int stop = 0;
        if (p->cr) {
            p->cr = 0;
            if (buf[i] == '\n') {
                i++;
                continue;
            }
        }
        if (nl == SIZE_MAX || nl < i)
            nl = find(buf, i, len, '\n');
        if (cr == SIZE_MAX || cr < i)
            cr = find(buf, i, len, '\r');
        e = nl < cr ? nl : cr;
        if (e == len) {
            /* An open line: keep it (up to the cap) for the next feed. */
            rc = take(p, buf + i, len - i, base + i, 0);
            if (rc != 0)
                goto out;
            break;
        }
        if (p->line_len > 0) {
            /* The end of a line begun in an earlier feed. */
            rc = take(p, buf + i, e - i, base + i, 1);
            if (rc != 0)
                goto out;
            s = p->line;
            n = p->line_len;
            p->line_len = 0; /* its bytes stay put until the next take */
        } else {
            s = buf + i;
            n = e - i;
            rc = check_caps(p, s, n, n, base + i, 1);
            if (rc != 0)
                goto out;
        }
        rc = interpret(p, s, n, base + e + 1, fn, ud, &stop);
        if (rc != 0)
            goto out;
        p->cr = buf[e] == '\r';
        i = e + 1;
        if (stop != 0) {
            /* The rest of buf is not consumed: tb_sse_offset tells the
             * caller where to resume, should it want to. */
            p->off = base + i;
            return stop;
        }
    }
out:
    p->off = base + len;
    return rc != 0 ? tb_seterr(err, errlen, rc, "%s", p->failmsg) : 0;
}
