/*
 * serve_fds.h - `serve`'s file descriptors (serve_fds.c): what the
 * connection cap needs (tb_serve_fds_needed: one a connection and the
 * server's own) beside those open now, and the soft limit raised toward
 * the hard one for them and for the refusals over the cap, which only
 * take what is left.
 *
 * Thread: the command's, before the server starts.  Errors are printed
 * (the CLI layer).
 */
#ifndef TTSBUF_CLI_SERVE_FDS_H
#define TTSBUF_CLI_SERVE_FDS_H

struct tb_serve_opts;

/* Raises the limit for so's cap.  An explicit cap (explicit_cap) the hard
 * limit cannot hold is refused: TB_EINVAL, said; the default is lowered
 * to what it holds (so->max_conns), with a warning.  0 otherwise. */
int tb_cli_serve_fd_limit(struct tb_serve_opts *so, int explicit_cap);

#endif
