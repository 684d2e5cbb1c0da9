/*
 * html_report.c - the self-contained HTML page (html_report.h).
 *
 * The style and the script are C strings below; the page has no other
 * asset.  The script finds each run's figure (a <section class="tb-run">
 * holding an inline SVG timeline, an <audio> and a gap list), draws a
 * play head over the timeline at data-x0 + t * data-px-per-s (the
 * picture's own scale, see svg.h), and seeks when a gap or the picture is
 * clicked.  It computes no number of the report.
 */
#include "html_report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_wait.h"
#include "cli.h"
#include "outputs.h"
#include "report.h"
#include "report_human.h"
#include "report_json.h"
#include "sweep_out.h"
#include "timeline.h"
#include "tts_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/svg.h"

#define WAV_HEADER 44

static const char css[] =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:1000px;color:#222;padding:0 1em}"
    "h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}"
    "pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:.85em}"
    ".verdict{font-size:1.15em;font-weight:bold}.failed{color:#d62728}"
    ".tb-run svg{max-width:none}.tb-fig{overflow-x:auto}"
    "audio{width:100%;margin:.5em 0}"
    "ol.gaps a{cursor:pointer}ol.gaps a.on{font-weight:bold;color:#d62728}"
    "table{border-collapse:collapse;font-size:.9em}"
    "td,th{padding:.2em .6em;text-align:right;border-bottom:1px solid #ddd}"
    "th{cursor:pointer;background:#f0f0f0}td:first-child,th:first-child{text-align:left}"
    ".note{color:#555;font-size:.9em}kbd{border:1px solid #aaa;border-radius:3px;padding:0 .3em}";

