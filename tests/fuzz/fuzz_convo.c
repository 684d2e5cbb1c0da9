/*
 * fuzz_convo.c - the conversations reader (convo.h) on hostile files:
 * JSONL lines, ShareGPT arrays, ShareGPT records one a line, anything.
 *
 * Input: the file's bytes, written to a directory of its own under /tmp
 * and read back with tb_convos_load twice.  Properties: the result is 0
 * or one of the reader's documented errors, with a one-line message; on
 * success every conversation has 1 to TB_CONVO_TURNS_MAX turns, each
 * non-blank valid UTF-8, the id and system prompt likewise when present,
 * and no more than TB_CONVO_MAX conversations; on an error nothing is
 * handed out; and two reads of the same bytes give the same answer (the
 * same code, message and conversations).
 */
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "ttsbuf/convo.h"
#include "ttsbuf/error.h"

static char dir[64], path[96];

static void remove_dir(void)
{
    unlink(path);
    rmdir(dir);
}

/* A string the reader hands out: valid UTF-8 with a non-blank byte. */
static void check_text(const char *s)
{
    size_t n = strlen(s);
    int blank = 1;
    FUZZ_CHECK(tb_utf8_check(s, n) == n);
    for (size_t i = 0; i < n; i++)
        if (strchr(" \t\r\n", s[i]) == NULL)
            blank = 0;
    FUZZ_CHECK(!blank);
}

static void log_convos(struct fuzz_log *l, const struct tb_convos *c)
{
    fuzz_log_put(l, &c->n, sizeof(c->n));
    fuzz_log_put(l, &c->skipped, sizeof(c->skipped));
    for (size_t i = 0; i < c->n; i++) {
        const struct tb_convo *v = &c->v[i];
        fuzz_log_put(l, v->id != NULL ? v->id : "\x01", v->id != NULL ? strlen(v->id) + 1 : 1);
        fuzz_log_put(l, v->system != NULL ? v->system : "\x01",
                     v->system != NULL ? strlen(v->system) + 1 : 1);
        for (size_t k = 0; k < v->n_turns; k++)
            fuzz_log_put(l, v->turns[k], strlen(v->turns[k]) + 1);
    }
}

static int load(struct tb_convos *c, char *err, size_t errlen, struct fuzz_log *l)
{
    int rc;
    memset(c, 0, sizeof(*c));
    err[0] = '\0';
    rc = tb_convos_load(path, c, err, errlen);
    FUZZ_CHECK(rc == 0 || rc == TB_EFORMAT || rc == TB_ETOOBIG || rc == TB_EEMPTY ||
               rc == TB_ENOMEM);
    if (rc != 0) {
        FUZZ_CHECK(c->n == 0 && c->v == NULL);
        fuzz_safe_line(err, errlen);
        FUZZ_CHECK(err[0] != '\0');
        fuzz_log_put(l, err, strlen(err) + 1);
        return rc;
    }
    FUZZ_CHECK(c->n >= 1 && c->n <= TB_CONVO_MAX);
    for (size_t i = 0; i < c->n; i++) {
        const struct tb_convo *v = &c->v[i];
        FUZZ_CHECK(v->n_turns >= 1 && v->n_turns <= TB_CONVO_TURNS_MAX);
        for (size_t k = 0; k < v->n_turns; k++)
            check_text(v->turns[k]);
        if (v->id != NULL)
            check_text(v->id);
        if (v->system != NULL)
            check_text(v->system);
    }
    log_convos(l, c);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_convos a, b;
    struct fuzz_log la = {0}, lb = {0};
    char err[512];
    FILE *f;
    int ra, rb;
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/ttsbuf-fuzz-convo-%d", (int)getpid());
        FUZZ_CHECK(mkdir(dir, 0700) == 0 || access(dir, W_OK) == 0);
        snprintf(path, sizeof(path), "%s/convos.jsonl", dir);
        atexit(remove_dir);
    }
    f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(fwrite(data, 1, size, f) == size);
    FUZZ_CHECK(fclose(f) == 0);
    ra = load(&a, err, sizeof(err), &la);
    rb = load(&b, err, sizeof(err), &lb);
    FUZZ_CHECK(ra == rb && la.len == lb.len && memcmp(la.buf, lb.buf, la.len) == 0);
    tb_convos_free(&a);
    tb_convos_free(&b);
    free(la.buf);
    free(lb.buf);
    return 0;
}
