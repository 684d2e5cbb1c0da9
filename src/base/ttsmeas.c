/*
 * ttsmeas.c - the measured TTS records (see ttsmeas.h).
 */
#include "ttsbuf/ttsmeas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "ttsbuf/error.h"
#include "ttsbuf/stream.h"

static const char *const fail_names[TB_TTS_FAIL__COUNT] = {
    "none", "http", "cut", "timeout", "transport", "format", "canceled"};

const char *tb_tts_fail_name(int kind)
{
    return kind >= 0 && kind < TB_TTS_FAIL__COUNT ? fail_names[kind] : "?";
}

int tb_tts_fail_parse(const char *name)
{
    for (int k = 0; k < TB_TTS_FAIL__COUNT; k++)
        if (strcmp(name, fail_names[k]) == 0)
            return k;
    return -1;
}

void tb_tts_log_init(struct tb_tts_log *l)
{
    memset(l, 0, sizeof(*l));
}

void tb_tts_log_free(struct tb_tts_log *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->c[i].arr);
    free(l->c);
    free(l->arena);
    tb_tts_log_init(l);
}

static int arena_put(struct tb_tts_log *l, const char *text, size_t len)
{
    if (l->arena_len + len > l->arena_cap) {
        uint64_t nc = l->arena_cap ? l->arena_cap : 256;
        char *na;
        while (nc < l->arena_len + len)
            nc *= 2;
        if (nc > (uint64_t)SIZE_MAX)
            return TB_ENOMEM;
        na = realloc(l->arena, (size_t)nc);
        if (na == NULL)
            return TB_ENOMEM;
        l->arena = na;
        l->arena_cap = nc;
    }
    if (len > 0)
        memcpy(l->arena + l->arena_len, text, len);
    l->arena_len += len;
    return 0;
}

int tb_tts_log_add(struct tb_tts_log *l, const char *text, size_t len, uint32_t chars,
                   unsigned rate, struct tb_tts_chunk **out)
{
    struct tb_tts_chunk *c;
    uint64_t off = l->arena_len;
    int rc;

    if (len > TB_EVENT_TEXT_MAX || l->n >= UINT32_MAX)
        return TB_ETOOBIG;
    if (l->n == l->cap) {
        struct tb_tts_chunk *nv = tb_grow(l->c, &l->cap, sizeof(*l->c), 16);
        if (nv == NULL)
            return TB_ENOMEM;
        l->c = nv;
    }
    rc = arena_put(l, text, len);
    if (rc != 0)
        return rc;
    c = &l->c[l->n];
    memset(c, 0, sizeof(*c));
    c->chunk = (uint32_t)(l->n + 1);
    c->chars = chars;
    c->text = off;
    c->len = (uint32_t)len;
    c->sent = NAN;
    c->first_byte = NAN;
    c->end = NAN;
    c->lead = NAN;
    c->cap_ready = NAN;
    c->cap_wait = NAN;
    c->rate = rate;
    c->fail = TB_TTS_OK;
    l->n++;
    if (out != NULL)
        *out = c;
    return 0;
}

int tb_tts_blank(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c == ' ' || (c >= '\t' && c <= '\r')) {
            i++;
        } else if (c == 0xC2 && i + 1 < len && (s[i + 1] == 0x85 || s[i + 1] == 0xA0)) {
            i += 2; /* U+0085, U+00A0 */
        } else if (c == 0xE1 && i + 2 < len && s[i + 1] == 0x9A && s[i + 2] == 0x80) {
            i += 3; /* U+1680 */
        } else if (c == 0xE2 && i + 2 < len && s[i + 1] == 0x80 &&
                   (s[i + 2] <= 0x8A || s[i + 2] == 0xA8 || s[i + 2] == 0xA9 || s[i + 2] == 0xAF)) {
            i += 3; /* U+2000..U+200A, U+2028, U+2029, U+202F */
        } else if (c == 0xE2 && i + 2 < len && s[i + 1] == 0x81 && s[i + 2] == 0x9F) {
            i += 3; /* U+205F */
        } else if (c == 0xE3 && i + 2 < len && s[i + 1] == 0x80 && s[i + 2] == 0x80) {
            i += 3; /* U+3000 */
        } else {
            return 0;
        }
    }
    return 1;
}

