#ifndef ROOMD_CNATS_SHIM_H
#define ROOMD_CNATS_SHIM_H

/* The official NATS C client (Debian libnats-dev 3.4.1): core NATS,
 * JetStream and its KeyValue store. Only RoomCluster imports it. */
#include <nats/nats.h>

#endif
