/*
 * jsonfield.c - one JSON field into a plain C value (see jsonfield.h).
 */
#include "jsonfield.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ttsbuf/utf8.h"

long long tb_jsonfield_count(const cJSON *v)
{
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15)
        return (long long)v->valuedouble;
    return -1;
}

int tb_jsonfield_num(const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return -1;
    *out = v->valuedouble;
    return 0;
}

void tb_jsonfield_line(char *dst, size_t cap, const cJSON *v)
{
    dst[0] = '\0';
    if (cJSON_IsString(v) && v->valuestring != NULL)
        tb_jsonfield_line_of(v->valuestring, strlen(v->valuestring), dst, cap);
    else if (cJSON_IsNumber(v))
        snprintf(dst, cap, "%g", v->valuedouble);
}

void tb_jsonfield_text(char *dst, size_t cap, const cJSON *v)
{
    dst[0] = '\0';
    if (cJSON_IsString(v) && v->valuestring != NULL)
        tb_utf8_copy(dst, cap, v->valuestring);
}

/* A server's text reaches a one-line error only through here, so it can
 * neither break the line nor send terminal escapes.  Each byte is
 * validated once. */
void tb_jsonfield_line_of(const char *s, size_t n, char *out, size_t outlen)
{
    size_t k = 0, i = 0;
    if (outlen == 0)
        return;
    while (n > 0 && ((unsigned char)*s <= 0x20 || *s == 0x7F)) {
        s++;
        n--;
    }
    while (n > 0 && ((unsigned char)s[n - 1] <= 0x20 || s[n - 1] == 0x7F))
        n--;
    while (i < n) {
        size_t end = i + tb_utf8_check(s + i, n - i);
        while (i < end) {
            unsigned char c = (unsigned char)s[i];
            size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            if (k + len >= outlen)
                goto done;
            if (len == 1 && (c < 0x20 || c == 0x7F)) {
                out[k++] = ' ';
            } else if (len == 2 && c == 0xC2 && (unsigned char)s[i + 1] < 0xA0) {
                out[k++] = ' '; /* U+0080..U+009F */
            } else {
                memcpy(out + k, s + i, len);
                k += len;
            }
            i += len;
        }
        if (i < n) {
            if (k + 1 >= outlen)
                break;
            out[k++] = '?';
            i++;
        }
    }
done:
    /* Cut at the cap, or a C1 control made a space at either end: no
     * blank at either end, as the input is trimmed, so that a line read
     * back from a file this one was written to is the same line. */
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
    if (out[0] == ' ') {
        size_t lead = strspn(out, " ");
        memmove(out, out + lead, k - lead + 1);
    }
}
