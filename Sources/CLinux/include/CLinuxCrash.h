#ifndef CLINUX_CRASH_H
#define CLINUX_CRASH_H
/* Crash attribution (crash.c): each thread keeps, in a thread-local slot, which session's reactor code it
   is running (session, reactor, the action's seq or the version made, the phase), written with fixed-size
   copies and no lock or allocation. A fatal-signal handler (SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE,
   SIGABRT), async-signal-safe throughout, writes the slot of the thread that faulted to a crash record,
   says so on standard error, optionally publishes the record to NATS JetStream over a fresh connection,
   then lets the process die exactly as it would have (the handler found at install, typically the Swift
   runtime's backtracer, runs next). */
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The most bytes of a session id or a reactor name the slot keeps (API.md: ids are at most 64). */
#define CLinux_CRASH_NAME_BYTES 64
/* The most bytes of an action's JSON a crash record keeps. */
#define CLinux_CRASH_ACTION_BYTES 65536
/* The most NATS servers the handler tries. */
#define CLinux_CRASH_NATS_SERVERS 8

/* Marks the start of reactor code on this thread: `key` names the session (unique for the process's
   lifetime), `phase` what runs (the numbers of ReactorCall in Swift), `seq` the action (0: none),
   `version` the version made or shown (0: none), `action` the action's JSON while it is alive (NULL:
   none; the pending action, see below, may stand in). Returns 1 when the slot does not hold this
   session's names yet: the caller then calls CLinux_reactor_identify. Every enter is paired with a leave. */
int CLinux_reactor_enter(uint64_t key, uint8_t phase, uint64_t seq, uint64_t version, const uint8_t *action,
                         size_t action_len);
/* Names the session of the innermost frame (bytes beyond CLinux_CRASH_NAME_BYTES are cut). */
void CLinux_reactor_identify(const uint8_t *id, size_t id_len, const uint8_t *reactor, size_t reactor_len);
/* Ends the innermost frame. */
void CLinux_reactor_leave(void);
/* The JSON of the action this thread is about to hand to a runtime (NULL clears it): the first action
   frame entered on this thread meanwhile takes its seq, and every frame of that seq records these bytes,
   which the caller keeps alive until it clears them. */
void CLinux_reactor_pending_action(const uint8_t *json, size_t len);
/* The pending action's JSON when the action `seq` took it (its length, the bytes in *json), else 0. */
size_t CLinux_reactor_pending_for(uint64_t seq, const uint8_t **json);
/* The pending action's JSON while no action has taken it yet (its length, the bytes in *json), else 0:
   the action a hook that runs before it is numbered (a middleware's intercept) is about to refuse or let in. */
size_t CLinux_reactor_pending_unclaimed(const uint8_t **json);
/* How many frames this thread has open (0: no reactor code is running on it). */
int CLinux_reactor_depth(void);

/* Installs the handler for the fatal signals, once per process (later calls only change the folder).
   `directory` (NULL or empty: none) is where crash records are written, as
   `<session>.<unix nanoseconds>.<thread>.crash`; it must exist. `program` prefixes the standard-error
   line ("reactor-server"). Returns 0, or -1 with errno when a sigaction failed. */
int CLinux_crash_install(const char *directory, const char *program);
/* Sends each crash record to NATS as well, within `timeout_ms` in all: a KV put on
   `<subject_prefix><session>.<unix nanoseconds>` (the subject of a key in a crashes bucket), after
   `connect_line` ("CONNECT {...}\r\n", with any credentials). `addresses` are the servers, tried in
   order (at most CLinux_CRASH_NATS_SERVERS). Returns 0, or -1 when a part is too long. */
int CLinux_crash_set_nats(const struct sockaddr_storage *addresses, const socklen_t *lengths, int count,
                          const char *connect_line, const char *subject_prefix, int timeout_ms);
/* Stops sending crash records to NATS. */
void CLinux_crash_clear_nats(void);
#endif
