/*
 * test_trace.c - the JSONL trace format: every case file in
 * tests/data/trace (valid ones against their expected events, invalid ones
 * against their exact message, code and partial result), the caps built in
 * memory, file errors, and write-then-read round trips that must give the
 * same events bit for bit.
 *
 * The case files are read into buffers of exactly their size (no NUL
 * after them), so under AddressSanitizer a loader that reads past `len`
 * fails.  The file formats are described in tests/data/trace/README.
 */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "ttsbuf/error.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/trace.h"
#include "ttsbuf/version.h"
#include "ttsbuf/utf8.h"

#define ERRLEN 512

/* ---- helpers ---------------------------------------------------------- */

/* Names in tests/data/trace that start with prefix and end in ".jsonl". */
static size_t list_cases(const char *prefix, char ***out)
{
    return tb_test_list(tb_test_data("trace"), prefix, ".jsonl", 0, out);
}

/* Path of the sibling of tests/data/trace/<jsonl> with another extension. */
static void sibling(char *buf, size_t len, const char *jsonl, const char *ext)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "trace/%.*s%s", (int)(strlen(jsonl) - 6), jsonl, ext);
    snprintf(buf, len, "%s", tb_test_data(rel));
}

static int code_of(const char *name)
{
    static const struct {
        const char *name;
        int code;
    } codes[] = {{"EFORMAT", TB_EFORMAT},
                 {"ETOOBIG", TB_ETOOBIG},
                 {"EEMPTY", TB_EEMPTY},
                 {"EIO", TB_EIO},
                 {"ENOMEM", TB_ENOMEM}};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(codes[i].name, name) == 0)
            return codes[i].code;
    fail_msg("unknown error code name '%s' in a .err file", name);
    return 1;
}

/* Cuts buf at its first '\n' (and a '\r' before it); returns the rest. */
static char *cut_line(char *buf)
{
    char *nl = strchr(buf, '\n');
    if (nl == NULL)
        return buf + strlen(buf);
    if (nl > buf && nl[-1] == '\r')
        nl[-1] = '\0';
    *nl = '\0';
    return nl + 1;
}

/*
 * Decodes a quoted TEXT of a .want file ("..." with \" \\ \n \r \t \xHH)
 * into out; returns its length.  *p is advanced past the closing quote.
 */
static size_t unquote(const char **p, char *out, size_t cap, const char *where)
{
    const char *s = *p;
    size_t n = 0;
    if (*s != '"')
        fail_msg("%s: text must be quoted: %s", where, s);
    s++;
    while (*s != '"') {
        char c = *s++;
        if (c == '\0')
            fail_msg("%s: unterminated text", where);
        if (c == '\\') {
            c = *s++;
            switch (c) {
            case '"':
            case '\\': break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'x': {
                char hex[3] = {s[0], (char)(s[0] ? s[1] : '\0'), '\0'};
                char *end;
                long v = strtol(hex, &end, 16);
                if (end != hex + 2)
                    fail_msg("%s: bad \\x escape", where);
                c = (char)v;
                s += 2;
                break;
            }
            default: fail_msg("%s: unknown escape \\%c", where, c);
            }
        }
        if (n >= cap)
            fail_msg("%s: text longer than %zu bytes", where, cap);
        out[n++] = c;
    }
    *p = s + 1;
    return n;
}

/* Which event of two streams differs first, or SIZE_MAX; compares t bit
 * for bit, text bytes, kind and tokens. */
static size_t first_difference(const struct tb_stream *a, const struct tb_stream *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const struct tb_event *x = &a->ev[i], *y = &b->ev[i];
        if (!tb_test_same_bits(x->t, y->t) || x->len != y->len || x->kind != y->kind ||
            x->tokens != y->tokens ||
            memcmp(tb_stream_text(a, i), tb_stream_text(b, i), x->len) != 0)
            return i;
    }
    return a->n == b->n ? SIZE_MAX : n;
}

static void assert_same_stream(const struct tb_stream *a, const struct tb_stream *b)
{
    size_t i = first_difference(a, b);
    if (i != SIZE_MAX) {
        if (i < a->n && i < b->n)
            fail_msg("event %zu differs: t %.17g vs %.17g, len %u vs %u, kind %u vs %u, "
                     "tokens %u vs %u, text '%.*s' vs '%.*s'",
                     i, a->ev[i].t, b->ev[i].t, a->ev[i].len, b->ev[i].len, a->ev[i].kind,
                     b->ev[i].kind, a->ev[i].tokens, b->ev[i].tokens, (int)a->ev[i].len,
                     tb_stream_text(a, i), (int)b->ev[i].len, tb_stream_text(b, i));
        fail_msg("event counts differ: %zu vs %zu", a->n, b->n);
    }
    assert_int_equal(a->usage_tokens, b->usage_tokens);
    assert_string_equal(a->model, b->model);
    assert_string_equal(a->base_url, b->base_url);
    /* How it ended, the time bit for bit (NaN: not known). */
    if (a->end.kind != b->end.kind || !tb_test_same_bits(a->end.t, b->end.t) ||
        a->end.ignored_bytes != b->end.ignored_bytes || a->end.http_status != b->end.http_status ||
        strcmp(a->end.error, b->end.error) != 0 || strcmp(a->end.message, b->end.message) != 0 ||
        strcmp(a->end.finish_reason, b->end.finish_reason) != 0)
        fail_msg("ends differ: %s at %.17g (%s %ld '%s', %llu ignored, '%s') vs %s at %.17g "
                 "(%s %ld '%s', %llu ignored, '%s')",
                 tb_end_name(a->end.kind), a->end.t, a->end.error, a->end.http_status,
                 a->end.message, (unsigned long long)a->end.ignored_bytes, a->end.finish_reason,
                 tb_end_name(b->end.kind), b->end.t, b->end.error, b->end.http_status,
                 b->end.message, (unsigned long long)b->end.ignored_bytes, b->end.finish_reason);
}

