/*
 * bench_ttsclient.c - a stream's TTS client as bench makes it (see
 * bench_ttsclient.h).
 */
#include "bench_ttsclient.h"

#include <stdio.h>
#include <string.h>

#include "ttsbuf/ttsws.h"

int tb_bench_tts_client(struct bench *b, const struct xf *x, const char *tag,
                        struct tb_ttsnet **out, char *err, size_t errlen)
{
    struct tb_ttsnet_opts to = *b->o->tts;
    const char *rid = strchr(x->rid, ' ') != NULL ? strchr(x->rid, ' ') + 1 : NULL; /* cC.tT */
    char id[TB_TTSNET_RID_MAX + 1];
    int rc;
    to.clock = &b->mono;
    to.origin = x->t_start;
    to.secrets = b->secrets;
    to.on_audio = NULL;
    to.on_end = NULL;
    to.ud = NULL;
    to.cancel = NULL; /* the loop cancels (tb_bench_tts_cancel) */
    if (rid != NULL && tag != NULL) {
        snprintf(id, sizeof(id), "%s.%s", rid, tag);
        rid = id;
    }
    to.request_id = rid;
    if (to.ws != 0 && b->wsl == NULL) {
        /* The loop's one libwebsockets context, for every WebSocket
         * client of this thread (ttsws.h). */
        rc = tb_ttsws_loop_create(&b->wsl, tb_ttsws_url_tls(to.url), err, errlen);
        if (rc != 0)
            return rc;
    }
    to.ws_loop = b->wsl;
    rc = tb_ttsnet_create(&to, out, err, errlen);
    if (rc == 0)
        b->ntts++;
    return rc;
}
