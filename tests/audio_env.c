/*
 * audio_env.c - the headless audio test harness (see audio_env.h): ALSA's
 * file plugin, a private PulseAudio with a pipe sink drained by a thread,
 * WAV/raw loading, silence analysis and a sox cross-check.
 *
 * Test support, not library code: it forks (posix_spawn) and sets the
 * environment, which src/ never does.  It reports through a message buffer
 * and never asserts, so the cases decide what is a failure and what a skip.
 */
#include "audio_env.h"

#include "ttsbuf/speaker.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PATH_CAP 512 /* every path the harness builds */

static int env_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int env_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- stderr noise ------------------------------------------------------ */

int tb_audio_quiet(void)
{
    return tb_speaker_quiet();
}

/* ---- environment and files --------------------------------------------- */

/* An environment variable as it was before the harness set it. */
struct saved_env {
    const char *name;
    char *old; /* NULL: was unset */
};

static int env_set(struct saved_env *s, const char *name, const char *value)
{
    const char *old = getenv(name);
    s->name = name;
    s->old = old != NULL ? strdup(old) : NULL;
    return setenv(name, value, 1);
}

static void env_restore(struct saved_env *s)
{
    if (s->name == NULL)
        return;
    if (s->old != NULL)
        setenv(s->name, s->old, 1);
    else
        unsetenv(s->name);
    free(s->old);
    s->name = NULL;
    s->old = NULL;
}

static const char *audio_dir(void)
{
    const char *d = getenv("TB_AUDIODIR");
    return d != NULL && *d != '\0' ? d : "audio";
}

int tb_audio_conf(const char *name, char *out, size_t cap, char *err, size_t errlen)
{
    const char *dir = audio_dir();
    char cwd[PATH_CAP];
    int n;
    if (dir[0] == '/')
        n = snprintf(out, cap, "%s/%s", dir, name);
    else if (getcwd(cwd, sizeof(cwd)) != NULL)
        n = snprintf(out, cap, "%s/%s/%s", cwd, dir, name);
    else
        return env_fail(err, errlen, "getcwd: %s", strerror(errno));
    if (n < 0 || (size_t)n >= cap)
        return env_fail(err, errlen, "%s/%s: path too long", dir, name);
    if (access(out, R_OK) != 0)
        return env_fail(err, errlen, "%s: %s (set TB_AUDIODIR to the audio/ directory)", out,
                        strerror(errno));
    return 0;
}