/* Writes s with tb_trace_write into memory; returns the bytes (caller
 * frees) and their length. */
static char *write_mem(const struct tb_stream *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(tb_trace_write(f, s), 0);
    assert_int_equal(fclose(f), 0);
    assert_non_null(buf);
    tb_test_collect_bytes("trace", "jsonl", buf, *len);
    return buf;
}

/* Writes s, reads it back into a fresh stream and asserts they agree. */
static void assert_round_trip(const struct tb_stream *s)
{
    struct tb_stream back;
    char err[ERRLEN] = "";
    size_t len;
    char *buf = write_mem(s, &len);
    int rc;
    tb_stream_init(&back);
    rc = tb_trace_load_mem(buf, len, "written", &back, err, sizeof(err));
    if (rc != 0)
        fail_msg("reading back what tb_trace_write wrote: %s (%s)\n%s", err, tb_strerror(rc), buf);
    assert_same_stream(s, &back);
    tb_stream_free(&back);
    free(buf);
}

/* ---- the case files --------------------------------------------------- */

/* Loads one bad case both ways and reports every mismatch; returns the
 * number of mismatches (printed, so one run lists them all). */
static int check_bad_case(const char *file)
{
    char errpath[4096], path[4096], want_msg[4096], err[ERRLEN];
    char *spec, *line2, *line3, *rest;
    size_t len;
    char *data;
    int code, kept = -1, fails = 0;
    struct tb_stream s;

    sibling(errpath, sizeof(errpath), file, ".err");
    {
        FILE *f = fopen(errpath, "rb");
        if (f == NULL) {
            print_error("%s: no matching .err file (%s)\n", file, errpath);
            return 1;
        }
        fclose(f);
    }
    spec = tb_test_slurp_text(errpath, NULL);
    line2 = cut_line(spec);
    line3 = cut_line(line2);
    rest = cut_line(line3);
    (void)rest;
    code = code_of(spec);
    if (line3[0] != '\0' && sscanf(line3, "kept %d", &kept) != 1) {
        print_error("%s: third line must be 'kept N', not '%s'\n", errpath, line3);
        free(spec);
        return 1;
    }

    snprintf(path, sizeof(path), "%s", tb_test_data("trace"));
    snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", file);
    data = tb_test_slurp(path, &len);

    /* From memory, named by the file's base name. */
    tb_stream_init(&s);
    snprintf(want_msg, sizeof(want_msg), "%s%s", file, line2);
    err[0] = '\0';
    {
        int rc = tb_trace_load_mem(data, len, file, &s, err, sizeof(err));
        if (rc != code) {
            print_error("%s: code %d (%s), want %d (%s); message: %s\n", file, rc, tb_strerror(rc),
                        code, tb_strerror(code), err);
            fails++;
        } else if (strcmp(err, want_msg) != 0) {
            print_error("%s: message\n    got:  %s\n    want: %s\n", file, err, want_msg);
            fails++;
        }
        if (kept >= 0 && s.n != (size_t)kept) {
            print_error("%s: kept %zu events, want %d\n", file, s.n, kept);
            fails++;
        }
        /* What was kept must itself be well-formed. */
        for (size_t i = 0; i < s.n; i++) {
            if (s.ev[i].len == 0 || s.ev[i].tokens == 0 ||
                tb_utf8_check(tb_stream_text(&s, i), s.ev[i].len) != s.ev[i].len ||
                (i > 0 && s.ev[i].t < s.ev[i - 1].t)) {
                print_error("%s: kept event %zu is malformed\n", file, i);
                fails++;
            }
        }
    }
    tb_stream_free(&s);

    /* From the file, named by its path. */
    tb_stream_init(&s);
    snprintf(want_msg, sizeof(want_msg), "%s%s", path, line2);
    err[0] = '\0';
    {
        int rc = tb_trace_load_file(path, &s, err, sizeof(err));
        if (rc != code || strcmp(err, want_msg) != 0) {
            print_error("%s via tb_trace_load_file: code %d, message\n    got:  %s\n"
                        "    want: %s\n",
                        file, rc, err, want_msg);
            fails++;
        }
        if (kept >= 0 && s.n != (size_t)kept) {
            print_error("%s via tb_trace_load_file: kept %zu events, want %d\n", file, s.n, kept);
            fails++;
        }
    }
    tb_stream_free(&s);
    free(data);
    free(spec);
    return fails;
}