int tb_tts_chunk_received(struct tb_tts_chunk *c, double t, uint64_t n)
{
    if (n == 0)
        return 0;
    if (isnan(c->first_byte))
        c->first_byte = t;
    c->bytes += n;
    c->duration = c->rate > 0 ? (double)(c->bytes / 2) / (double)c->rate : 0.0;
    /* Within TB_TTS_ARRIVAL_S of the point before the last, the last
     * point moves; else a new one: points stay that far apart. */
    if (c->narr >= 2 && t - c->arr[c->narr - 2].t < TB_TTS_ARRIVAL_S) {
        c->arr[c->narr - 1].t = t;
        c->arr[c->narr - 1].bytes = c->bytes;
        return 0;
    }
    /* The array grows in powers of two from 8: narr is a power of two
     * exactly when it is full. */
    if (c->narr >= 8 && (c->narr & (c->narr - 1)) == 0) {
        struct tb_tts_arrival *na;
        if (c->narr >= UINT32_MAX / 2)
            return TB_ENOMEM;
        na = realloc(c->arr, (size_t)c->narr * 2 * sizeof(*na));
        if (na == NULL)
            return TB_ENOMEM;
        c->arr = na;
    } else if (c->arr == NULL) {
        c->arr = malloc(8 * sizeof(*c->arr));
        if (c->arr == NULL)
            return TB_ENOMEM;
    }
    c->arr[c->narr].t = t;
    c->arr[c->narr].bytes = c->bytes;
    c->narr++;
    return 0;
}

/* Reads samples for the first audible window; sets c->lead there. */
static void lead_scan(struct tb_tts_chunk *c, const unsigned char *b, uint64_t n)
{
    /* a window: rate / 100 samples; audible when its mean square reaches
     * (32768 x 10^(dBFS / 20))^2 */
    uint32_t win = c->rate >= 100 ? c->rate / 100 : 1;
    double full = 32768.0 * pow(10.0, TB_TTS_AUDIBLE_DBFS / 20.0);
    double need = full * full * (double)win;
    for (uint64_t i = 0; i + 1 < n && !c->lead_done; i += 2) {
        double v = (double)(int16_t)(uint16_t)(b[i] | (unsigned)b[i + 1] << 8);
        c->lead_sq += v * v;
        if (++c->lead_n < win)
            continue;
        if (c->lead_sq >= need) {
            c->lead_done = 1;
            c->lead = (double)c->lead_win * (double)win / (double)c->rate;
        }
        c->lead_win++;
        c->lead_n = 0;
        c->lead_sq = 0.0;
    }
}

int tb_tts_chunk_pcm(struct tb_tts_chunk *c, double t, const char *pcm, uint64_t n)
{
    if (!c->lead_done && c->rate > 0)
        lead_scan(c, (const unsigned char *)pcm, n);
    return tb_tts_chunk_received(c, t, n);
}

double tb_tts_arrival_piece_s(const struct tb_tts_chunk *c, uint32_t k)
{
    uint64_t piece = c->arr[k].bytes - (k > 0 ? c->arr[k - 1].bytes : 0);
    return c->rate > 0 ? (double)piece / 2.0 / c->rate : 0.0;
}

int tb_tts_chunk_model(const struct tb_tts_chunk *c, double *lat, double *rtf, double *dur)
{
    if (isnan(c->first_byte) && c->fail == TB_TTS_OK && c->bytes == 0 && !isnan(c->sent) &&
        !isnan(c->end) && c->end >= c->sent) {
        /* complete with nothing to say (a blank chunk, or text a provider
         * speaks as silence): it is "ready" when it ended, and lasts 0 */
        *lat = c->end - c->sent;
        *rtf = 0.0;
        *dur = 0.0;
        return 0;
    }
    if (isnan(c->first_byte) || isnan(c->end) || isnan(c->sent) || c->end < c->first_byte ||
        c->first_byte < c->sent)
        return TB_EINVAL;
    *lat = c->first_byte - c->sent;
    *dur = c->duration;
    *rtf = c->duration > 0 ? (c->end - c->first_byte) / c->duration : 0.0;
    return 0;
}

