/*
 * fuzz_synth.c - the --synth spec parser (synth.h).
 *
 * The input (up to its first NUL) is a spec.  Properties: parse returns 0
 * or a documented error with a message, and leaves the spec untouched on
 * error; an accepted spec is within the documented ranges, formats to a
 * canonical text that parses back to the identical spec, and (when small)
 * generates a stream whose token count is the spec's and whose times are
 * finite and never decrease.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "ttsbuf/error.h"
#include "ttsbuf/synth.h"

/* Field by field (the struct has padding); doubles bit for bit, -0 too. */
static int same_double(double a, double b)
{
    return a == b && signbit(a) == signbit(b);
}

static int same_spec(const struct tb_synth_spec *a, const struct tb_synth_spec *b)
{
    return same_double(a->tps, b->tps) && same_double(a->ttft, b->ttft) &&
           same_double(a->jitter, b->jitter) && same_double(a->stall_p, b->stall_p) &&
           same_double(a->stall_s, b->stall_s) && a->tokens == b->tokens && a->burst == b->burst &&
           a->seed == b->seed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_synth_spec s, before, again;
    char text[1024], canon[512], err[256];
    size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
    int rc;
    memcpy(text, data, n);
    text[n] = '\0';
    tb_synth_default(&s);
    before = s;
    err[0] = '\0';
    rc = tb_synth_parse(text, &s, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == TB_EINVAL || rc == TB_ERANGE || rc == TB_ETOOBIG);
    if (rc != 0) {
        FUZZ_CHECK(err[0] != '\0' && strnlen(err, sizeof(err)) < sizeof(err));
        FUZZ_CHECK(same_spec(&s, &before));
        return 0;
    }
    FUZZ_CHECK(s.tps >= 0.001 && s.tps <= 100000);
    FUZZ_CHECK(s.ttft >= 0 && s.ttft <= 3600);
    FUZZ_CHECK(s.jitter >= 0 && s.jitter <= 10);
    FUZZ_CHECK(s.stall_p >= 0 && s.stall_p <= 1 && s.stall_s >= 0 && s.stall_s <= 3600);
    FUZZ_CHECK(s.tokens >= 1 && s.tokens <= 10000000 && s.burst >= 1 && s.burst <= 1000);
    FUZZ_CHECK(tb_synth_format(&s, canon, sizeof(canon)) < (int)sizeof(canon));
    tb_synth_default(&again);
    rc = tb_synth_parse(canon, &again, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "canonical '%s' rejected: %s\n", canon, err);
    FUZZ_CHECK(rc == 0);
    FUZZ_CHECK(same_spec(&s, &again));
    if (s.tokens <= 2000) {
        struct tb_stream st;
        uint64_t tokens = 0;
        tb_stream_init(&st);
        FUZZ_CHECK(tb_synth_generate(&s, &st) == 0);
        for (size_t i = 0; i < st.n; i++) {
            FUZZ_CHECK(isfinite(st.ev[i].t) && st.ev[i].t >= 0);
            FUZZ_CHECK(i == 0 || st.ev[i].t >= st.ev[i - 1].t);
            FUZZ_CHECK(st.ev[i].len > 0);
            tokens += st.ev[i].tokens;
        }
        FUZZ_CHECK(tokens == s.tokens);
        tb_stream_free(&st);
    }
    return 0;
}