static void bad_case_files(void **state)
{
    char **names;
    size_t n = list_cases("bad_", &names);
    int fails = 0;
    (void)state;
    for (size_t i = 0; i < n; i++)
        fails += check_bad_case(names[i]);
    print_message("trace: %zu bad case files\n", n);
    tb_test_free_names(names, n);
    assert_true(n >= 60); /* the directory was found and read */
    assert_int_equal(fails, 0);
}

/* Reads a .want file into a stream of expected events. */
static void read_want(const char *path, struct tb_stream *want)
{
    char *buf = tb_test_slurp_text(path, NULL), *line, *next;
    static char text[1 << 16];
    for (line = buf; *line != '\0'; line = next) {
        const char *p;
        next = cut_line(line);
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (strncmp(line, "model ", 6) == 0 || strncmp(line, "base_url ", 9) == 0) {
            int is_model = line[0] == 'm';
            char *dst = is_model ? want->model : want->base_url;
            size_t cap = is_model ? sizeof(want->model) : sizeof(want->base_url);
            size_t n;
            p = line + (is_model ? 6 : 9);
            n = unquote(&p, text, sizeof(text), path);
            if (n >= cap)
                fail_msg("%s: header string longer than the stream keeps", path);
            memcpy(dst, text, n);
            dst[n] = '\0';
        } else if (strncmp(line, "usage ", 6) == 0) {
            want->usage_tokens = strtoll(line + 6, NULL, 10);
        } else if (strncmp(line, "end ", 4) == 0) {
            char kind[32];
            unsigned long long ignored;
            int used = 0;
            size_t n;
            if (sscanf(line + 4, "%31s %lf %llu %n", kind, &want->end.t, &ignored, &used) != 3 ||
                used == 0 || (want->end.kind = tb_end_parse(kind)) < 0)
                fail_msg("%s: cannot read '%s' (end KIND T IGNORED \"FINISH\")", path, line);
            want->end.ignored_bytes = ignored;
            p = line + 4 + used;
            n = unquote(&p, text, sizeof(want->end.finish_reason) - 1, path);
            memcpy(want->end.finish_reason, text, n);
            want->end.finish_reason[n] = '\0';
        } else if (strncmp(line, "end_error ", 10) == 0) {
            int used = 0;
            size_t n;
            if (sscanf(line + 10, "%15s %ld %n", want->end.error, &want->end.http_status, &used) !=
                    2 ||
                used == 0)
                fail_msg("%s: cannot read '%s' (end_error KIND STATUS \"MESSAGE\")", path, line);
            p = line + 10 + used;
            n = unquote(&p, text, sizeof(want->end.message) - 1, path);
            memcpy(want->end.message, text, n);
            want->end.message[n] = '\0';
        } else {
            char *end, kind[16];
            double t = strtod(line, &end);
            unsigned tokens;
            int used = 0;
            size_t n;
            if (end == line || sscanf(end, " %15s %u %n", kind, &tokens, &used) != 2 || used == 0)
                fail_msg("%s: cannot read event line '%s'", path, line);
            p = end + used;
            n = unquote(&p, text, sizeof(text), path);
            assert_int_equal(tb_stream_append(want, t, text, n, tokens,
                                              strcmp(kind, "reasoning") == 0 ? TB_KIND_REASONING
                                                                             : TB_KIND_CONTENT),
                             0);
            if (strcmp(kind, "reasoning") != 0 && strcmp(kind, "content") != 0)
                fail_msg("%s: kind must be content or reasoning, not %s", path, kind);
        }
    }
    free(buf);
}

static void ok_case_files(void **state)
{
    char **names;
    size_t n = list_cases("ok_", &names);
    (void)state;
    for (size_t i = 0; i < n; i++) {
        char path[4096], wantpath[4096], err[ERRLEN] = "";
        struct tb_stream got, want, viafile;
        size_t len;
        char *data;
        int rc;

        snprintf(path, sizeof(path), "%s/%s", tb_test_data("trace"), names[i]);
        sibling(wantpath, sizeof(wantpath), names[i], ".want");
        data = tb_test_slurp(path, &len);
        tb_stream_init(&got);
        tb_stream_init(&want);
        tb_stream_init(&viafile);
        read_want(wantpath, &want);
        rc = tb_trace_load_mem(data, len, names[i], &got, err, sizeof(err));
        if (rc != 0)
            fail_msg("%s: %s (%s)", names[i], err, tb_strerror(rc));
        print_message("  %s: %zu events\n", names[i], got.n);
        assert_same_stream(&got, &want);
        /* The file loader agrees with the memory loader. */
        assert_int_equal(tb_trace_load_file(path, &viafile, err, sizeof(err)), 0);
        assert_same_stream(&viafile, &want);
        /* And what we write reads back the same. */
        assert_round_trip(&got);
        tb_stream_free(&viafile);
        tb_stream_free(&want);
        tb_stream_free(&got);
        free(data);
    }
    print_message("trace: %zu ok case files\n", n);
    tb_test_free_names(names, n);
    assert_true(n >= 20);
}

/* ---- caps, built in memory -------------------------------------------- */

/* A line of exactly `len` bytes: {"t":T,"text":"aaa..."} padded with
 * spaces inside the object, or with a text of text_len bytes. */
