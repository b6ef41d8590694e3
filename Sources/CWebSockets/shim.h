#ifndef ROOMD_CWEBSOCKETS_SHIM_H
#define ROOMD_CWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <signal.h>
#include <string.h>
#include <malloc.h>  /* malloc_trim: give freed heap back after traffic bursts */

/* Swift does not import function-like or padded macros: re-export them. */
enum { CWS_PRE = LWS_PRE };

static inline struct lws_protocols cws_protocol_list_term(void) {
    struct lws_protocols term; memset(&term, 0, sizeof term); /* LWS_PROTOCOL_LIST_TERM (4.2+) */
    return term;
}

/* lws_sul_schedule with the cancel sentinel, which Swift cannot spell. */
static inline void cws_sul_cancel(struct lws_context *ctx, lws_sorted_usec_list_t *sul) {
    lws_sul_schedule(ctx, 0, sul, NULL, LWS_SET_TIMER_USEC_CANCEL);
}

/* libev (epoll), for lws' libev event loop (LWS_SERVER_OPTION_LIBEV with a
 * "foreign" loop the caller turns): thin wrappers, so Swift sees no macros. */
#include <ev.h>

static inline void *cws_ev_loop_new(void) { return ev_loop_new(EVFLAG_AUTO); }
/* One turn: wait for events (or a wake-up), handle them, return. */
static inline int cws_ev_run_once(void *loop) { return ev_run((struct ev_loop *)loop, EVRUN_ONCE); }
static inline void cws_ev_loop_destroy(void *loop) { ev_loop_destroy((struct ev_loop *)loop); }
/* EVBACKEND_EPOLL is 4. */
static inline unsigned cws_ev_backend(void *loop) { return ev_backend((struct ev_loop *)loop); }

/* A listening socket roomd owns (SO_REUSEPORT: several service threads or
 * processes on one port), watched on the same libev loop lws runs on. The
 * callback runs on the loop's thread each time the socket is readable. */
#include <stdlib.h>
typedef void (*cws_io_callback)(void *data);
struct cws_io { ev_io io; cws_io_callback callback; void *data; };
static void cws_io_fired(struct ev_loop *loop, ev_io *io, int revents) {
    (void)loop; (void)revents;
    struct cws_io *watcher = (struct cws_io *)io;
    watcher->callback(watcher->data);
}
static inline void *cws_io_start_events(void *loop, int fd, int events, cws_io_callback callback, void *data) {
    struct cws_io *watcher = (struct cws_io *)calloc(1, sizeof *watcher);
    if (!watcher) return NULL;
    watcher->callback = callback;
    watcher->data = data;
    ev_io_init(&watcher->io, cws_io_fired, fd, events);
    ev_io_start((struct ev_loop *)loop, &watcher->io);
    return watcher;
}
static inline void *cws_io_start(void *loop, int fd, cws_io_callback callback, void *data) {
    return cws_io_start_events(loop, fd, EV_READ, callback, data);
}
/* The same for a socket roomd writes itself (an answer the kernel did not
 * take whole, RequestHeads.swift): the callback runs when it is writable. */
static inline void *cws_io_start_writable(void *loop, int fd, cws_io_callback callback, void *data) {
    return cws_io_start_events(loop, fd, EV_WRITE, callback, data);
}
static inline void cws_io_stop(void *loop, void *watcher) {
    ev_io_stop((struct ev_loop *)loop, &((struct cws_io *)watcher)->io);
    free(watcher);
}
/* accept4 (a GNU extension Swift's Glibc does not show): a non-blocking,
 * close-on-exec socket with Nagle off, as lws' own accept sets it up. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
int accept4(int, struct sockaddr *, socklen_t *, int);
static inline int cws_accept(int fd) {
    int socket = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (socket >= 0) {
        int one = 1;
        setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return socket;
}
enum { CWS_PORT_NO_LISTEN_SERVER = CONTEXT_PORT_NO_LISTEN_SERVER };

/* permessage-deflate (RFC 7692; PROTOCOL.md section 1, docs/ARCHITECTURE.md).
 * roomd compresses each push once itself (zlib, below) and writes the frames
 * raw, so lws' extension only negotiates and inflates what clients send. Two
 * lws 4.1.6 bugs are worked around here (docs/ARCHITECTURE.md, Transport):
 * 1. lws finishes inflating a message larger than its 1 KiB chunk in a later
 *    service pass, reading from the thread's shared read buffer, which
 *    another connection's read may have overwritten by then (fixed upstream
 *    in 4.3): the wrapper hands zlib a private copy of each input chunk;
 * 2. the server role's context-takeover flags are swapped: roomd answers
 *    both no_context_takeover flags (cws_pmd_amend_response) and sets lws'
 *    option so that its inflater is reset after every message. */
#include <zlib.h>
#include <stdio.h>

