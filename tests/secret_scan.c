/*
 * secret_scan.c - the hostile echoes and the output search of
 * secret_scan.h.
 */
#include <cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/secrets_oracle.h"
#include "secret_scan.h"
#include "tests.h"

/* The ways a hostile server quotes back the key it was sent:
 * whole, its first 14 characters, cut into pieces of 7 by a newline and
 * a space, and with every '-' escaped as \u002d.  json: as the text of a
 * JSON string (the newline escaped: decoded, it reaches output as a
 * space); else raw text, where the escapes reach output as written and a
 * tab and a literal \n cut it. */
void secret_echo_forms(const char *key, int json, char *out, size_t len)
{
    char esc[256];
    size_t k = 0;
    for (const char *c = key; *c != '\0' && k + 7 < sizeof(esc); c++) {
        if (*c == '-') {
            memcpy(esc + k, "\\u002d", 6);
            k += 6;
        } else {
            esc[k++] = *c;
        }
    }
    esc[k] = '\0';
    {
        /* And base64-encoded, as "Basic user:KEY" and the key alone. */
        char basic[300], b64[300];
        unsigned char raw[200];
        size_t kl = strlen(key) < 150 ? strlen(key) : 150;
        memcpy(raw, "user:", 5);
        memcpy(raw + 5, key, kl);
        so_base64(raw, kl + 5, basic);
        so_base64(raw + 5, kl, b64);
        snprintf(out, len, "%s (%.14s...) [%.7s%s%.7s %s] %s Basic %s %s", key, key, key,
                 json ? "\\n" : "\\n\t", key + 7, key + 14, esc, basic, b64);
    }
}

/* The characters of key's base64 (either alphabet) that come from its
 * bits alone, at alignment a (0..2) after other bytes, into out. */
static void base64_core(const char *key, size_t a, int url, char *out)
{
    unsigned char raw[200] = {0};
    char enc[300];
    size_t kl = strlen(key) < 150 ? strlen(key) : 150, first = (8 * a + 5) / 6,
           end = 8 * (a + kl) / 6;
    memcpy(raw + a, key, kl);
    so_base64(raw, a + kl, enc);
    enc[end] = '\0';
    for (char *p = enc; url && *p; p++)
        if (*p == '+' || *p == '/')
            *p = (char)(*p == '+' ? '-' : '_');
    snprintf(out, 300, "%s", enc + first);
}

/* text[0..n) as a reader puts an echo back together: whitespace and the
 * escapes \n \r \t dropped, \u00XX decoded.  malloc'd. */
static char *rejoined(const char *text, size_t n)
{
    char *out = malloc(n + 1);
    size_t k = 0;
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= ' ')
            continue;
        if (c == '\\' && i + 1 < n && strchr("nrt", text[i + 1]) != NULL) {
            i++;
            continue;
        }
        if (c == '\\' && i + 5 < n && text[i + 1] == 'u' && text[i + 2] == '0' &&
            text[i + 3] == '0') {
            char hex[3] = {text[i + 4], text[i + 5], 0};
            out[k++] = (char)strtol(hex, NULL, 16);
            i += 5;
            continue;
        }
        out[k++] = (char)c;
    }
    out[k] = '\0';
    return out;
}

/* Fails when text holds key, or any 8 characters of it, as written or
 * rejoined. */
void secret_assert_unquoted(const char *where, const char *text, size_t n, const char *key)
{
    char *joined = rejoined(text, n);
    size_t kl = strlen(key);
    for (size_t f = 0; f < 6; f++) { /* its base64 forms too */
        char core[300];
        base64_core(key, f / 2, (int)(f % 2), core);
        for (size_t i = 0; i + 8 <= strlen(core); i++) {
            const char *at = NULL;
            char gram[9];
            memcpy(gram, core + i, 8);
            gram[8] = '\0';
            if ((at = strstr(text, gram)) != NULL || (at = strstr(joined, gram)) != NULL)
                fail_msg("%s holds '%s' of the key %s base64-encoded: ...%.120s...", where, gram,
                         key, at);
        }
    }
    for (size_t i = 0; i + 8 <= kl; i++) {
        char gram[9];
        const char *at;
        memcpy(gram, key + i, 8);
        gram[8] = '\0';
        at = strstr(text, gram);
        if (at != NULL)
            fail_msg("%s holds '%s' of the key %s: ...%.120s...", where, gram, key,
                     at > text + 60 ? at - 60 : text);
        at = strstr(joined, gram);
        if (at != NULL)
            fail_msg("%s holds '%s' of the key %s, cut or escaped: ...%.120s...", where, gram, key,
                     at > joined + 60 ? at - 60 : joined);
    }
    free(joined);
}

/* A JSONL file's "text" strings joined (a trace's answer, which a key
 * cut across deltas is spread over), checked as one text. */
static void texts_unquoted(const char *path, const char *text, size_t n, const char *key)
{
    char *joined = malloc(n + 1), where[1100];
    size_t k = 0;
    const char *line = text, *end = text + n;
    assert_non_null(joined);
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t len = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
        cJSON *j = cJSON_ParseWithLength(line, len);
        const cJSON *t = cJSON_GetObjectItem(j, "text");
        if (cJSON_IsString(t)) {
            memcpy(joined + k, t->valuestring, strlen(t->valuestring));
            k += strlen(t->valuestring);
        }
        cJSON_Delete(j);
        line += len + 1;
    }
    joined[k] = '\0';
    snprintf(where, sizeof(where), "%s (its texts joined)", path);
    secret_assert_unquoted(where, joined, k, key);
    free(joined);
}

/* Every file under dir (stdout and stderr included), checked. */
void secret_assert_dir_unquoted(const char *dir, const char *key, int *files)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[1024];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        assert_int_equal(stat(path, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            secret_assert_dir_unquoted(path, key, files);
        } else {
            size_t n;
            char *text = tb_test_slurp_text(path, &n);
            size_t nl = strlen(e->d_name);
            secret_assert_unquoted(path, text, n, key);
            if (nl > 6 && strcmp(e->d_name + nl - 6, ".jsonl") == 0)
                texts_unquoted(path, text, n, key);
            free(text);
            (*files)++;
        }
    }
    closedir(d);
}