static char *big_line(size_t text_len, size_t pad, double t, size_t *len)
{
    char head[64];
    int hl = snprintf(head, sizeof(head), "{\"t\":%g,\"text\":\"", t);
    size_t n = (size_t)hl + text_len + 1 + pad + 1;
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    memcpy(buf, head, (size_t)hl);
    memset(buf + hl, 'a', text_len);
    buf[hl + text_len] = '"';
    memset(buf + hl + text_len + 1, ' ', pad);
    buf[n - 1] = '}';
    buf[n] = '\n';
    *len = n + 1;
    return buf;
}

static void line_over_cap_is_toobig(void **state)
{
    const char *first = "{\"t\":0.1,\"text\":\"kept\"}\n";
    size_t fl = strlen(first), bl, total;
    char *big = big_line(16, 0, 0.2, &bl);
    char *buf, err[ERRLEN], want[ERRLEN];
    struct tb_stream s;
    (void)state;
    free(big);
    /* Pad so that the second line (without its newline) is one byte over. */
    big = big_line(16, TB_TRACE_LINE_MAX + 1 - (bl - 1), 0.2, &bl);
    assert_int_equal(bl - 1, (size_t)TB_TRACE_LINE_MAX + 1);
    total = fl + bl;
    buf = malloc(total);
    assert_non_null(buf);
    memcpy(buf, first, fl);
    memcpy(buf + fl, big, bl);
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_mem(buf, total, "big.jsonl", &s, err, sizeof(err)), TB_ETOOBIG);
    snprintf(want, sizeof(want), "big.jsonl:2: line of %zu bytes is over the %u-byte cap",
             (size_t)TB_TRACE_LINE_MAX + 1, TB_TRACE_LINE_MAX);
    assert_string_equal(err, want);
    assert_int_equal(s.n, 1); /* the event before the long line is kept */
    assert_memory_equal(tb_stream_text(&s, 0), "kept", 4);
    tb_stream_free(&s);
    free(buf);
    free(big);
}

static void line_at_cap_is_accepted(void **state)
{
    size_t bl;
    char *big = big_line(16, 0, 0.2, &bl), err[ERRLEN] = "";
    struct tb_stream s;
    (void)state;
    free(big);
    big = big_line(16, TB_TRACE_LINE_MAX - (bl - 1), 0.2, &bl);
    assert_int_equal(bl - 1, (size_t)TB_TRACE_LINE_MAX);
    tb_stream_init(&s);
    if (tb_trace_load_mem(big, bl, "cap.jsonl", &s, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.ev[0].len, 16);
    tb_stream_free(&s);
    free(big);
}

static void text_over_event_cap_is_toobig(void **state)
{
    size_t bl;
    char *big, err[ERRLEN] = "";
    struct tb_stream s;
    (void)state;
    /* Exactly the cap: accepted. */
    big = big_line(TB_EVENT_TEXT_MAX, 0, 0.2, &bl);
    tb_stream_init(&s);
    if (tb_trace_load_mem(big, bl, "t.jsonl", &s, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.ev[0].len, TB_EVENT_TEXT_MAX);
    tb_stream_free(&s);
    free(big);
    /* One byte over: TB_ETOOBIG, although the line is far below its cap. */
    big = big_line(TB_EVENT_TEXT_MAX + 1, 0, 0.2, &bl);
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_mem(big, bl, "t.jsonl", &s, err, sizeof(err)), TB_ETOOBIG);
    assert_string_equal(err, "t.jsonl:1: \"text\" is over the 1 MiB event cap");
    assert_int_equal(s.n, 0);
    tb_stream_free(&s);
    free(big);
}

/* ---- other loader behaviour ------------------------------------------- */

static void missing_file_is_eio(void **state)
{
    const char *path = tb_test_data("trace/no-such-file.jsonl");
    char err[ERRLEN] = "", want[ERRLEN];
    struct tb_stream s;
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), TB_EIO);
    snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
    assert_string_equal(err, want);
    assert_int_equal(s.n, 0);
    tb_stream_free(&s);
}

static void directory_is_eio(void **state)
{
    char path[4096], err[ERRLEN] = "", want[8192];
    struct tb_stream s;
    (void)state;
    snprintf(path, sizeof(path), "%s", tb_test_data("trace"));
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), TB_EIO);
    snprintf(want, sizeof(want), "%s: %s", path, strerror(EISDIR));
    assert_string_equal(err, want);
    tb_stream_free(&s);
}

static void err_buffer_optional_and_bounded(void **state)
{
    const char *bad = "{\"t\":0.5,\"text\":\"a\"}\n{\"t\":0.1,\"text\":\"b\"}\n";
    char small[12];
    struct tb_stream s;
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_mem(bad, strlen(bad), "x", &s, NULL, 0), TB_EFORMAT);
    assert_int_equal(tb_trace_load_mem(bad, strlen(bad), "x", &s, NULL, 99), TB_EFORMAT);
    memset(small, 'Z', sizeof(small));
    assert_int_equal(tb_trace_load_mem(bad, strlen(bad), "x", &s, small, sizeof(small)),
                     TB_EFORMAT);
    assert_string_equal(small, "x:2: \"t\" go"); /* cut, NUL-terminated */
    tb_stream_free(&s);
}