/* The play head, the gap list, the keys and the sortable tables. */
static const char js[] =
    "(function(){'use strict';\n"
    "var NS='http://www.w3.org/2000/svg',runs=[],cur=null;\n"
    "function setup(sec){var svg=sec.querySelector('svg'),au=sec.querySelector('audio');\n"
    " if(!svg||!au)return;var x0=+svg.getAttribute('data-x0'),pps=+svg.getAttribute("
    "'data-px-per-s');\n"
    " var vb=svg.viewBox.baseVal,h=vb&&vb.height?vb.height:+svg.getAttribute('height');\n"
    " var head=document.createElementNS(NS,'line');head.setAttribute('class','playhead');\n"
    " head.setAttribute('y1','0');head.setAttribute('y2',String(h));head.setAttribute('stroke',"
    "'#1f77b4');\n"
    " head.setAttribute('stroke-width','2');svg.appendChild(head);\n"
    " var links=[].slice.call(sec.querySelectorAll('ol.gaps a'));\n"
    " var r={sec:sec,au:au,head:head,links:links,x0:x0,pps:pps};\n"
    " r.draw=function(){var x=x0+au.currentTime*pps;head.setAttribute('x1',x.toFixed(2));"
    "head.setAttribute('x2',x.toFixed(2));\n"
    "  links.forEach(function(a){var s=+a.getAttribute('data-at'),e=s+(+a.getAttribute("
    "'data-len'));\n"
    "   a.classList.toggle('on',au.currentTime>=s&&au.currentTime<e);});};\n"
    " function loop(){r.draw();if(!au.paused)requestAnimationFrame(loop);}\n"
    " au.addEventListener('play',function(){cur=r;loop();});\n"
    " ['timeupdate','seeked','loadedmetadata','pause'].forEach(function(e){au.addEventListener(e,"
    "r.draw);});\n"
    " r.seek=function(t){au.currentTime=Math.max(0,Math.min(t,au.duration||t));r.draw();cur=r;"
    "var p=au.play();if(p&&p.catch)p.catch(function(){});};\n"
    " links.forEach(function(a){a.addEventListener('click',function(ev){ev.preventDefault();"
    "r.seek(+a.getAttribute('data-at')-1);});});\n"
    " svg.addEventListener('click',function(ev){var m=svg.getScreenCTM();if(!m)return;\n"
    "  var x=(ev.clientX-m.e)/m.a;if(x>=x0)r.seek((x-x0)/pps);});\n"
    " r.draw();runs.push(r);}\n"
    "[].forEach.call(document.querySelectorAll('section.tb-run'),setup);\n"
    "function gapAt(r,dir){var t=r.au.currentTime,ts=r.links.map(function(a){return Math.max(0,"
    "+a.getAttribute('data-at')-1);});\n"
    " if(dir>0){for(var i=0;i<ts.length;i++)if(ts[i]>t+0.05)return ts[i];}\n"
    " else{for(var j=ts.length-1;j>=0;j--)if(ts[j]<t-0.5)return ts[j];}return null;}\n"
    "document.addEventListener('keydown',function(ev){var tg=ev.target.tagName;\n"
    " if(tg==='INPUT'||tg==='TEXTAREA'||ev.ctrlKey||ev.metaKey||ev.altKey)return;\n"
    /* Space on a control that takes it itself (the audio element, a
     * <summary>, a link) is left to that control. */
    " if(ev.key===' '&&/^(AUDIO|SUMMARY|A|BUTTON)$/.test(tg))return;\n"
    " var r=cur||runs.find(function(x){return x.sec.offsetParent!==null;})||runs[0];"
    "if(!r)return;\n"
    " var k=ev.key;if(k===' '||k==='k'){ev.preventDefault();cur=r;if(r.au.paused){var "
    "p=r.au.play();"
    "if(p&&p.catch)p.catch(function(){});}else r.au.pause();}\n"
    " else if(k==='n'||k==='p'){var t=gapAt(r,k==='n'?1:-1);if(t!==null)r.seek(t);}});\n"
    "[].forEach.call(document.querySelectorAll('a[href^=\"#s-\"]'),function(a){a.addEventListener("
    "'click',function(){var d=document.getElementById(a.getAttribute('href').slice(1));"
    "if(d)d.open=true;});});\n"
    "[].forEach.call(document.querySelectorAll('table.sortable'),function(tb){\n"
    " [].forEach.call(tb.tHead.rows[0].cells,function(th,ci){if(!th.hasAttribute('data-sort'))"
    "return;\n"
    "  th.title='click to sort';th.addEventListener('click',function(){var body=tb.tBodies[0],"
    "rows=[].slice.call(body.rows);\n"
    "   var dir=th.getAttribute('data-dir')==='desc'?1:-1;th.setAttribute('data-dir',dir>0?'asc':"
    "'desc');\n"
    "   rows.sort(function(a,b){var x=a.cells[ci].getAttribute('data-v'),y=b.cells[ci]."
    "getAttribute('data-v');\n"
    "    if(x===''&&y==='')return 0;if(x==='')return 1;if(y==='')return -1;return dir*(+x-+y);});\n"
    "   rows.forEach(function(r){body.appendChild(r);});});});});\n"
    "})();\n";

static const char csp[] = "default-src 'none'; style-src 'unsafe-inline'; "
                          "script-src 'unsafe-inline'; media-src data:; img-src data:";

FILE *tb_cli_html_mem(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    return open_memstream(buf, len);
}

void tb_cli_html_text(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

void tb_cli_html_begin(FILE *f, const char *kind, const char *title)
{
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n"
            "<meta name=\"viewport\" content=\"width=device-width\">\n<title>",
            csp);
    tb_cli_html_text(f, title);
    fprintf(f, "</title>\n<style>%s</style></head>\n<body data-kind=\"%s\">\n<h1>", css, kind);
    tb_cli_html_text(f, title);
    fputs("</h1>\n", f);
}

void tb_cli_html_svg(FILE *f, const char *svg, size_t n)
{
    const char *p = svg, *end = svg + n;
    if (n > 5 && memcmp(p, "<?xml", 5) == 0) {
        const char *q = memchr(p, '>', n);
        if (q != NULL)
            p = q + 1;
    }
    while (p < end && (*p == '\n' || *p == '\r'))
        p++;
    fwrite(p, 1, (size_t)(end - p), f);
}

