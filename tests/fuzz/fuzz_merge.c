/*
 * fuzz_merge.c - `ttsbuf merge` on hostile records files (the command as
 * a user runs it: src/cli/cmd_merge.c over tb_bench_read).
 *
 * Input: up to 8 records files separated by NUL bytes; the first byte
 * chooses the output (human, --json, --csv) and whether a gate is given.
 * Each file is written to a directory of its own under /tmp and the
 * command runs on them with its standard output sent to /dev/null and its
 * standard error to the file "stderr" there (a sanitizer's report on a
 * finding lands in that file too: read it first).  Property: it
 * exits 0 (merged), 1 (a gate failed) or 2 (bad input), never crashes or
 * writes out of bounds (the sanitizers watch), whatever the shard numbers,
 * levels and records say.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "../../src/cli/optdoc.h"
#include "fuzz.h"

#define FILES_MAX 8

static char dir[64];

static void remove_dir(void)
{
    char ep[96];
    snprintf(ep, sizeof(ep), "%s/stderr", dir);
    unlink(ep);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char paths[FILES_MAX][96], *argv[FILES_MAX + 4];
    int argc = 0, nfiles = 0, code, so, se, null;
    size_t pos = 1;
    if (size < 1)
        return 0;
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/ttsbuf-fuzz-merge-%d", (int)getpid());
        FUZZ_CHECK(mkdir(dir, 0700) == 0 || access(dir, W_OK) == 0);
        atexit(remove_dir);
    }
    argv[argc++] = "merge";
    if (data[0] & 1)
        argv[argc++] = (data[0] & 2) ? "--csv" : "--json";
    if (data[0] & 4)
        argv[argc++] = "--require=gapless=1";
    while (pos <= size && nfiles < FILES_MAX) {
        const uint8_t *nul = memchr(data + pos, 0, size - pos);
        size_t n = nul != NULL ? (size_t)(nul - (data + pos)) : size - pos;
        FILE *f;
        snprintf(paths[nfiles], sizeof(paths[nfiles]), "%s/records-%d.jsonl", dir, nfiles);
        f = fopen(paths[nfiles], "wb");
        FUZZ_CHECK(f != NULL);
        FUZZ_CHECK(fwrite(data + pos, 1, n, f) == n);
        FUZZ_CHECK(fclose(f) == 0);
        argv[argc++] = paths[nfiles++];
        pos += n + 1;
    }
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    so = dup(1);
    se = dup(2);
    null = open("/dev/null", O_WRONLY);
    {
        char ep[96];
        int efd;
        snprintf(ep, sizeof(ep), "%s/stderr", dir);
        efd = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        FUZZ_CHECK(so >= 0 && se >= 0 && null >= 0 && efd >= 0);
        dup2(null, 1);
        dup2(efd, 2);
        close(efd);
    }
    code = tb_doc_merge.run(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    close(null);
    FUZZ_CHECK(code == 0 || code == 1 || code == 2);
    for (int i = 0; i < nfiles; i++)
        unlink(paths[i]);
    return 0;
}