static void load_appends_to_stream(void **state)
{
    const char *a = "{\"ttsbuf_trace\":1,\"model\":\"one\"}\n{\"t\":5,\"text\":\"a\"}\n";
    const char *b =
        "{\"t\":0.5,\"text\":\"b\",\"tokens\":2}\n{\"usage\":{\"completion_tokens\":3}}\n";
    const char *none = "{\"t\":0.1,\"text\":\"\"}\n";
    char err[ERRLEN] = "";
    struct tb_stream s;
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_mem(a, strlen(a), "a", &s, err, sizeof(err)), 0);
    /* Each load checks order within its own text: 0.5 after 5 is fine. */
    assert_int_equal(tb_trace_load_mem(b, strlen(b), "b", &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 2);
    assert_memory_equal(tb_stream_text(&s, 0), "a", 1);
    assert_memory_equal(tb_stream_text(&s, 1), "b", 1);
    assert_int_equal(s.ev[1].tokens, 2);
    assert_string_equal(s.model, "one");
    assert_int_equal(s.usage_tokens, 3);
    /* A trace that adds no event is empty even when the stream is not. */
    assert_int_equal(tb_trace_load_mem(none, strlen(none), "none", &s, err, sizeof(err)),
                     TB_EEMPTY);
    assert_string_equal(err, "none: the trace holds no event");
    assert_int_equal(s.n, 2);
    tb_stream_free(&s);
}

static void load_respects_len(void **state)
{
    /* Only the first line is inside len; what follows must not be read. */
    const char *buf = "{\"t\":0.1,\"text\":\"a\"}\n{\"t\":0.2,\"text\":\"b\"}\nGARBAGE";
    size_t len = strlen("{\"t\":0.1,\"text\":\"a\"}");
    char err[ERRLEN] = "";
    struct tb_stream s;
    (void)state;
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_mem(buf, len, "p", &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 1);
    /* Cut inside the second object: invalid JSON on line 2. */
    tb_stream_clear(&s);
    assert_int_equal(tb_trace_load_mem(buf, len + 10, "p", &s, err, sizeof(err)), TB_EFORMAT);
    assert_int_equal(s.n, 1);
    tb_stream_free(&s);
}

/* ---- writing ---------------------------------------------------------- */

static void write_format_is_stable(void **state)
{
    struct tb_stream s;
    size_t len;
    char *buf;
    (void)state;
    tb_stream_init(&s);
    snprintf(s.model, sizeof(s.model), "m");
    assert_int_equal(tb_stream_append(&s, 0.1 + 0.2, "b\"", 2, 3, TB_KIND_REASONING), 0);
    assert_int_equal(tb_stream_append(&s, 0.5, "a", 1, 1, TB_KIND_CONTENT), 0);
    s.usage_tokens = 412;
    buf = write_mem(&s, &len);
    assert_string_equal(buf, "{\"ttsbuf_trace\":2,\"schema\":{\"name\":\"ttsbuf.trace\","
                             "\"version\":2},\"ttsbuf_version\":\"" TB_VERSION "\","
                             "\"model\":\"m\",\"events\":2}\n"
                             "{\"t\":0.30000000000000004,\"text\":\"b\\\"\","
                             "\"kind\":\"reasoning\",\"tokens\":3}\n"
                             "{\"t\":0.5,\"text\":\"a\"}\n"
                             "{\"usage\":{\"completion_tokens\":412}}\n"
                             "{\"end\":{\"kind\":\"unknown\",\"t\":null,\"error\":null,"
                             "\"ignored_bytes\":0}}\n");
    free(buf);
    /* A stream cut off says how, when, and with which error. */
    s.end.kind = TB_END_LOST;
    s.end.t = 0.1 + 0.7;
    snprintf(s.end.error, sizeof(s.end.error), "transport");
    snprintf(s.end.message, sizeof(s.end.message), "connection lost after 2 deltas: reset");
    s.end.http_status = 200;
    s.end.ignored_bytes = 7;
    snprintf(s.end.finish_reason, sizeof(s.end.finish_reason), "length");
    buf = write_mem(&s, &len);
    assert_non_null(strstr(buf, "{\"usage\":{\"completion_tokens\":412}}\n"
                                "{\"end\":{\"kind\":\"connection_lost\",\"t\":0.7999999999999999,"
                                "\"error\":{\"kind\":\"transport\",\"message\":\"connection lost "
                                "after 2 deltas: reset\",\"http_status\":200},\"ignored_bytes\":7,"
                                "\"finish_reason\":\"length\"}}\n"));
    free(buf);
    assert_round_trip(&s);
    tb_stream_free(&s);
}