/* dir/name into out, or -1 when it does not fit. */
static int path_join(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int make_tmpdir(char *out, size_t cap, const char *tag, char *err, size_t errlen)
{
    const char *t = getenv("TMPDIR");
    int n = snprintf(out, cap, "%s/tb-%s.XXXXXX", t != NULL && *t != '\0' ? t : "/tmp", tag);
    if (n < 0 || (size_t)n >= cap)
        return env_fail(err, errlen, "TMPDIR too long");
    if (mkdtemp(out) == NULL)
        return env_fail(err, errlen, "mkdtemp %s: %s", out, strerror(errno));
    return 0;
}

/* Removes a directory tree (no symlinks followed). */
static void rm_tree(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    d = opendir(path);
    if (d != NULL) {
        while ((de = readdir(d)) != NULL) {
            char sub[PATH_CAP];
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
            rm_tree(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

/* ---- ALSA file path ---------------------------------------------------- */

struct tb_audio_file {
    char dir[PATH_CAP];
    char wav[PATH_CAP];
    struct saved_env conf_env, wav_env;
};

int tb_audio_file_create(struct tb_audio_file **out, char *err, size_t errlen)
{
    struct tb_audio_file *f = calloc(1, sizeof(*f));
    char conf[PATH_CAP];
    *out = NULL;
    if (f == NULL)
        return env_fail(err, errlen, "out of memory");
    if (tb_audio_conf("asoundrc-file", conf, sizeof(conf), err, errlen) != 0 ||
        make_tmpdir(f->dir, sizeof(f->dir), "alsa", err, errlen) != 0) {
        free(f);
        return -1;
    }
    if (path_join(f->wav, sizeof(f->wav), f->dir, "capture.wav") != 0 ||
        env_set(&f->conf_env, "ALSA_CONFIG_PATH", conf) != 0 ||
        env_set(&f->wav_env, "TTSBUF_ALSA_WAV", f->wav) != 0) {
        tb_audio_file_destroy(f);
        return env_fail(err, errlen, "setenv: %s", strerror(errno));
    }
    *out = f;
    return 0;
}

const char *tb_audio_file_wav(const struct tb_audio_file *f)
{
    return f->wav;
}

void tb_audio_file_destroy(struct tb_audio_file *f)
{
    if (f == NULL)
        return;
    env_restore(&f->wav_env);
    env_restore(&f->conf_env);
    rm_tree(f->dir);
    free(f);
}

/* ---- PulseAudio pipe path ---------------------------------------------- */

struct tb_audio_pulse {
    char dir[PATH_CAP];
    char socket[PATH_CAP];
    char server[PATH_CAP + 8];
    char fifo[PATH_CAP];
    char capture[PATH_CAP];
    char log[PATH_CAP];
    pid_t pid; /* 0: not running */
    int fifo_fd, out_fd;
    pthread_t reader;
    int reader_running;
    int reader_errno; /* written by the reader, read after join */
    struct saved_env server_env, conf_env;
};

/* Float32 stereo frames (the sink's format) to s16 of channel 0; returns
 * the bytes of s16 written into out.  A partial frame stays in buf. */
static size_t to_s16(unsigned char *buf, size_t *have, unsigned char *out)
{
    size_t nf = *have / 8, n = 0;
    for (size_t i = 0; i < nf; i++) {
        float f;
        memcpy(&f, buf + 8 * i, sizeof(f));
        long v = lrintf(f * 32767.0f);
        int16_t s = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
        memcpy(out + n, &s, 2);
        n += 2;
    }
    memmove(buf, buf + nf * 8, *have - nf * 8);
    *have -= nf * 8;
    return n;
}

/* Copies the FIFO to the capture file until the server closes it (EOF),
 * keeping channel 0 as s16le. */
static void *pulse_reader(void *arg)
{
    struct tb_audio_pulse *p = arg;
    unsigned char buf[16384 + 8], s16[16384 / 4];
    size_t have = 0;
    for (;;) {
        ssize_t got = read(p->fifo_fd, buf + have, sizeof(buf) - 8 - have);
        if (got == 0)
            break;
        if (got < 0) {
            if (errno == EINTR)
                continue;
            p->reader_errno = errno;
            break;
        }
        have += (size_t)got;
        got = (ssize_t)to_s16(buf, &have, s16);
        for (ssize_t off = 0; off < got;) {
            ssize_t w = write(p->out_fd, s16 + off, (size_t)(got - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                p->reader_errno = w < 0 ? errno : EIO;
                return NULL;
            }
            off += w;
        }
    }
    return NULL;
}

/* The full path of an executable found on $PATH, or -1. */
static int find_exe(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    const char *p = path != NULL && *path != '\0' ? path : "/usr/bin:/bin";
    while (*p != '\0') {
        size_t n = strcspn(p, ":");
        snprintf(out, cap, "%.*s/%s", (int)n, p, name);
        if (n > 0 && access(out, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}

/* The last non-empty line of the server's log, for error messages. */
static void log_tail(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[512];
    snprintf(out, cap, "(no log)");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] != '\0')
            snprintf(out, cap, "%.*s", (int)(cap - 1), line);
    }
    fclose(f);
}

static int socket_ready(const char *path)
{
    struct sockaddr_un sa;
    int fd, ok;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path))
        return 0;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return ok;
}

/* Spawns the server with a minimal environment of its own: HOME,
 * XDG_RUNTIME_DIR, XDG_CONFIG_HOME and PULSE_RUNTIME_PATH all in p->dir, so
 * it touches nothing of the user's, finds no session bus (D-Bus would look
 * in $XDG_RUNTIME_DIR/bus) and runs fine as root. */
static int pulse_spawn(struct tb_audio_pulse *p, const char *exe, const char *conf, char *err,
                       size_t errlen)
{
    char e_path[PATH_CAP + 8], e_home[PATH_CAP + 8], e_xdg[PATH_CAP + 24], e_cfg[PATH_CAP + 24],
        e_rt[PATH_CAP + 24];
    const char *path = getenv("PATH");
    char *envp[] = {e_path, e_home, e_xdg, e_cfg, e_rt, "LC_ALL=C", NULL};
    char *argv[] = {(char *)exe,
                    "-n",
                    "-F",
                    (char *)conf,
                    "--daemonize=no",
                    "--system=no",
                    "--use-pid-file=no",
                    "--exit-idle-time=-1",
                    "--realtime=no",
                    "--high-priority=no",
                    "--log-target=stderr",
                    "--log-level=notice",
                    NULL};
    posix_spawn_file_actions_t fa;
    int rc;
    snprintf(e_path, sizeof(e_path), "PATH=%s", path != NULL ? path : "/usr/bin:/bin");
    snprintf(e_home, sizeof(e_home), "HOME=%s", p->dir);
    snprintf(e_xdg, sizeof(e_xdg), "XDG_RUNTIME_DIR=%s", p->dir);
    snprintf(e_cfg, sizeof(e_cfg), "XDG_CONFIG_HOME=%s/config", p->dir);
    snprintf(e_rt, sizeof(e_rt), "PULSE_RUNTIME_PATH=%s", p->dir);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, p->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    rc = posix_spawn(&p->pid, exe, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        p->pid = 0;
        return env_fail(err, errlen, "cannot start %s: %s", exe, strerror(rc));
    }
    return 0;
}

int tb_audio_pulse_start(struct tb_audio_pulse **out, char *err, size_t errlen)
{
    struct tb_audio_pulse *p;
    char exe[PATH_CAP], conf[PATH_CAP], aconf[PATH_CAP];
    int rc;
    *out = NULL;
    if (find_exe("pulseaudio", exe, sizeof(exe)) != 0) {
        env_fail(err, errlen, "pulseaudio is not installed (Debian: pulseaudio)");
        return TB_AUDIO_UNAVAILABLE;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return env_fail(err, errlen, "out of memory");
    p->fifo_fd = p->out_fd = -1;
    if (tb_audio_conf("pulse-pipe.pa", conf, sizeof(conf), err, errlen) != 0 ||
        tb_audio_conf("asoundrc-pulse", aconf, sizeof(aconf), err, errlen) != 0 ||
        make_tmpdir(p->dir, sizeof(p->dir), "pulse", err, errlen) != 0) {
        free(p);
        return -1;
    }
    /* The socket path must fit a sockaddr_un (108 bytes). */
    if (path_join(p->socket, 100, p->dir, "native") != 0 ||
        path_join(p->fifo, sizeof(p->fifo), p->dir, "ttsbuf-pipe") != 0 ||
        path_join(p->capture, sizeof(p->capture), p->dir, "capture.raw") != 0 ||
        path_join(p->log, sizeof(p->log), p->dir, "pulseaudio.log") != 0) {
        env_fail(err, errlen, "%s: temporary directory path too long (TMPDIR)", p->dir);
        goto fail;
    }
    snprintf(p->server, sizeof(p->server), "unix:%s", p->socket);

    if (pulse_spawn(p, exe, conf, err, errlen) != 0)
        goto fail;
    /* The socket is created by the last module of the script: once it
     * accepts connections, the pipe sink and its FIFO exist. */
    for (int i = 0;; i++) {
        int status;
        if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
            char tail[400];
            p->pid = 0;
            log_tail(p->log, tail, sizeof(tail));
            env_fail(err, errlen, "pulseaudio exited at start-up: %s", tail);
            goto fail;
        }
        if (socket_ready(p->socket))
            break;
        if (i == 500) {
            env_fail(err, errlen, "pulseaudio: no socket %s after 5 s", p->socket);
            goto fail;
        }
        sleep_ms(10);
    }
    /* Non-blocking open cannot hang even if the writer has just gone;
     * the reads themselves block. */
    p->fifo_fd = open(p->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (p->fifo_fd < 0) {
        env_fail(err, errlen, "%s: %s", p->fifo, strerror(errno));
        goto fail;
    }
    if (fcntl(p->fifo_fd, F_SETFL, fcntl(p->fifo_fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        env_fail(err, errlen, "fcntl %s: %s", p->fifo, strerror(errno));
        goto fail;
    }
    p->out_fd = open(p->capture, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (p->out_fd < 0) {
        env_fail(err, errlen, "%s: %s", p->capture, strerror(errno));
        goto fail;
    }
    rc = pthread_create(&p->reader, NULL, pulse_reader, p);
    if (rc != 0) {
        env_fail(err, errlen, "pthread_create: %s", strerror(rc));
        goto fail;
    }
    p->reader_running = 1;
    if (env_set(&p->server_env, "PULSE_SERVER", p->server) != 0 ||
        env_set(&p->conf_env, "ALSA_CONFIG_PATH", aconf) != 0) {
        env_fail(err, errlen, "setenv: %s", strerror(errno));
        goto fail;
    }
    *out = p;
    return 0;
fail:
    tb_audio_pulse_destroy(p);
    return -1;
}

const char *tb_audio_pulse_server(const struct tb_audio_pulse *p)
{
    return p->server;
}

const char *tb_audio_pulse_capture(const struct tb_audio_pulse *p)
{
    return p->capture;
}

int tb_audio_pulse_stop(struct tb_audio_pulse *p, char *err, size_t errlen)
{
    int rc = 0;
    if (p->pid > 0) {
        int status, i;
        kill(p->pid, SIGTERM);
        for (i = 0; i < 500 && waitpid(p->pid, &status, WNOHANG) != p->pid; i++)
            sleep_ms(10);
        if (i == 500) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &status, 0);
        }
        p->pid = 0;
    }
    /* With the only writer gone, the reader sees end of file. */
    if (p->reader_running) {
        pthread_join(p->reader, NULL);
        p->reader_running = 0;
        if (p->reader_errno != 0)
            rc = env_fail(err, errlen, "draining %s: %s", p->fifo, strerror(p->reader_errno));
    }
    if (p->fifo_fd >= 0)
        close(p->fifo_fd);
    if (p->out_fd >= 0)
        close(p->out_fd);
    p->fifo_fd = p->out_fd = -1;
    return rc;
}

void tb_audio_pulse_destroy(struct tb_audio_pulse *p)
{
    if (p == NULL)
        return;
    tb_audio_pulse_stop(p, NULL, 0);
    env_restore(&p->conf_env);
    env_restore(&p->server_env);
    rm_tree(p->dir);
    free(p);
}

/* ---- loading ------------------------------------------------------------ */

/* The whole file, capped at TB_PCM_MAX_BYTES. */
static int read_file(const char *path, unsigned char **buf, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    size_t n;
    *buf = NULL;
    *len = 0;
    if (f == NULL)
        return env_fail(err, errlen, "%s: %s", path, strerror(errno));
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return env_fail(err, errlen, "%s: not a regular file", path);
    }
    if ((unsigned long long)st.st_size > TB_PCM_MAX_BYTES) {
        fclose(f);
        return env_fail(err, errlen, "%s: %lld bytes, over the %zu-byte cap", path,
                        (long long)st.st_size, TB_PCM_MAX_BYTES);
    }
    *buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
    if (*buf == NULL) {
        fclose(f);
        return env_fail(err, errlen, "out of memory");
    }
    n = fread(*buf, 1, (size_t)st.st_size, f);
    fclose(f);
    if (n != (size_t)st.st_size) {
        free(*buf);
        *buf = NULL;
        return env_fail(err, errlen, "%s: short read", path);
    }
    *len = n;
    return 0;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static unsigned le16(const unsigned char *b)
{
    return (unsigned)b[0] | (unsigned)b[1] << 8;
}

/* Copies channel 0 of interleaved s16le frames. */
static int take_s16(const unsigned char *data, size_t bytes, unsigned channels, unsigned rate,
                    struct tb_pcm *out, char *err, size_t errlen)
{
    size_t stride = 2 * (size_t)channels, n = bytes / stride;
    out->s = malloc(n > 0 ? n * sizeof(int16_t) : 1);
    if (out->s == NULL)
        return env_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < n; i++)
        out->s[i] = (int16_t)le16(data + i * stride);
    out->n = n;
    out->rate = rate;
    return 0;
}

int tb_pcm_load_wav(const char *path, struct tb_pcm *out, char *err, size_t errlen)
{
    unsigned char *b;
    size_t len, off = 12;
    unsigned channels = 0, rate = 0, bits = 0, format = 0;
    int have_fmt = 0, rc = -1;
    memset(out, 0, sizeof(*out));
    if (read_file(path, &b, &len, err, errlen) != 0)
        return -1;
    if (len < 12 || memcmp(b, "RIFF", 4) != 0 || memcmp(b + 8, "WAVE", 4) != 0) {
        env_fail(err, errlen, "%s: not a RIFF/WAVE file", path);
        goto done;
    }
    /* Walk the chunks; "fmt " must come before "data". */
    while (off + 8 <= len) {
        uint32_t size = le32(b + off + 4);
        const unsigned char *body = b + off + 8;
        size_t avail = len - off - 8;
        if (memcmp(b + off, "fmt ", 4) == 0) {
            if (size < 16 || avail < 16) {
                env_fail(err, errlen, "%s: byte %zu: truncated fmt chunk", path, off);
                goto done;
            }
            format = le16(body);
            channels = le16(body + 2);
            rate = le32(body + 4);
            bits = le16(body + 14);
            /* WAVE_FORMAT_EXTENSIBLE: the sub-format's first two bytes. */
            if (format == 0xFFFE && size >= 26 && avail >= 26)
                format = le16(body + 24);
            have_fmt = 1;
        } else if (memcmp(b + off, "data", 4) == 0) {
            if (!have_fmt) {
                env_fail(err, errlen, "%s: byte %zu: data chunk before fmt", path, off);
                goto done;
            }
            if (format != 1 || bits != 16 || channels < 1 || channels > 8 || rate == 0) {
                env_fail(
                    err, errlen,
                    "%s: format %u, %u bits, %u channels, %u Hz: need 16-bit PCM, 1-8 channels",
                    path, format, bits, channels, rate);
                goto done;
            }
            /* 0 or past the end: the header was never completed. */
            if (size == 0 || size > avail)
                size = (uint32_t)avail;
            rc = take_s16(body, size, channels, rate, out, err, errlen);
            goto done;
        }
        if (size > avail)
            break;
        off += 8 + (size_t)size + (size & 1);
    }
    env_fail(err, errlen, "%s: no data chunk", path);
done:
    free(b);
    return rc;
}

int tb_pcm_load_raw(const char *path, unsigned rate, struct tb_pcm *out, char *err, size_t errlen)
{
    unsigned char *b;
    size_t len;
    int rc;
    memset(out, 0, sizeof(*out));
    if (rate == 0)
        return env_fail(err, errlen, "%s: rate 0", path);
    if (read_file(path, &b, &len, err, errlen) != 0)
        return -1;
    rc = take_s16(b, len, 1, rate, out, err, errlen);
    free(b);
    return rc;
}

void tb_pcm_free(struct tb_pcm *p)
{
    if (p == NULL)
        return;
    free(p->s);
    memset(p, 0, sizeof(*p));
}

/* ---- analysis ----------------------------------------------------------- */

int tb_pcm_shape(const struct tb_pcm *p, int threshold, double min_len, struct tb_pcm_gap *gaps,
                 size_t cap, struct tb_audio_shape *shape, char *err, size_t errlen)
{
    size_t first = 0, last = 0, run = 0, i;
    int any = 0;
    double rate;
    memset(shape, 0, sizeof(*shape));
    if (p == NULL || p->rate == 0 || (p->s == NULL && p->n > 0) || threshold < 0 ||
        !(min_len > 0) || (gaps == NULL && cap > 0))
        return env_fail(err, errlen, "tb_pcm_shape: bad arguments");
    rate = (double)p->rate;
    shape->duration = (double)p->n / rate;
    shape->first_sound = shape->last_sound = -1;
    for (i = 0; i < p->n; i++) {
        int v = p->s[i] < 0 ? -(int)p->s[i] : p->s[i];
        if (v <= threshold) {
            run++;
            continue;
        }
        if (!any) {
            any = 1;
            first = i;
        } else if (run > 0 && (double)run / rate >= min_len) {
            if (shape->ngaps < cap) {
                gaps[shape->ngaps].start = (double)(i - run) / rate;
                gaps[shape->ngaps].len = (double)run / rate;
            }
            shape->ngaps++;
            shape->silence += (double)run / rate;
        }
        run = 0;
        last = i + 1;
    }
    if (any) {
        shape->first_sound = (double)first / rate;
        shape->last_sound = (double)last / rate;
    }
    return 0;
}

/* ---- sox ---------------------------------------------------------------- */

/* The number after "label" in sox's stat output, or -1. */
static int stat_field(const char *text, const char *label, double *v)
{
    const char *p = strstr(text, label);
    char *end;
    if (p == NULL)
        return -1;
    p += strlen(label);
    *v = strtod(p, &end);
    return end == p ? -1 : 0;
}

int tb_audio_sox_stat(const char *path, unsigned raw_rate, double *length, double *max_amp,
                      char *err, size_t errlen)
{
    char exe[PATH_CAP], rate[32], out[8192];
    char *argv[16];
    int pipefd[2], argc = 0, status, rc = -1;
    size_t n = 0;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    if (find_exe("sox", exe, sizeof(exe)) != 0) {
        env_fail(err, errlen, "sox is not installed (Debian: sox)");
        return TB_AUDIO_UNAVAILABLE;
    }
    argv[argc++] = exe;
    if (raw_rate > 0) {
        snprintf(rate, sizeof(rate), "%u", raw_rate);
        argv[argc++] = "-t";
        argv[argc++] = "raw";
        argv[argc++] = "-r";
        argv[argc++] = rate;
        argv[argc++] = "-e";
        argv[argc++] = "signed";
        argv[argc++] = "-b";
        argv[argc++] = "16";
        argv[argc++] = "-c";
        argv[argc++] = "1";
    }
    argv[argc++] = (char *)path;
    argv[argc++] = "-n";
    argv[argc++] = "stat";
    argv[argc] = NULL;
    if (pipe(pipefd) != 0)
        return env_fail(err, errlen, "pipe: %s", strerror(errno));
    /* stat prints on stderr; both go to the pipe. */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    status = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (status != 0) {
        close(pipefd[0]);
        return env_fail(err, errlen, "cannot run %s: %s", exe, strerror(status));
    }
    for (;;) {
        char sink[1024];
        ssize_t got;
        /* Keep the first sizeof(out) - 1 bytes; read the rest away. */
        if (n < sizeof(out) - 1)
            got = read(pipefd[0], out + n, sizeof(out) - 1 - n);
        else
            got = read(pipefd[0], sink, sizeof(sink));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (n < sizeof(out) - 1)
            n += (size_t)got;
    }
    out[n] = '\0';
    close(pipefd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        out[strcspn(out, "\n")] = '\0';
        env_fail(err, errlen, "sox %s: %s", path, out);
    } else {
        double len = 0, amp = 0;
        if (stat_field(out, "Length (seconds):", &len) != 0 ||
            stat_field(out, "Maximum amplitude:", &amp) != 0) {
            env_fail(err, errlen, "sox %s: no Length/Maximum amplitude in its stat output", path);
        } else {
            if (length != NULL)
                *length = len;
            if (max_amp != NULL)
                *max_amp = amp;
            rc = 0;
        }
    }
    return rc;
}
