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
static inline void *cws_io_start(void *loop, int fd, cws_io_callback callback, void *data) {
    struct cws_io *watcher = (struct cws_io *)calloc(1, sizeof *watcher);
    if (!watcher) return NULL;
    watcher->callback = callback;
    watcher->data = data;
    ev_io_init(&watcher->io, cws_io_fired, fd, EV_READ);
    ev_io_start((struct ev_loop *)loop, &watcher->io);
    return watcher;
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

#endif