static void round_trip_awkward_texts(void **state)
{
    static const struct {
        const char *text;
        unsigned tokens;
        enum tb_kind kind;
    } ev[] = {
        {"say \"hi\"", 1, TB_KIND_CONTENT},
        {"back\\slash \\\\ and \\u0041 literally", 2, TB_KIND_CONTENT},
        {"line\nbreak", 1, TB_KIND_CONTENT},
        {"\r\t\b\f\v", 1, TB_KIND_REASONING},
        {"\x01\x02\x1f\x7f", 7, TB_KIND_CONTENT},
        {"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80", 3, TB_KIND_CONTENT},
        {"\xe2\x80\xa8\xe2\x80\xa9\xef\xbb\xbf", 1, TB_KIND_CONTENT}, /* U+2028/9, BOM */
        {"</script> / {\"t\": 1}", 1, TB_KIND_REASONING},
        {"\n", 1000000, TB_KIND_CONTENT},
        {" ", 1, TB_KIND_CONTENT},
    };
    struct tb_stream s;
    (void)state;
    tb_stream_init(&s);
    snprintf(s.model, sizeof(s.model), "m\"o\\d\xc3\xa9l\n");
    snprintf(s.base_url, sizeof(s.base_url), "https://api.example.com/v1?a=\"b\"");
    s.usage_tokens = 412;
    for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
        assert_int_equal(tb_stream_append(&s, 0.25 * (double)i + 1e-9, ev[i].text,
                                          strlen(ev[i].text), ev[i].tokens, ev[i].kind),
                         0);
    assert_round_trip(&s);
    /* Unknown usage and no header strings stay unknown and empty. */
    s.usage_tokens = -1;
    s.model[0] = '\0';
    s.base_url[0] = '\0';
    assert_round_trip(&s);
    s.usage_tokens = 0;
    assert_round_trip(&s);
    tb_stream_free(&s);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void round_trip_times_bit_identical(void **state)
{
    enum { NRAND = 5000 };
    static const double fixed[] = {
        0.0,
        5e-324,
        DBL_MIN,
        1e-7,
        0.1,
        0.1 + 0.2,
        0.3,
        1.0 / 3.0,
        0.7,
        1.0,
        1.0000000000000002,
        2.0 / 3.0 * 1e3,
        12345.6789,
        123456789.123456789,
        999999999.9999999, /* the double below TB_TIME_MAX */
        TB_TIME_MAX,
    };
    size_t nf = sizeof(fixed) / sizeof(fixed[0]), n = nf + (size_t)2 * NRAND;
    double *t = malloc(n * sizeof(*t));
    uint64_t rng = 42;
    struct tb_stream s;
    (void)state;
    assert_non_null(t);
    memcpy(t, fixed, sizeof(fixed));
    for (size_t i = 0; i < NRAND; i++) {
        /* Uniform seconds with all 53 bits random, and arbitrary
         * non-negative bit patterns up to TB_TIME_MAX (any exponent that
         * reaches). */
        t[nf + i] = (double)(splitmix(&rng) >> 11) / 9007199254740992.0 * 3600.0;
        for (;;) {
            uint64_t bits = splitmix(&rng) >> 1; /* sign bit clear */
            double d;
            memcpy(&d, &bits, sizeof(d));
            if (d <= TB_TIME_MAX) {
                t[nf + NRAND + i] = d;
                break;
            }
        }
    }
    qsort(t, n, sizeof(*t), cmp_double);
    tb_stream_init(&s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tb_stream_append(&s, t[i], "x", 1, 1, TB_KIND_CONTENT), 0);
    assert_round_trip(&s);
    /* A time that is not finite is refused (the writer would print it as
     * null, which no loader takes). */
    assert_int_equal(tb_stream_append(&s, INFINITY, "x", 1, 1, TB_KIND_CONTENT), TB_ERANGE);
    assert_int_equal(tb_stream_append(&s, NAN, "x", 1, 1, TB_KIND_CONTENT), TB_ERANGE);
    assert_int_equal(s.n, n);
    tb_stream_free(&s);
    free(t);
}

static void write_empty_stream(void **state)
{
    struct tb_stream s, back;
    char err[ERRLEN] = "";
    size_t len;
    char *buf;
    (void)state;
    tb_stream_init(&s);
    buf = write_mem(&s, &len);
    assert_string_equal(buf, "{\"ttsbuf_trace\":2,\"schema\":{\"name\":\"ttsbuf.trace\","
                             "\"version\":2},\"ttsbuf_version\":\"" TB_VERSION "\","
                             "\"events\":0}\n"
                             "{\"end\":{\"kind\":\"unknown\",\"t\":null,\"error\":null,"
                             "\"ignored_bytes\":0}}\n");
    tb_stream_init(&back);
    assert_int_equal(tb_trace_load_mem(buf, len, "e", &back, err, sizeof(err)), TB_EEMPTY);
    assert_string_equal(err, "e: the trace holds no event");
    tb_stream_free(&back);
    free(buf);
    /* The recording of a request that failed holds no event, and says
     * why: the stream keeps its end. */
    s.end.kind = TB_END_ERROR;
    s.end.t = 0.25;
    snprintf(s.end.error, sizeof(s.end.error), "http");
    snprintf(s.end.message, sizeof(s.end.message), "HTTP 503: overloaded");
    s.end.http_status = 503;
    buf = write_mem(&s, &len);
    tb_stream_init(&back);
    assert_int_equal(tb_trace_load_mem(buf, len, "f", &back, err, sizeof(err)), TB_EEMPTY);
    assert_string_equal(err, "f: the trace holds no event (the stream ended: error, HTTP 503: "
                             "overloaded)");
    assert_int_equal(back.end.kind, TB_END_ERROR);
    assert_int_equal(back.end.http_status, 503);
    assert_string_equal(back.end.error, "http");
    tb_stream_free(&back);
    free(buf);
}

static void write_error_is_eio(void **state)
{
    struct tb_stream s;
    FILE *f = fopen("/dev/null", "r"); /* writes to a read-only FILE fail */
    (void)state;
    assert_non_null(f);
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0.1, "a", 1, 1, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_trace_write(f, &s), TB_EIO);
    fclose(f);
    tb_stream_free(&s);
}

