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

#endif
