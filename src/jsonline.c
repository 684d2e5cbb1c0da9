/*
 * jsonline.c - one JSON object, one line (jsonline.h).
 */
#include "ttsbuf/jsonline.h"

#include <cJSON.h>


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