static void write_to_tmpfile_and_load_file(void **state)
{
    char path[] = "/tmp/ttsbuf-test-trace-XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    struct tb_stream s, back;
    char err[ERRLEN] = "";
    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    tb_stream_init(&s);
    snprintf(s.model, sizeof(s.model), "tmp");
    assert_int_equal(tb_stream_append(&s, 0.1 + 0.2, "x\ny", 3, 2, TB_KIND_CONTENT), 0);
    assert_int_equal(tb_trace_write(f, &s), 0);
    assert_int_equal(fclose(f), 0);
    tb_stream_init(&back);
    assert_int_equal(tb_trace_load_file(path, &back, err, sizeof(err)), 0);
    assert_same_stream(&s, &back);
    remove(path);
    tb_stream_free(&back);
    tb_stream_free(&s);
}

/* Peak RSS allowed for a failed load (KiB): a 4 MiB line, the binary and
 * its libraries, with room for the sanitizers' shadow. */
#define BOUNDED_RSS_KIB (160L * 1024)

/* Runs `ttsbuf ARGS` after `pre |` (or alone); its one-line error must
 * hold want, and its peak RSS stay bounded. */
static void expect_bounded(const char *pre, const char *args, const char *want)
{
    char cmd[1024], path[64], *err;
    long rss;
    int code;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-bounded-%d.err", (int)getpid());
    snprintf(cmd, sizeof(cmd), "%s%s'%s' %s 2>%s >/dev/null", pre != NULL ? pre : "",
             pre != NULL ? " | " : "", tb_test_bin(), args, path);
    rss = tb_test_sh_rss(cmd, &code);
    err = tb_test_slurp_str(path);
    remove(path);
    if (code != 2 || strstr(err, want) == NULL || rss > BOUNDED_RSS_KIB)
        fail_msg("%s: exit %d, peak RSS %ld KiB, stderr '%s'; wanted exit 2, at most %ld KiB "
                 "and '%s'",
                 cmd, code, rss, err, BOUNDED_RSS_KIB, want);
    free(err);
}

/* A file is read a line at a time with the cap enforced as the bytes
 * arrive: 400 MB of zeros on a pipe (no newline) and a sparse file of
 * 512 MiB stop at the 4 MiB cap with the line named, in bounded memory,
 * and a long line after good ones still names its line. */
static void load_file_memory_bounded(void **state)
{
    char path[64], args[128];
    FILE *f;
    (void)state;
    expect_bounded("head -c 400000000 /dev/zero", "sim --trace -",
                   "<stdin>:1: line is over the 4194304-byte cap");
    snprintf(path, sizeof(path), "/tmp/ttsbuf-sparse-%d.jsonl", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"t\": 0.1, \"text\": \"hi\"}\n{\"t\": 0.2, \"text\": \"x\"}\n", f);
    assert_int_equal(ftruncate(fileno(f), (off_t)512 << 20), 0);
    assert_int_equal(fclose(f), 0);
    snprintf(args, sizeof(args), "sim --trace %s", path);
    expect_bounded(NULL, args, ":3: line is over the 4194304-byte cap");
    remove(path);
}


/* ---- a file of several traces (bench --out's traces/LEVEL.jsonl) ---- */

#define HDR(id) "{\"ttsbuf_trace\": 2, \"request\": " #id ", \"command\": \"bench\"}\n"
#define END_OK "{\"end\": {\"kind\": \"complete\", \"t\": 0.5, \"error\": null}}\n"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Each trace read in turn, or the one of a request; a plain load refuses
 * the file where its second trace begins; a request it does not hold is
 * named with the ids it does; the failed request's trace (no event) is
 * read as such; the sim and sweep commands say the same. */
