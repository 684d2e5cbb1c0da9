/*
 * loopback.c - whether a host or a URL's host is this machine's loopback
 * (see http.h): `serve` warns when it binds elsewhere, and `bench` leaves
 * a CPU to a server on loopback.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ttsbuf/http.h"

int tb_host_is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    char buf[64];
    size_t n = strlen(host);
    if (strcasecmp(host, "localhost") == 0)
        return 1;
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']' && n - 2 < sizeof(buf)) {
        memcpy(buf, host + 1, n - 2);
        buf[n - 2] = '\0';
        host = buf;
    }
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

int tb_url_is_loopback(const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL;
    int yes = u != NULL && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && tb_host_is_loopback(host);
    curl_free(host);
    curl_url_cleanup(u);
    return yes;
}