/* = lws' private struct lws_ext_pm_deflate_rx_ebufs (lws 4.1.6). */
struct cws_pmd_ebufs { struct lws_tokens eb_in, eb_out; };
struct cws_pmd { void *priv; unsigned char *copy; };

static inline int cws_pmd_callback(struct lws_context *ctx, const struct lws_extension *ext, struct lws *wsi,
                                   enum lws_extension_callback_reasons reason, void *user, void *in, size_t len) {
    struct cws_pmd *w = (struct cws_pmd *)user;
    int n;
    switch ((int)reason) {
    case LWS_EXT_CB_CONSTRUCT:
    case LWS_EXT_CB_CLIENT_CONSTRUCT:
        if ((n = lws_extension_callback_pm_deflate(ctx, ext, wsi, reason, user, in, len)))
            return n;
        w = (struct cws_pmd *)calloc(1, sizeof *w);
        if (!w) {
            lws_extension_callback_pm_deflate(ctx, ext, wsi, LWS_EXT_CB_DESTROY, *(void **)user, NULL, 0);
            return -1;
        }
        w->priv = *(void **)user;
        *(void **)user = w;
        return 0;
    case LWS_EXT_CB_DESTROY:
        if (!w)
            return 0;
        n = lws_extension_callback_pm_deflate(ctx, ext, wsi, reason, w->priv, in, len);
        free(w->copy);
        free(w);
        return n;
    case LWS_EXT_CB_PAYLOAD_RX: {
        struct cws_pmd_ebufs *b = (struct cws_pmd_ebufs *)in;
        if (b->eb_in.token && b->eb_in.len > 0) { /* new input: zlib reads a private copy */
            unsigned char *c = (unsigned char *)malloc((size_t)b->eb_in.len);
            if (!c)
                return -1;
            memcpy(c, b->eb_in.token, (size_t)b->eb_in.len);
            b->eb_in.token = c;
            n = lws_extension_callback_pm_deflate(ctx, ext, wsi, reason, w->priv, in, len);
            if (b->eb_in.len > 0) { /* kept while zlib still reads it */
                free(w->copy);
                w->copy = c;
            } else
                free(c);
            return n;
        }
        n = lws_extension_callback_pm_deflate(ctx, ext, wsi, reason, w->priv, in, len); /* a drain */
        if (b->eb_in.len <= 0 && w->copy) {
            free(w->copy);
            w->copy = NULL;
        }
        return n;
    }
    default:
        return lws_extension_callback_pm_deflate(ctx, ext, wsi, reason, w ? w->priv : user, in, len);
    }
}

/* The server's extensions: permessage-deflate through the wrapper. */
static inline const struct lws_extension *cws_pmd_extensions(void) {
    static const struct lws_extension extensions[] = {
        {"permessage-deflate", cws_pmd_callback, "permessage-deflate; client_max_window_bits"},
        {NULL, NULL, NULL},
    };
    return extensions;
}

/* LWS_CALLBACK_ADD_HEADERS of a WebSocket upgrade: when the response's last
 * line is lws' "Sec-WebSocket-Extensions: permessage-deflate...", adds the
 * no_context_takeover flags it lacks. Returns 1 when the line now has both,
 * 0 when there is no such line or no room. */
static inline int cws_pmd_amend_response(void *in) {
    struct lws_process_html_args *args = (struct lws_process_html_args *)in;
    static const char name[] = "Sec-WebSocket-Extensions: permessage-deflate";
    char *end = args->p, *line;
    int room;
    if (!end || end[-2] != '\r' || end[-1] != '\n')
        return 0;
    line = end - 2;
    while (line > end - 300 && line[-1] != '\n')
        line--;
    if ((size_t)(end - 2 - line) < sizeof name - 1 || strncmp(line, name, sizeof name - 1))
        return 0;
    int server = 0, client = 0;
    for (char *c = line; c < end - 2; c++) {
        if (!strncmp(c, "server_no_context_takeover", 26)) server = 1;
        if (!strncmp(c, "client_no_context_takeover", 26)) client = 1;
    }
    room = args->max_len;
    if (room < 64)
        return 0;
    end -= 2; /* over lws' "\r\n" */
    int n = snprintf(end, (size_t)room + 2, "%s%s\r\n", server ? "" : "; server_no_context_takeover",
                     client ? "" : "; client_no_context_takeover");
    if (n < 0 || n >= room + 2)
        return 0;
    args->p = end + n;
    args->max_len -= n - 2;
    return 1;
}

/* deflateInit2 is a macro: raw deflate (no zlib header) with `windowBits` (9-15). */
static inline int cws_deflate_init(z_stream *stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, -windowBits, memLevel, Z_DEFAULT_STRATEGY);
}
/* inflateInit2 likewise: raw inflate (tests and roombench read compressed frames). */
static inline int cws_inflate_init(z_stream *stream, int windowBits) {
    return inflateInit2(stream, -windowBits);
}

#endif
