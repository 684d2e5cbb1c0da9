/*
 * outputs.c - writing what a command outputs (see outputs.h): a path
 * checked before the work, a write ended with its error named, standard
 * output whose reader went away, and a stream recorded as a trace.
 */
#include "outputs.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "jsonout.h"
#include "turn_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/trace.h"

int tb_cli_output_probe(const char *opt, const char *path)
{
    struct stat st;
    int fd;
    if (strcmp(path, "-") == 0)
        return 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            tb_cli_error("%s: %s: %s", opt, path, strerror(EISDIR));
            return TB_EINVAL;
        }
        if (access(path, W_OK) != 0) {
            tb_cli_error("%s: %s: %s", opt, path, strerror(errno));
            return TB_EINVAL;
        }
        return 0;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
        tb_cli_error("%s: %s: %s", opt, path, strerror(errno));
        return TB_EINVAL;
    }
    close(fd);
    unlink(path);
    return 0;
}

FILE *tb_cli_output_open(const char *opt, const char *path, int *rc)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    *rc = 0;
    if (f == NULL) {
        tb_cli_error("%s: cannot write %s: %s", opt, path, strerror(errno));
        *rc = TB_EINVAL;
    }
    return f;
}

int tb_cli_stdout_gone(void)
{
    /* errno may have been overwritten since the write that failed; a
     * pipe whose reader has gone reports POLLERR on its write end. */
    struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
    if (!ferror(stdout))
        return 0;
    return errno == EPIPE || (poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0);
}

static int s_stdout_errno;

int tb_cli_flush_stdout(void)
{
    /* a write that failed before (a report longer than the buffer): its
     * errno, still here when the writer's last call was the failed one */
    if (ferror(stdout) && s_stdout_errno == 0 && errno != 0)
        s_stdout_errno = errno;
    errno = 0;
    if (fflush(stdout) == 0)
        return 0;
    if (s_stdout_errno == 0)
        s_stdout_errno = errno;
    return EOF;
}

int tb_cli_stdout_errno(void)
{
    return s_stdout_errno;
}

int tb_cli_out_close(const char *flag, const char *path, FILE *f, int rc)
{
    /* A writer that returns TB_EIO stopped at a failed write, whose errno
     * is still here; a failed close sets its own. */
    int e = rc == TB_EIO ? errno : 0;
    errno = 0;
    if (f == stdout ? fflush(f) != 0 : fclose(f) != 0) {
        if (rc == 0 || errno != 0)
            e = errno;
        if (rc == 0)
            rc = TB_EIO;
    }
    if (rc == 0)
        return 0;
    if (f == stdout) {
        errno = e;
        if (tb_cli_stdout_gone())
            return 0; /* the reader went away: quietly (main.c) */
    }
    tb_cli_error("%s: writing %s failed: %s", flag, path,
                 rc == TB_EIO && e != 0 ? strerror(e) : tb_strerror(rc));
    return rc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
}

int tb_cli_record(const char *path, const char *command, const struct tb_sim_opts *o,
                  const struct tb_cli_tts *tts, const struct tb_cli_turn *turn,
                  const struct tb_stream *s)
{
    struct tb_stream h = *s; /* a view with this run's head; owns nothing */
    cJSON *opts;
    char *otext = NULL;
    int rc;
    FILE *f = tb_cli_output_open("--record", path, &rc);
    if (f == NULL)
        return rc;
    opts = cJSON_CreateObject();
    if (h.started_at[0] == '\0') {
        snprintf(h.started_at, sizeof(h.started_at), "%s", tb_cli_started_at());
        snprintf(h.command, sizeof(h.command), "%s", command);
    }
    /* A trace that came with its own head keeps it: the options are this
     * command's only when this command made the recording. */
    if (opts != NULL && strcmp(h.command, command) == 0) {
        tb_cli_json_playout(opts, o);
        if (h.tts != NULL) {
            /* A real TTS spoke the stream (run --tts-url): its timings are
             * in the trace, as the report says, not the options' model. */
            cJSON_DeleteItemFromObjectCaseSensitive(opts, "voice_model");
            cJSON_DeleteItemFromObjectCaseSensitive(opts, "tts_latency_s");
            cJSON_AddNullToObject(opts, "tts_latency_s");
            cJSON_AddStringToObject(opts, "voice_model", "measured");
        } else {
            tb_cli_json_tts(opts, tts); /* the model sim of it replays */
        }
        if (turn != NULL && turn->lead != NULL)
            cJSON_AddStringToObject(opts, "tts_lead", turn->lead_spec);
        otext = cJSON_PrintUnformatted(opts);
    }
    cJSON_Delete(opts);
    rc = otext != NULL ? tb_trace_write_opts(f, &h, otext) : tb_trace_write(f, &h);
    cJSON_free(otext);
    return tb_cli_out_close("--record", path, f, rc);
}
