/*
 * csvflat.c - a JSON object as CSV columns (csvflat.h).
 */
#include "csvflat.h"

#include <cJSON.h>
#include <stdio.h>

static void cell(FILE *f, const cJSON *v)
{
    fputc(',', f);
    if (cJSON_IsNumber(v)) {
        fprintf(f, "%.17g", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        fputs(cJSON_IsTrue(v) ? "true" : "false", f);
    } else if (cJSON_IsString(v)) {
        fputc('"', f);
        for (const char *p = v->valuestring; *p != '\0'; p++) {
            if (*p == '"')
                fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    }
}

size_t tb_cli_csv_flat(FILE *f, const cJSON *o, const char *prefix, int names)
{
    size_t n = 0;
    const cJSON *v;
    if (!cJSON_IsObject(o))
        return 0;
    cJSON_ArrayForEach(v, o)
    {
        char name[256];
        if (cJSON_IsArray(v) || v->string == NULL)
            continue;
        if (prefix != NULL)
            snprintf(name, sizeof(name), "%s_%s", prefix, v->string);
        else
            snprintf(name, sizeof(name), "%s", v->string);
        if (cJSON_IsObject(v)) {
            n += tb_cli_csv_flat(f, v, name, names);
        } else {
            if (f != NULL && names)
                fprintf(f, ",%s", name);
            else if (f != NULL)
                cell(f, v);
            n++;
        }
    }
    return n;
}

void tb_cli_csv_blank(FILE *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(',', f);
}
