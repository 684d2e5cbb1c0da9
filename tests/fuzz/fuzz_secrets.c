/*
 * fuzz_secrets.c - the scrubber (secrets.h) against a brute-force oracle
 * (secrets_oracle.h).
 *
 * Input: 1 byte of settings (1 to 3 secrets), a length byte per secret
 * (0..63), the secrets' bytes, then the text (up to its first NUL).
 * Properties: the text never grows and the returned length is its
 * length; valid UTF-8 stays valid; what is left holds no echo of any
 * secret (no TB_SECRETS_PART characters of one, read through whitespace
 * and escapes, nor a shorter one whole), unless a secret holds the mask
 * character '*' (the masks themselves can then complete an echo, as the
 * first crasher found: secrets.h says so); and a text that held no echo
 * comes out unchanged.  The equal-length mode (tb_secrets_mask) the same,
 * at equal length, whitespace and controls where they were, valid UTF-8
 * with as many code points (a secret holding one of its stand-ins for
 * characters outside ASCII is exempt from the echo check, as one holding
 * '*'); and a masker fed the text in three pieces, cut where the input
 * says, gives the same bytes.
 */
#include <string.h>

#include "fuzz.h"
#include "secrets_oracle.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/utf8.h"

/* Whether a secret holds '*' or a character the equal-length mode
 * writes for one outside ASCII: masks can then complete an echo. */
static int starry_mask(const struct so_text *sec, size_t nsec)
{
    static const char *const stand[] = {"*", "\xc3\x97", "\xe2\x88\x97", "\xf0\x9f\x9e\xb1"};
    for (size_t w = 0; w < 4; w++) {
        struct so_text t = so_read(stand[w], strlen(stand[w]));
        for (size_t k = 0; k < nsec; k++)
            for (size_t i = 0; i < sec[k].n; i++)
                if (sec[k].c[i] == t.c[0]) {
                    so_free(&t);
                    return 1;
                }
        so_free(&t);
    }
    return 0;
}

/* The equal-length mode over orig[0..tl), at once and in three pieces
 * (cut at points taken from `cuts`). */
static void mask_mode(const struct tb_secrets *set, const struct so_text *sec, size_t nsec,
                      const char *orig, size_t tl, uint8_t cuts)
{
    char *text = malloc(tl + 1), *pieces = malloc(tl + 1);
    struct tb_secrets_masker *m;
    struct so_text before, after;
    size_t cut[3] = {tl * (cuts & 7) / 8, tl * (cuts >> 3 & 7) / 8, tl}, had = 0, changed, diff = 0;
    FUZZ_CHECK(text != NULL && pieces != NULL);
    if (cut[1] < cut[0])
        cut[1] = cut[0];
    memcpy(text, orig, tl + 1);
    changed = tb_secrets_mask(set, text, tl);
    FUZZ_CHECK(text[tl] == '\0');
    for (size_t i = 0; i < tl; i++) {
        unsigned char o = (unsigned char)orig[i];
        diff += text[i] != orig[i];
        FUZZ_CHECK(!(o <= ' ' || o == 0x7F) || text[i] == orig[i]);
    }
    FUZZ_CHECK(changed == diff);
    if (tb_utf8_check(orig, tl) == tl)
        FUZZ_CHECK(tb_utf8_check(text, tl) == tl &&
                   tb_utf8_count(text, tl) == tb_utf8_count(orig, tl));
    after = so_read(text, tl);
    FUZZ_CHECK(starry_mask(sec, nsec) || !so_has_echo(&after, sec, nsec));
    before = so_read(orig, tl);
    if (!so_has_echo(&before, sec, nsec))
        FUZZ_CHECK(changed == 0);
    /* In pieces, the buffer holding only what came so far. */
    FUZZ_CHECK(tb_secrets_masker_create(&m) == 0);
    memset(pieces, 0xFF, tl + 1);
    for (size_t k = 0; k < 3; k++) {
        memcpy(pieces + had, orig + had, cut[k] - had);
        had = cut[k];
        tb_secrets_masker_feed(m, set, pieces, had, k == 2);
    }
    FUZZ_CHECK(memcmp(pieces, text, tl) == 0);
    tb_secrets_masker_destroy(m);
    so_free(&before);
    so_free(&after);
    free(pieces);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_secrets *set;
    struct so_text sec[3 * 7], before, after;
    size_t nsec, nforms = 0, len[3], at, tl, out;
    int starry = 0;
    char *text, *orig;
    if (size < 1)
        return 0;
    nsec = 1 + data[0] % 3;
    if (size < 1 + nsec)
        return 0;
    at = 1 + nsec;
    for (size_t k = 0; k < nsec; k++) {
        len[k] = data[1 + k] % 64;
        if (len[k] > size - at)
            len[k] = size - at;
        at += len[k];
    }
    FUZZ_CHECK(tb_secrets_create(&set) == 0);
    at = 1 + nsec;
    for (size_t k = 0; k < nsec; k++) {
        FUZZ_CHECK(tb_secrets_add(set, (const char *)data + at, len[k]) == 0);
        nforms += so_secret_forms((const char *)data + at, len[k], sec + nforms);
        at += len[k];
    }
    for (size_t k = 0; k < nforms; k++)
        for (size_t i = 0; i < sec[k].n; i++)
            starry |= sec[k].c[i] == '*';
    tl = strnlen((const char *)data + at, size - at);
    text = malloc(tl + 1);
    orig = malloc(tl + 1);
    FUZZ_CHECK(text != NULL && orig != NULL);
    memcpy(text, data + at, tl);
    text[tl] = '\0';
    memcpy(orig, text, tl + 1);

    out = tb_secrets_scrub(set, text);
    FUZZ_CHECK(out == strlen(text) && out <= tl);
    if (tb_utf8_check(orig, tl) == tl)
        FUZZ_CHECK(tb_utf8_check(text, out) == out);
    after = so_read(text, out);
    FUZZ_CHECK(starry || !so_has_echo(&after, sec, nforms));
    before = so_read(orig, tl);
    if (!so_has_echo(&before, sec, nforms))
        FUZZ_CHECK(strcmp(text, orig) == 0);
    /* Scrubbing again finds nothing more. */
    FUZZ_CHECK(starry || tb_secrets_scrub(set, text) == out);

    so_free(&before);
    so_free(&after);
    mask_mode(set, sec, nforms, orig, tl, data[0]);
    for (size_t k = 0; k < nforms; k++)
        so_free(&sec[k]);
    free(orig);
    free(text);
    tb_secrets_destroy(set);
    return 0;
}
