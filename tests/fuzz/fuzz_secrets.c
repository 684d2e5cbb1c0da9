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
 * comes out unchanged.
 */
#include <string.h>

#include "fuzz.h"
#include "secrets_oracle.h"
#include "ttsbuf/secrets.h"
#include "ttsbuf/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tb_secrets *set;
    struct so_text sec[3], before, after;
    size_t nsec, len[3], at, tl, out;
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
        sec[k] = so_read((const char *)data + at, len[k]);
        for (size_t i = 0; i < sec[k].n; i++)
            starry |= sec[k].c[i] == '*';
        at += len[k];
    }
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
    FUZZ_CHECK(starry || !so_has_echo(&after, sec, nsec));
    before = so_read(orig, tl);
    if (!so_has_echo(&before, sec, nsec))
        FUZZ_CHECK(strcmp(text, orig) == 0);
    /* Scrubbing again finds nothing more. */
    FUZZ_CHECK(starry || tb_secrets_scrub(set, text) == out);

    so_free(&before);
    so_free(&after);
    for (size_t k = 0; k < nsec; k++)
        so_free(&sec[k]);
    free(orig);
    free(text);
    tb_secrets_destroy(set);
    return 0;
}
