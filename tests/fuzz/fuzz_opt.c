/*
 * fuzz_opt.c - the CLI's number options (src/cli/cli.c: tb_cli_number_double,
 * tb_cli_number_size), which every numeric flag goes through.
 *
 * Input: 1 byte choosing a range, then the argument text (up to its first
 * NUL).  Properties: 0 means the value is within the range and the whole
 * text was a number (strtod/strtoull agree on the value); otherwise
 * TB_EINVAL or TB_ERANGE, *out untouched, and a message on one line naming
 * the flag.  Neither accepts leading blanks; a whole number never accepts
 * a sign.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "../../src/cli/cli.h"
#include "fuzz.h"
#include "ttsbuf/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        double lo, hi;
    } dr[4] = {{0, 60}, {0.001, 3600}, {20, 1000}, {-1e308, 1e308}};
    static const struct {
        size_t lo, hi;
    } zr[4] = {{1, 100000}, {2, (size_t)1 << 30}, {0, (size_t)-1}, {1, 10000000}};
    char text[256], err[512];
    size_t n, z = 12345;
    double d = -7.5;
    int rc, k;
    if (size < 1)
        return 0;
    k = data[0] & 3;
    n = size - 1 < sizeof(text) - 1 ? size - 1 : sizeof(text) - 1;
    memcpy(text, data + 1, n);
    text[n] = '\0';

    err[0] = '\0';
    rc = tb_cli_number_double("--flag", text, dr[k].lo, dr[k].hi, &d, err, sizeof(err));
    if (rc == 0) {
        char *end;
        FUZZ_CHECK(isfinite(d) && d >= dr[k].lo && d <= dr[k].hi);
        FUZZ_CHECK(strtod(text, &end) == d && *end == '\0');
        FUZZ_CHECK(!isspace((unsigned char)text[0]));
    } else {
        FUZZ_CHECK(rc == TB_EINVAL || rc == TB_ERANGE);
        FUZZ_CHECK(d == -7.5);
        FUZZ_CHECK(strncmp(err, "--flag: ", 8) == 0);
    }

    err[0] = '\0';
    rc = tb_cli_number_size("--count", text, zr[k].lo, zr[k].hi, &z, err, sizeof(err));
    if (rc == 0) {
        FUZZ_CHECK(z >= zr[k].lo && z <= zr[k].hi);
        FUZZ_CHECK(isdigit((unsigned char)text[0]));
        FUZZ_CHECK(strtoull(text, NULL, 10) == z);
    } else {
        FUZZ_CHECK(rc == TB_EINVAL || rc == TB_ERANGE);
        FUZZ_CHECK(z == 12345);
        FUZZ_CHECK(strncmp(err, "--count: ", 9) == 0);
    }
    return 0;
}
