#ifndef ROOMD_CNATS_SHIM_H
#define ROOMD_CNATS_SHIM_H

/* The official NATS C client (Debian libnats-dev 3.4.1): core NATS,
 * JetStream and its KeyValue store. Only RoomCluster imports it. */
#include <nats/nats.h>
#include <sys/prctl.h>

/* Names the calling thread (ps, /proc/PID/task/TID/comm): Swift cannot call the variadic prctl. */
static inline void cnats_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#endif
