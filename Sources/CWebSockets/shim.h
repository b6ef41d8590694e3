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

#endif