static void file_of_several_traces(void **state)
{
    static const char text[] =
        HDR(5) "{\"t\": 0.1, \"text\": \"One.\"}\n{\"t\": 0.2, \"text\": \" Two.\"}\n" END_OK "\n"
        HDR(9) "{\"end\": {\"kind\": \"error\", \"t\": 0.3, \"error\": {\"kind\": \"http\", "
               "\"message\": \"HTTP 500\", \"http_status\": 500}}}\n" HDR(12) "{\"t\": 0.1, \"text\": \"Three.\"}\n" END_OK
               "\n\n";
    char path[128], err[ERRLEN], args[256];
    struct tb_stream s;
    struct tb_trace_file *tf;
    struct tb_test_out o;
    int want[] = {1, TB_EEMPTY, 1, 0, 0};
    long long ids[] = {5, 9, 12};
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-several-%d.jsonl", (int)getpid());
    write_file(path, text);

    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), TB_EFORMAT);
    assert_non_null(strstr(err, ":6: a second trace begins here"));
    tb_stream_free(&s);

    assert_int_equal(tb_trace_file_open(path, &tf, err, sizeof(err)), 0);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        tb_stream_init(&s);
        assert_int_equal(tb_trace_file_next(tf, &s, err, sizeof(err)), want[i]);
        if (i < 3) {
            assert_int_equal(s.request, ids[i]);
            assert_int_equal(s.n, i == 0 ? 2 : i == 1 ? 0 : 1);
        }
        tb_stream_free(&s);
    }
    tb_trace_file_close(tf);

    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_request(path, 12, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.end.kind, TB_END_COMPLETE);
    tb_stream_free(&s);
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_request(path, 9, &s, err, sizeof(err)), TB_EEMPTY);
    assert_int_equal(s.end.kind, TB_END_ERROR);
    assert_int_equal(s.end.http_status, 500);
    tb_stream_free(&s);
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_request(path, 7, &s, err, sizeof(err)), TB_EINVAL);
    assert_non_null(strstr(err, ": no trace of request 7 (it holds 3, of requests 5 to 12)"));
    tb_stream_free(&s);

    snprintf(args, sizeof(args), "sim --trace %s --request 12 --json", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    assert_non_null(strstr(o.so, "request 12"));
    tb_test_out_free(&o);
    snprintf(args, sizeof(args), "sim --trace %s", path);
    tb_test_expect_error(args, 2, ":6: a second trace begins here");
    tb_test_expect_error(args, 2, "--request ID");
    snprintf(args, sizeof(args), "sim --trace %s --request 7", path);
    tb_test_expect_error(args, 2, "no trace of request 7 (it holds 3, of requests 5 to 12)");
    snprintf(args, sizeof(args), "sweep --trace %s", path);
    o = tb_test_run(args);
    assert_int_equal(o.code, 0);
    if (strstr(o.so, "2 streams x 1 setting") == NULL || strstr(o.so, "1 failed") == NULL ||
        strstr(o.so, ".jsonl#request=9: failed (error at 0.30 s, 0 events): HTTP 500") == NULL)
        fail_msg("sweep of a file of three traces: %s", o.so);
    tb_test_out_free(&o);

    /* Only a header may follow an end line; a request is an id. */
    write_file(path, HDR(5) "{\"t\": 0.1, \"text\": \"One.\"}\n" END_OK
                     "{\"t\": 0.2, \"text\": \"late\"}\n");
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_request(path, 5, &s, err, sizeof(err)), TB_EFORMAT);
    assert_non_null(strstr(err, ":4: a line after the \"end\" line"));
    tb_stream_free(&s);
    write_file(path, "{\"ttsbuf_trace\": 2, \"request\": -1}\n{\"t\": 0.1, \"text\": \"x\"}\n");
    tb_stream_init(&s);
    assert_int_equal(tb_trace_load_file(path, &s, err, sizeof(err)), TB_EFORMAT);
    assert_non_null(strstr(err, ":1: \"request\" is not a request's id"));
    tb_stream_free(&s);
    remove(path);
}

/* A stream's request is written in its header and read back. */
static void request_round_trip(void **state)
{
    char path[128], err[ERRLEN];
    struct tb_stream s, t;
    FILE *f;
    (void)state;
    snprintf(path, sizeof(path), "/tmp/ttsbuf-reqrt-%d.jsonl", (int)getpid());
    tb_stream_init(&s);
    assert_int_equal(tb_stream_append(&s, 0.25, "Hi.", 3, 1, TB_KIND_CONTENT), 0);
    s.request = 42;
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(tb_trace_write(f, &s), 0);
    assert_int_equal(tb_trace_write(f, &s), 0); /* twice: a file of two */
    assert_int_equal(fclose(f), 0);
    tb_stream_init(&t);
    assert_int_equal(tb_trace_load_request(path, 42, &t, err, sizeof(err)), 0);
    assert_int_equal(t.request, 42);
    assert_int_equal(t.n, 1);
    tb_stream_free(&t);
    tb_stream_free(&s);
    remove(path);
}

int tb_test_trace(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_case_files),
        cmocka_unit_test(ok_case_files),
        cmocka_unit_test(line_over_cap_is_toobig),
        cmocka_unit_test(line_at_cap_is_accepted),
        cmocka_unit_test(text_over_event_cap_is_toobig),
        cmocka_unit_test(missing_file_is_eio),
        cmocka_unit_test(directory_is_eio),
        cmocka_unit_test(err_buffer_optional_and_bounded),
        cmocka_unit_test(load_appends_to_stream),
        cmocka_unit_test(load_respects_len),
        cmocka_unit_test(write_format_is_stable),
        cmocka_unit_test(round_trip_awkward_texts),
        cmocka_unit_test(round_trip_times_bit_identical),
        cmocka_unit_test(write_empty_stream),
        cmocka_unit_test(write_error_is_eio),
        cmocka_unit_test(write_to_tmpfile_and_load_file),
        cmocka_unit_test(load_file_memory_bounded),
        cmocka_unit_test(file_of_several_traces),
        cmocka_unit_test(request_round_trip),
    };
    return TB_RUN_GROUP("trace", tests);
}