int tb_tts_stats_of(const struct tb_tts_log *l, struct tb_tts_stats *out)
{
    double *lat = NULL, *rtf = NULL, *cw = NULL;
    size_t nl = 0, nr = 0, nw = 0;

    memset(out, 0, sizeof(*out));
    if (l->n > 0) {
        lat = malloc(l->n * sizeof(*lat));
        rtf = malloc(l->n * sizeof(*rtf));
        cw = malloc(l->n * sizeof(*cw));
        if (lat == NULL || rtf == NULL || cw == NULL) {
            free(lat);
            free(rtf);
            free(cw);
            return TB_ENOMEM;
        }
    }
    out->chunks = (uint32_t)l->n;
    out->audio_s = 0.0;
    for (size_t i = 0; i < l->n; i++) {
        const struct tb_tts_chunk *c = &l->c[i];
        double L, R, D;
        if (tb_tts_blank(tb_tts_log_text(l, i), c->len)) {
            out->skipped++;
        } else if (!isnan(c->sent)) {
            out->sent++;
            out->chars += c->chars;
        }
        if (c->fail == TB_TTS_CANCELED)
            out->canceled++;
        else if (c->fail != TB_TTS_OK)
            out->failed++;
        out->audio_s += c->duration;
        if (!isnan(c->sent) && !isnan(c->first_byte) && c->first_byte >= c->sent)
            lat[nl++] = c->first_byte - c->sent;
        if (tb_tts_chunk_model(c, &L, &R, &D) == 0 && D > 0)
            rtf[nr++] = R;
        if (!isnan(c->cap_wait))
            cw[nw++] = c->cap_wait;
    }
    out->capacity = l->capacity;
    tb_stats_of(cw, nw, &out->cap_wait);
    free(cw);
    if (out->sent == 0)
        out->audio_s = NAN;
    tb_stats_of(lat, nl, &out->first_byte);
    tb_stats_of(rtf, nr, &out->rtf);
    free(lat);
    free(rtf);
    return 0;
}

/* s in out (outlen > 4), cut at the first of stop (a URL's query, say)
 * and, if still longer, at its last space or punctuation before the end
 * with "..." after it: a shortened part of a one-line message ends where
 * a reader sees it was shortened, never inside a word. */
static void fit(const char *s, const char *stop, char *out, size_t outlen)
{
    size_t n = strcspn(s, stop != NULL ? stop : ""), k;
    if (n < outlen) {
        snprintf(out, outlen, "%.*s", (int)n, s);
        return;
    }
    k = outlen - 4;
    while (k > outlen / 2 && strchr(" ,;:/&", s[k]) == NULL)
        k--;
    snprintf(out, outlen, "%.*s...", (int)k, s);
}

uint32_t tb_tts_log_dead(const struct tb_tts_log *l, char *msg, size_t msglen)
{
    const struct tb_tts_chunk *c = NULL;
    char st[24] = "";
    int heard = 0;
    for (size_t i = 0; i < l->n && c == NULL; i++) {
        if (l->c[i].fail != TB_TTS_OK && l->c[i].fail != TB_TTS_CANCELED)
            c = &l->c[i];
        else
            heard |= l->c[i].bytes > 0;
    }
    if (c == NULL || (heard && c->fail != TB_TTS_TRANSPORT))
        return 0;
    if (c->status > 0)
        snprintf(st, sizeof(st), " %ld", c->status);
    if (msglen > 0) {
        /* Within a record's message (TB_END_MESSAGE_MAX): the provider's
         * message and the URL (without its query) shortened, the sentence
         * whole. */
        char m[100], u[56];
        fit(c->message, NULL, m, sizeof(m));
        fit(l->url, "?#", u, sizeof(u));
        snprintf(msg, msglen, "TTS chunk %u: %s%s%s%s (the TTS: %s at %s); the LLM stream was stopped",
                 c->chunk, tb_tts_fail_name(c->fail), st, c->message[0] ? ": " : "", m, l->api, u);
    }
    return c->chunk;
}
