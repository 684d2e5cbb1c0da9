/*
 * jsonline.c - one JSON object, one line, and the members every document
 * writes alike (jsonline.h).
 */
#include "ttsbuf/jsonline.h"

#include <cJSON.h>
#include <math.h>

#include "numfmt.h"
#include "ttsbuf/error.h"

int tb_json_put_line(FILE *f, struct cJSON *o)
{
    char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
    int rc = 0;
    cJSON_Delete(o);
    if (s == NULL)
        return TB_ENOMEM;
    if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
        rc = TB_EIO;
    cJSON_free(s);
    return rc;
}

struct cJSON *tb_json_num(double v)
{
    char buf[40];
    return isfinite(v) ? cJSON_CreateRaw(tb_numfmt_double(buf, sizeof(buf), v))
                       : cJSON_CreateNull();
}

void tb_json_add_num(struct cJSON *o, const char *key, double v)
{
    cJSON_AddItemToObject(o, key, tb_json_num(v));
}

void tb_json_add_error(struct cJSON *o, const char *kind, const char *message, long http_status)
{
    cJSON *e;
    if (kind == NULL) {
        cJSON_AddNullToObject(o, "error");
        return;
    }
    e = cJSON_AddObjectToObject(o, "error");
    if (e == NULL)
        return;
    cJSON_AddStringToObject(e, "kind", kind);
    cJSON_AddStringToObject(e, "message", message != NULL ? message : "");
    tb_json_add_num(e, "http_status", http_status > 0 ? (double)http_status : NAN);
}
