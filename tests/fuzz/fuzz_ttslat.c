/*
 * fuzz_ttslat.c - the --tts-latency spec parser and FILE reader (ttslat.h).
 *
 * The input's first line is a spec; the rest stands for the FILE of an
 * empirical: or list: spec (tb_ttslat_create_mem: nothing is opened).
 * Properties: create returns 0 or a documented error with a one-line,
 * printable message and no object; an accepted latency formats to a
 * canonical text that parses back (with the same FILE) to the same
 * values; every value is finite, within the info's [lo, hi] and the
 * documented cap, and the same when asked again in another order.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttslat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[TB_TTSLAT_SPEC_MAX + 64], canon[TB_TTSLAT_SPEC_MAX + 64], err[512];
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = nl != NULL ? (size_t)(nl - data) : size;
    const char *file = nl != NULL ? (const char *)nl + 1 : NULL;
    size_t flen = nl != NULL ? size - n - 1 : 0;
    struct tb_ttslat *t = NULL, *u = NULL;
    struct tb_ttslat_info a, b;
    int rc;
    if (n >= sizeof(spec))
        n = sizeof(spec) - 1;
    memcpy(spec, data, n);
    spec[n] = '\0';
    err[0] = '\0';
    rc = tb_ttslat_create_mem(spec, file, flen, 7, &t, err, sizeof(err));
    if (rc == TB_EINVAL && file != NULL) /* perhaps a kind without FILE */
        rc = tb_ttslat_create_mem(spec, NULL, 0, 7, &t, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == TB_EINVAL || rc == TB_ERANGE || rc == TB_EFORMAT ||
               rc == TB_EEMPTY || rc == TB_ETOOBIG || rc == TB_ENOMEM);
    if (rc != 0) {
        FUZZ_CHECK(t == NULL && err[0] != '\0');
        fuzz_safe_line(err, sizeof(err));
        return 0;
    }
    tb_ttslat_info(t, &a);
    FUZZ_CHECK(isfinite(a.p50) && isfinite(a.p90) && a.lo <= a.p50 && a.p50 <= a.p90 &&
               a.p90 <= a.hi && a.lo >= 0 && a.hi <= TB_TTSLAT_MAX);
    FUZZ_CHECK(tb_ttslat_format(t, canon, sizeof(canon)) < (int)sizeof(canon));
    rc = tb_ttslat_create_mem(canon, a.values > 0 ? file : NULL, a.values > 0 ? flen : 0, 7, &u,
                              err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "canonical '%s' rejected: %s\n", canon, err);
    FUZZ_CHECK(rc == 0);
    tb_ttslat_info(u, &b);
    FUZZ_CHECK(a.kind == b.kind && a.p50 == b.p50 && a.p90 == b.p90 && a.values == b.values);
    for (uint32_t j = 1; j <= 64; j++) {
        double x = tb_ttslat_at(t, j);
        FUZZ_CHECK(isfinite(x) && x >= a.lo && x <= a.hi);
        FUZZ_CHECK(x == tb_ttslat_at(u, j));
    }
    for (uint32_t j = 64; j >= 1; j--)
        FUZZ_CHECK(tb_ttslat_at(t, j) == tb_ttslat_at(u, j));
    tb_ttslat_destroy(u);
    tb_ttslat_destroy(t);
    return 0;
}