void tb_cli_html_json(FILE *f, const char *id, const char *json)
{
    fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
    /* '<' only occurs inside JSON strings, where \u003c means the same:
     * no "</script>" or "<!--" in a string can end the element. */
    for (const char *p = json; *p != '\0'; p++) {
        if (*p == '<')
            fputs("\\u003c", f);
        else
            fputc(*p, f);
    }
    fputs("</script>\n", f);
}

static uint32_t get_le(const unsigned char *b, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static void put_le(unsigned char *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

/* Base64 (RFC 4648) of in[0..n) into out (4 characters per 3 bytes, the
 * last group padded); returns the characters written. */
static size_t b64(char *out, const unsigned char *in, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        size_t k = n - i < 3 ? n - i : 3;
        uint32_t v = (uint32_t)in[i] << 16;
        if (k > 1)
            v |= (uint32_t)in[i + 1] << 8;
        if (k > 2)
            v |= in[i + 2];
        out[o++] = a[(v >> 18) & 63];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = a[v & 63];
        if (k < 3)
            out[o - 1] = '=';
        if (k < 2)
            out[o - 2] = '=';
    }
    return o;
}

/* Input bytes encoded at a time: a multiple of 3, so only the last block
 * is padded; one fwrite per 64 KiB of text, not per 4 characters. */
#define B64_BLOCK ((size_t)3 * 16384)

/* Writes the header h and the next `data` bytes of w as base64.  Returns
 * 0, TB_EIO (w ended early) or TB_ENOMEM. */
static int b64_wav(FILE *f, const unsigned char *h, FILE *w, uint64_t data)
{
    unsigned char *in = malloc(B64_BLOCK);
    char *out = malloc(B64_BLOCK / 3 * 4);
    size_t have = WAV_HEADER;
    int rc = in == NULL || out == NULL ? TB_ENOMEM : 0;
    if (rc == 0)
        memcpy(in, h, WAV_HEADER);
    while (rc == 0) {
        size_t want = B64_BLOCK - have;
        if (want > data)
            want = (size_t)data;
        if (want > 0 && fread(in + have, 1, want, w) != want) {
            rc = TB_EIO;
            break;
        }
        have += want;
        data -= want;
        fwrite(out, 1, b64(out, in, have), f);
        if (data == 0)
            break;
        have = 0;
    }
    free(out);
    free(in);
    return rc;
}

/* The <audio> element of the run's WAV, its data cut at max_s (the render
 * for the page itself keeps no more): read and encoded a block at a time,
 * in 112 KiB of buffers. */
static int audio_element(FILE *f, const struct tb_cli_audio *a, double max_s, char *err,
                         size_t errlen)
{
    unsigned char h[WAV_HEADER];
    const char *what;
    uint32_t rate, data;
    uint64_t cap;
    int cut, rc;
    FILE *w = tb_cli_audio_wav_open(a, &what);
    if (w == NULL) {
        snprintf(err, errlen, "cannot read the rendered audio %s", what);
        return TB_EIO;
    }
    if (fread(h, 1, WAV_HEADER, w) != WAV_HEADER || memcmp(h, "RIFF", 4) != 0 ||
        memcmp(h + 8, "WAVEfmt ", 8) != 0 || get_le(h + 20, 2) != 1 || get_le(h + 22, 2) != 1 ||
        get_le(h + 34, 2) != 16 || memcmp(h + 36, "data", 4) != 0 || get_le(h + 24, 4) == 0) {
        tb_cli_audio_wav_close(a, w);
        snprintf(err, errlen, "%s is not a 16-bit mono PCM WAV file", what);
        return TB_EIO;
    }
    rate = get_le(h + 24, 4);
    data = get_le(h + 40, 4);
    cap = (uint64_t)(max_s * rate) * 2;
    /* Cut by the render (it kept max_s of a longer run), or here. */
    cut = a->res.end_audio * rate > data / 2.0 + 1;
    if (data > cap) {
        data = (uint32_t)cap;
        cut = 1;
        put_le(h + 40, data, 4);
        put_le(h + 4, 36 + data, 4);
    }
    fprintf(f,
            "<audio controls preload=\"auto\" data-rate=\"%u\" data-frames=\"%u\" "
            "src=\"data:audio/wav;base64,",
            rate, data / 2);
    rc = b64_wav(f, h, w, data);
    tb_cli_audio_wav_close(a, w);
    if (rc != 0) {
        snprintf(err, errlen, rc == TB_ENOMEM ? "out of memory" : "%s ended early", what);
        return rc;
    }
    fputs("\"></audio>\n", f);
    fprintf(f,
            "<p class=\"note\">Audio: the run as a listener would have heard it (%s, leading "
            "silence, gaps and stall cue included): 16-bit mono PCM WAV, %u Hz, %.3f s%s.</p>\n",
            a->pcm_rate != 0 ? "the TTS's own audio, each 20 ms frame when its last byte arrived"
                             : "eSpeak NG on the stream's clock",
            rate, data / 2.0 / rate,
            !isnan(a->res.cut_s) ? ""
            : cut                ? ", cut here (the page keeps at most 600 s)"
                                 : "");
    if (!isnan(a->res.cut_s))
        fprintf(f,
                "<p class=\"note\">The audio was cut at %.3f s: it reached its cap of %.0f s "
                "(--audio-max); the numbers and the picture are the whole run's.</p>\n",
                a->res.cut_s, a->max_s > 0 ? a->max_s : TB_AUDIO_MAX_DEFAULT_S);
    return 0;
}

/* The gap list of one run (its links carry the numbers the script uses). */
static void gap_list(FILE *f, const struct tb_audio_gap_s *gaps, size_t ngaps)
{
    fprintf(f, "<h3>Gaps heard (%zu)</h3>\n", ngaps);
    if (ngaps == 0) {
        fputs("<p>None: the audio never ran dry.</p>\n", f);
        return;
    }
    fputs("<p class=\"note\">Click a gap to hear it from one second before. Keys: "
          "<kbd>space</kbd> or <kbd>k</kbd> play/pause, <kbd>n</kbd> next gap, <kbd>p</kbd> "
          "previous gap.</p>\n<ol class=\"gaps\">\n",
          f);
    for (size_t i = 0; i < ngaps; i++)
        fprintf(f,
                "<li><a href=\"#\" data-at=\"%.9g\" data-len=\"%.9g\">at %.3f s: %.3f s of "
                "silence%s</a></li>\n",
                gaps[i].at, gaps[i].len, gaps[i].at, gaps[i].len,
                gaps[i].len >= TB_INTERRUPT_S ? " (interruption)" : "");
    fputs("</ol>\n", f);
}

/* With a TTS stage, after the gaps heard: the model's gaps, each with its
 * cause (the audio plays the stage's schedule; the causes are the
 * model's). */
static void model_gap_list(FILE *f, const struct tb_gap_list *gaps)
{
    fprintf(f, "<h3>Gaps in the model (%zu)</h3>\n", gaps->n);
    fputs("<p class=\"note\">Cause: <b>llm</b>, the chunk's text had not arrived; <b>tts</b>, "
          "it had and its audio had not (the TTS stage's latency or a busy engine).</p>\n",
          f);
    if (gaps->n == 0) {
        fputs("<p>None: the audio never ran dry.</p>\n", f);
        return;
    }
    fputs("<ol class=\"gaps\">\n", f);
    for (size_t i = 0; i < gaps->n; i++) {
        const struct tb_play *g = &gaps->v[i];
        double at = g->start - g->gap;
        fprintf(f,
                "<li data-at=\"%.9g\" data-len=\"%.9g\" data-cause=\"%s\">at %.3f s: %.3f s of "
                "silence%s before chunk %u: %s (llm %.3f s, tts %.3f s)</li>\n",
                at, g->gap, tb_cli_gap_cause(g), at, g->gap,
                g->gap >= TB_INTERRUPT_S ? " (interruption)" : "", g->chunk, tb_cli_gap_cause(g),
                g->gap_llm, g->gap_tts);
    }
    fputs("</ol>\n", f);
}

/* The human report's verdict line, without "verdict: " (a failed run's
 * "no verdict: ..." line whole). */
static void verdict_line(FILE *f, const char *report)
{
    const char *p = strstr(report, "\nverdict: ");
    const char *e;
    if (p != NULL)
        p += strlen("\nverdict: ");
    else if ((p = strstr(report, "\nno verdict: ")) != NULL)
        p++;
    else
        return;
    e = strchr(p, '\n');
    fputs("<p class=\"verdict\">", f);
    for (; *p != '\0' && p != e; p++) {
        char c[2] = {*p, '\0'};
        tb_cli_html_text(f, c);
    }
    fputs("</p>\n", f);
}

int tb_cli_html_wait(FILE *f, const char *heading, const char *title, const struct tb_svg_wait *b,
                     size_t n)
{
    char *svg = NULL;
    size_t len = 0, any = 0;
    FILE *m;
    int rc;
    for (size_t i = 0; i < n; i++)
        any += isfinite(b[i].total);
    if (any == 0)
        return 0;
    if ((m = tb_cli_html_mem(&svg, &len)) == NULL)
        return TB_ENOMEM;
    rc = tb_svg_wait(m, title, b, n);
    if (fclose(m) != 0 || rc != 0) {
        free(svg);
        return TB_ENOMEM;
    }
    if (heading != NULL)
        fprintf(f, "<h3>%s</h3>\n", heading);
    fputs("<div class=\"tb-fig\">", f);
    tb_cli_html_svg(f, svg, len);
    fputs("</div>\n", f);
    free(svg);
    return 0;
}

void tb_cli_html_live_note(FILE *f, const struct tb_tts_log *tts, const char *provider)
{
    if (tts == NULL)
        return;
    fputs("<p class=\"note live-tts\">The TTS was live: ", f);
    tb_cli_html_text(f, tts->api[0] ? tts->api : "?");
    fputs(" at <code>", f);
    tb_cli_html_text(f, tts->url[0] ? tts->url : "?");
    fputs("</code>", f);
    if (tts->mock)
        fputs(" (ttsbuf's built-in mock TTS)", f);
    fputs(". Its numbers are measured: when each chunk's first byte and the rest of its audio "
          "arrived, and its leading silence on the audio as it came. Its audio was not kept, so "
          "this page has none, and no list of the gaps a listener heard; the wait and the "
          "timeline are drawn from the measured arrivals, not from a model of the TTS.",
          f);
    if (provider != NULL && strcmp(provider, "mock") == 0)
        fputs(" The LLM was a mock: ttsbuf's built-in mock provider.", f);
    fputs("</p>\n", f);
}

int tb_cli_html_run_figure(FILE *f, const struct tb_cli_html_run_info *h, const char *suffix,
                           char *err, size_t errlen)
{
    char *rep = NULL, *svg = NULL, *json = NULL, id[64];
    size_t replen, svglen, jsonlen;
    FILE *m;
    int rc = TB_ENOMEM, svgrc;

    snprintf(err, errlen, "out of memory");
    if ((m = tb_cli_html_mem(&rep, &replen)) == NULL)
        goto out;
    tb_cli_report_human(m, h->src, h->o, h->r, h->gaps, h->max_gaps, h->live);
    tb_cli_audio_report(m, h->au, h->o, h->r, h->max_gaps);
    if (fclose(m) != 0)
        goto out;
    if ((m = tb_cli_html_mem(&svg, &svglen)) == NULL)
        goto out;
    svgrc = h->r->play.chunks > 0
                ? tb_cli_timeline_svg(m, h->src, h->o, h->s, h->all, h->r, h->live)
                : TB_EINVAL;
    if (fclose(m) != 0 || svgrc == TB_ENOMEM) {
        rc = TB_ENOMEM;
        goto out;
    }
    if ((m = tb_cli_html_mem(&json, &jsonlen)) == NULL)
        goto out;
    rc = tb_cli_report_json(m, h->src, h->o, h->r, h->gaps, h->live, h->au, NULL);
    if (fclose(m) != 0 || rc != 0) {
        rc = TB_ENOMEM;
        goto out;
    }
    fputs("<section class=\"tb-run\">\n", f);
    verdict_line(f, rep);
    fprintf(f, "<p class=\"note\">Voice model: %s (every number, the picture%s).</p>\n",
            tb_voice_model(h->o->voice), h->au->sink == TB_SINK_WAV ? " and the audio" : "");
    if (h->au->sink != TB_SINK_WAV) /* a live TTS's timings kept, not its audio */
        tb_cli_html_live_note(f, h->s->tts, h->s->provider);
    fputs("<div class=\"tb-fig\">", f);
    if (svgrc == 0)
        tb_cli_html_svg(f, svg, svglen);
    else
        fputs("<p>No timeline: no chunk of text was complete when the stream ended.</p>", f);
    fputs("</div>\n", f);
    {
        struct tb_svg_wait w;
        tb_cli_wait_bar(&w, "this turn", &h->r->lat);
        if (tb_cli_html_wait(f, "Where the wait went",
                             "From the caller's last word to the first audible sound", &w, 1) != 0) {
            rc = TB_ENOMEM;
            goto out;
        }
    }
    if (h->au->sink == TB_SINK_WAV) {
        rc = audio_element(f, h->au, TB_HTML_AUDIO_MAX_S, err, errlen);
        if (rc != 0)
            goto out;
    }
    if (h->au->sink == TB_SINK_WAV) /* else none was heard: none is listed */
        gap_list(f, h->au->gaps, h->au->ngaps);
    if (tb_playout_has_stage(&h->o->play))
        model_gap_list(f, h->gaps);
    fprintf(f, "<h3>Report</h3>\n<pre id=\"report%s\">", suffix);
    tb_cli_html_text(f, rep);
    fputs("</pre>\n<p class=\"note\">The same result as <code>--json</code> gives is embedded "
          "in the page as JSON.</p>\n",
          f);
    snprintf(id, sizeof(id), "result%s", suffix);
    tb_cli_html_json(f, id, json);
    fputs("</section>\n", f);
    rc = 0;
out:
    free(json);
    free(svg);
    free(rep);
    return rc;
}

void tb_cli_html_end(FILE *f)
{
    fprintf(f, "<script>%s</script>\n</body></html>\n", js);
}

static int failed(const struct tb_cli_html_run_info *h)
{
    return h->live != NULL && h->live->error_kind != NULL;
}

/* What failed, first on the page, and what arrived before it. */
static void failure_heading(FILE *f, const struct tb_cli_html_run_info *h)
{
    const struct tb_report_live *l = h->live;
    char st[32] = "";
    if (l->http_status > 0)
        snprintf(st, sizeof(st), " (HTTP %ld)", l->http_status);
    fputs("<h2 class=\"failed\" id=\"failure\">The request failed: ", f);
    tb_cli_html_text(f, l->error_kind);
    fputs(st, f);
    fputs("</h2>\n<p class=\"failed\">", f);
    tb_cli_html_text(f, l->error != NULL ? l->error : "");
    fputs("</p>\n", f);
    if (h->r->content_events == 0)
        fputs("<p>Nothing arrived: no event, no chunk, no audio. The report below says what "
              "is known.</p>\n",
              f);
    else
        fprintf(f,
                "<p>What arrived before it: %zu event%s, %llu token%s, %u chunk%s; there is no "
                "verdict and no minimum TPS for a stream that did not complete.</p>\n",
                h->r->content_events, h->r->content_events == 1 ? "" : "s",
                (unsigned long long)h->r->content_tokens, h->r->content_tokens == 1 ? "" : "s",
                h->r->play.chunks, h->r->play.chunks == 1 ? "" : "s");
}

int tb_cli_html_run(const char *path, const struct tb_cli_html_run_info *h)
{
    char title[700], err[512];
    int rc;
    FILE *f = tb_cli_output_open("--html", path, &rc);
    if (f == NULL)
        return rc;
    snprintf(title, sizeof(title), "ttsbuf %s: %s%s %s", h->cmd, failed(h) ? "FAILED: " : "",
             h->src->kind, h->src->name);
    tb_cli_html_begin(f, h->cmd, title);
    if (failed(h))
        failure_heading(f, h);
    rc = tb_cli_html_run_figure(f, h, "", err, sizeof(err));
    if (rc != 0) {
        tb_cli_error("--html: %s", err);
        fclose(f);
        return rc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
    }
    tb_cli_html_end(f);
    return tb_cli_out_close("--html", path, f, ferror(f) ? TB_EIO : 0);
}

/* A <pre> of text (escaped), with an id when id is not NULL. */
static void pre(FILE *f, const char *id, const char *text, size_t n)
{
    char *t = strndup(text, n);
    if (id != NULL)
        fprintf(f, "<pre id=\"%s\">", id);
    else
        fputs("<pre>", f);
    if (t != NULL)
        tb_cli_html_text(f, t);
    free(t);
    fputs("</pre>\n", f);
}

int tb_cli_html_sweep(FILE *f, const struct tb_sweep *sw, const struct tb_cli_sweep_info *ri)
{
    char *svg = NULL, *tab = NULL, *json = NULL;
    size_t svglen, tablen, jsonlen;
    const char *inv;
    int rc = TB_ENOMEM;
    FILE *m;

    if ((m = tb_cli_html_mem(&svg, &svglen)) == NULL)
        goto out;
    rc = tb_svg_sweep(m, sw, "ttsbuf sweep: how much buffer?", ri->wait);
    if (fclose(m) != 0 || rc != 0)
        goto out;
    rc = TB_ENOMEM;
    if ((m = tb_cli_html_mem(&tab, &tablen)) == NULL)
        goto out;
    tb_cli_sweep_print_table(m, sw, ri);
    if (fclose(m) != 0)
        goto out;
    if ((m = tb_cli_html_mem(&json, &jsonlen)) == NULL)
        goto out;
    rc = tb_cli_sweep_write_json(m, sw, ri);
    if (fclose(m) != 0 || rc != 0)
        goto out;

    tb_cli_html_begin(f, "sweep", "ttsbuf sweep: how much buffer?");
    /* The table's text ends with the inverse answers, after a blank line. */
    inv = strstr(tab, "\n\n  smallest");
    if (inv == NULL)
        inv = strstr(tab, "\n\n  (");
    fputs("<h2>Inverse answers</h2>\n", f);
    if (inv != NULL)
        pre(f, "inverse", inv + 2, strlen(inv + 2));
    else
        fputs("<p>None: give --target-gapless for the smallest pre-roll and TPS that reach a "
              "share.</p>\n",
              f);
    fputs("<h2>Tuning picture</h2>\n<div class=\"tb-fig\">", f);
    tb_cli_html_svg(f, svg, svglen);
    fputs("</div>\n<h2>Table</h2>\n", f);
    pre(f, "report", tab, inv != NULL ? (size_t)(inv - tab) : tablen);
    tb_cli_html_json(f, "result", json);
    tb_cli_html_end(f);
    rc = ferror(f) ? TB_EIO : 0;
out:
    free(json);
    free(tab);
    free(svg);
    return rc;
}
