/*
 * import_format.c - the table of import formats (see import.h): each is a
 * row, its reader in a file of its own (import_vllm.c: vllm and sglang;
 * import_genai.c; import_aiperf.c: aiperf-raw and aiperf; see
 * import_reader.h), and a file is read in its format: named, or told from
 * its content (import_detect.c) and checked against it.  Adding a format
 * is a row, a reader and an entry in enum tb_import_format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readall.h"
#include "import_detect.h"
#include "import_json.h"
#include "import_reader.h"
#include "ttsbuf/error.h"
#include "ttsbuf/import.h"

static const char *const format_names[TB_IMPORT__COUNT] = {"vllm",       "sglang", "genai-perf",
                                                           "aiperf-raw", "aiperf", "auto"};

static const struct tb_import_reader *const readers[TB_IMPORT_AUTO] = {
    [TB_IMPORT_VLLM] = &tb_import_reader_vllm,
    [TB_IMPORT_SGLANG] = &tb_import_reader_sglang,
    [TB_IMPORT_GENAI_PERF] = &tb_import_reader_genai,
    [TB_IMPORT_AIPERF_RAW] = &tb_import_reader_aiperf_raw,
    [TB_IMPORT_AIPERF] = &tb_import_reader_aiperf,
};

const char *tb_import_format_name(enum tb_import_format f)
{
    return (unsigned)f < TB_IMPORT__COUNT ? format_names[f] : "?";
}

int tb_import_spec(const char *spec, enum tb_import_format *f, const char **path, char *err,
                   size_t errlen)
{
    const char *colon = strchr(spec, ':');
    *f = TB_IMPORT_AUTO;
    *path = spec;
    if (colon != NULL) {
        for (int i = 0; i < TB_IMPORT__COUNT; i++) {
            if ((size_t)(colon - spec) == strlen(format_names[i]) &&
                memcmp(spec, format_names[i], (size_t)(colon - spec)) == 0) {
                *f = (enum tb_import_format)i;
                *path = colon + 1;
                break;
            }
        }
    }
    if (**path == '\0')
        return tb_seterr(err, errlen, TB_EINVAL,
                         "'%s' is not [FORMAT:]FILE with FORMAT one of vllm, sglang, genai-perf, "
                         "aiperf-raw, aiperf, auto",
                         spec);
    return 0;
}

/* Turns TB_IMPORT_AUTO into the format that buf[0..len) (a file's start,
 * or all of it) looks like, and refuses a named format that the content
 * contradicts, saying what the file looks like instead. */
static int resolve_format(enum tb_import_format *f, const char *buf, size_t len, const char *name,
                          char *err, size_t errlen)
{
    const char *what = NULL;
    if (*f == TB_IMPORT_AUTO) {
        if (tb_import_detect(buf, len, f, &what) != 0) {
            if (what != NULL)
                return tb_seterr(err, errlen, TB_EFORMAT, "%s: this looks like %s", name, what);
            return tb_seterr(err, errlen, TB_EFORMAT,
                             "%s: not a benchmark result ttsbuf knows (vllm, sglang, genai-perf, "
                             "aiperf-raw, aiperf); name the format as FORMAT:FILE",
                             name);
        }
    } else if ((unsigned)*f < TB_IMPORT_AUTO && tb_import_mismatch(*f, buf, len, &what)) {
        enum tb_import_format d;
        if (tb_import_detect(buf, len, &d, NULL) != 0)
            return tb_seterr(err, errlen, TB_EFORMAT, "%s: not %s: this looks like %s", name,
                             format_names[*f], what);
        return tb_seterr(err, errlen, TB_EFORMAT, "%s: not %s: this looks like %s; try %s:%s", name,
                         format_names[*f], what, format_names[d], name);
    }
    return 0;
}

static int import_in(enum tb_import_format f, const struct tb_import_in *in, const char *name,
                     struct tb_import *out, char *err, size_t errlen)
{
    size_t before = out->n;
    int rc;
    out->format = f;
    if ((unsigned)f >= TB_IMPORT_AUTO)
        return tb_seterr(err, errlen, TB_EINVAL, "unknown import format");
    rc = readers[f]->read(in, name, out, err, errlen);
    if (rc == 0 && out->n == before)
        rc = tb_seterr(err, errlen, TB_EEMPTY, "%s: no request in the file", name);
    return rc;
}

int tb_import_mem(enum tb_import_format f, const char *buf, size_t len, const char *name,
                  struct tb_import *out, char *err, size_t errlen)
{
    struct tb_import_in in = {buf, len, NULL};
    int rc = resolve_format(&f, buf, len, name, err, errlen);
    return rc != 0 ? rc : import_in(f, &in, name, out, err, errlen);
}

static int jsonl_format(enum tb_import_format f)
{
    return (unsigned)f < TB_IMPORT_AUTO && readers[f]->jsonl;
}

int tb_import_file(enum tb_import_format f, const char *path, struct tb_import *out, char *err,
                   size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    char *buf = NULL;
    size_t len = 0;
    struct stat st;
    int rc = 0, streamed = 0;
    FILE *fp = is_stdin ? stdin : fopen(path, "rb");
    if (fp != NULL && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
        /* A regular file: its first 64 KiB say (or check) the format; a
         * JSONL one is then read a line at a time from the start, never
         * whole. */
        char head[65536];
        size_t n = fread(head, 1, sizeof(head), fp);
        rc = ferror(fp) ? tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno))
                        : resolve_format(&f, head, n, name, err, errlen);
        if (rc == 0 && jsonl_format(f) && fseek(fp, 0, SEEK_SET) != 0)
            rc = tb_seterr(err, errlen, TB_EIO, "%s: %s", name, strerror(errno));
        streamed = rc != 0 || jsonl_format(f);
    } else if (fp != NULL) {
        /* A pipe: a named JSONL format is read a line at a time as it
         * comes (unchecked: what was read cannot be read again); anything
         * else whole, under the cap. */
        streamed = jsonl_format(f);
    }
    if (streamed && rc == 0) {
        struct tb_import_in in = {NULL, 0, fp};
        rc = import_in(f, &in, name, out, err, errlen);
    }
    if (fp != NULL && !is_stdin)
        fclose(fp);
    if (streamed)
        return rc;
    rc = tb_read_path(path, TB_IMPORT_FILE_MAX, "1 GiB import", &buf, &len, &name, err, errlen);
    if (rc != 0)
        return rc;
    rc = tb_import_mem(f, buf, len, name, out, err, errlen);
    free(buf);
    return rc;
}
