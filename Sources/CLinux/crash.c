/* Crash attribution: the per-thread slot of reactor code running, and the fatal-signal handler that writes
   it down before the process dies (see CLinuxCrash.h). Everything the handler calls is async-signal-safe
   (open, write, fsync, rename, close, socket, connect, poll, read, clock_gettime, sigaction, raise): no
   malloc, no stdio, no locks; paths and the NATS greeting are formatted at install. */
#define _GNU_SOURCE
#include "CLinux.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h> /* rename(2) only: no stdio stream is used */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FRAMES 8
#define ALTSTACK_BYTES (128 * 1024)
#define PATH_BYTES 4096

/* One open frame of reactor code. Its names stay after it is left: the next frame entered at the same
   depth for the same session (key) need not copy them again. */
struct frame {
    uint64_t key;
    uint64_t seq;
    uint64_t version;
    const uint8_t *action;
    uint32_t action_len;
    uint8_t phase;
    uint8_t id_len;
    uint8_t reactor_len;
    char id[CLinux_CRASH_NAME_BYTES];
    char reactor[CLinux_CRASH_NAME_BYTES];
};

struct slot {
    struct frame frames[FRAMES];
    uint32_t depth;
    const uint8_t *pending;
    uint32_t pending_len;
    uint64_t pending_seq;
    uint8_t altstack;
    uint8_t handling;
};

/* Initial-exec: the executable's own TLS block, read in the handler without __tls_get_addr. */
static __thread struct slot slot __attribute__((tls_model("initial-exec")));

/* The phases, as ReactorCall numbers them in Swift. */
enum {
    PHASE_DECODE_ACTION = 1, PHASE_TRANSFORM_ACTION, PHASE_MUTATE, PHASE_TRANSFORM_MUTATION, PHASE_REDUCE,
    PHASE_TRANSFORM_STATE, PHASE_EFFECT, PHASE_SOURCE, PHASE_ENCODE_STATE, PHASE_ENCODE_MUTATION, PHASE_ENCODE_ACTION,
    PHASE_REPLAY, PHASE_DECODE_STATE, PHASE_RECOVER, PHASE_MIDDLEWARE, PHASE_COUNT
};

static const char *const phase_names[PHASE_COUNT] = {
    "unknown", "decodeAction", "transformAction", "mutate", "transformMutation", "reduce", "transformState",
    "effect", "source", "encodeState", "encodeMutation", "encodeAction", "replay", "decodeState", "recover",
    "middleware",
};

// MARK: the slot

static pthread_key_t altstack_key;
static pthread_once_t altstack_once = PTHREAD_ONCE_INIT;

/* Frees a thread's alternate signal stack when the thread ends. */
static void altstack_free(void *memory) {
    stack_t off;
    memset(&off, 0, sizeof off);
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, NULL);
    munmap(memory, ALTSTACK_BYTES);
}

static void altstack_key_create(void) { pthread_key_create(&altstack_key, altstack_free); }

/* Gives this thread an alternate signal stack unless it has one, so that a reactor's runaway recursion
   (SIGSEGV on the guard page) still reaches the handler. Once per thread. */
static void altstack_prepare(void) {
    slot.altstack = 1;
    stack_t current;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
    void *memory = mmap(NULL, ALTSTACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return;
    stack_t stack;
    memset(&stack, 0, sizeof stack);
    stack.ss_sp = memory;
    stack.ss_size = ALTSTACK_BYTES;
    if (sigaltstack(&stack, NULL) != 0) {
        munmap(memory, ALTSTACK_BYTES);
        return;
    }
    pthread_once(&altstack_once, altstack_key_create);
    pthread_setspecific(altstack_key, memory);
}

/* The fast path: a leaf (no call, so no registers to save), as every call of reactor code goes through it. */
static inline int reactor_enter(uint64_t key, uint8_t phase, uint64_t seq, uint64_t version, const uint8_t *action,
                                size_t action_len) {
    uint32_t depth = slot.depth++;
    if (depth >= FRAMES) return 0;
    struct frame *frame = &slot.frames[depth];
    frame->seq = seq;
    frame->version = version;
    frame->phase = phase;
    frame->action = action;
    frame->action_len = action_len > UINT32_MAX ? UINT32_MAX : (uint32_t)action_len;
    if (action == NULL && slot.pending != NULL && seq != 0) {
        // The first action run on this thread while an action is being sent from it is that action.
        // (A middleware's didAccept comes first, before the action's transform.)
        if (slot.pending_seq == 0 && (phase == PHASE_TRANSFORM_ACTION || phase == PHASE_MUTATE
                                      || phase == PHASE_MIDDLEWARE)) {
            slot.pending_seq = seq;
        }
        if (seq == slot.pending_seq) {
            frame->action = slot.pending;
            frame->action_len = slot.pending_len;
        }
    }
    if (frame->key == key) return 0;
    // Blank until identified, so a frame never shows another session's names.
    frame->id_len = 0;
    frame->reactor_len = 0;
    frame->key = key;
    return 1;
}

/* A thread's first frame: its alternate signal stack first. */
__attribute__((noinline, cold)) static int reactor_enter_first(uint64_t key, uint8_t phase, uint64_t seq,
                                                               uint64_t version, const uint8_t *action,
                                                               size_t action_len) {
    altstack_prepare();
    return reactor_enter(key, phase, seq, version, action, action_len);
}

int CLinux_reactor_enter(uint64_t key, uint8_t phase, uint64_t seq, uint64_t version, const uint8_t *action,
                         size_t action_len) {
    if (__builtin_expect(!slot.altstack, 0)) return reactor_enter_first(key, phase, seq, version, action, action_len);
    return reactor_enter(key, phase, seq, version, action, action_len);
}

void CLinux_reactor_identify(const uint8_t *id, size_t id_len, const uint8_t *reactor, size_t reactor_len) {
    uint32_t depth = slot.depth;
    if (depth == 0 || depth > FRAMES) return;
    struct frame *frame = &slot.frames[depth - 1];
    if (id_len > CLinux_CRASH_NAME_BYTES) id_len = CLinux_CRASH_NAME_BYTES;
    if (reactor_len > CLinux_CRASH_NAME_BYTES) reactor_len = CLinux_CRASH_NAME_BYTES;
    memcpy(frame->id, id, id_len);
    memcpy(frame->reactor, reactor, reactor_len);
    frame->id_len = (uint8_t)id_len;
    frame->reactor_len = (uint8_t)reactor_len;
}

void CLinux_reactor_leave(void) {
    if (slot.depth > 0) slot.depth--;
}

void CLinux_reactor_pending_action(const uint8_t *json, size_t len) {
    slot.pending = json;
    slot.pending_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    slot.pending_seq = 0;
}

size_t CLinux_reactor_pending_for(uint64_t seq, const uint8_t **json) {
    if (slot.pending == NULL || seq == 0 || slot.pending_seq != seq) return 0;
    *json = slot.pending;
    return slot.pending_len;
}

size_t CLinux_reactor_pending_unclaimed(const uint8_t **json) {
    if (slot.pending == NULL || slot.pending_seq != 0) return 0;
    *json = slot.pending;
    return slot.pending_len;
}

int CLinux_reactor_depth(void) { return (int)slot.depth; }

// MARK: what the handler knows from install

static const int fatal_signals[] = {SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
#define FATAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction previous[FATAL_COUNT];
static atomic_int installed;
static char directory[PATH_BYTES];
static char program[64] = "reactor-server";

static struct {
    int count;
    struct sockaddr_storage addresses[CLinux_CRASH_NATS_SERVERS];
    socklen_t lengths[CLinux_CRASH_NATS_SERVERS];
    char connect_line[2048];
    char subject_prefix[256];
    int timeout_ms;
} nats;
static atomic_int nats_ready;

static size_t bounded_copy(char *target, size_t capacity, const char *source) {
    size_t length = source ? strlen(source) : 0;
    if (length >= capacity) return (size_t)-1;
    memcpy(target, source, length);
    target[length] = 0;
    return length;
}

int CLinux_crash_set_nats(const struct sockaddr_storage *addresses, const socklen_t *lengths, int count,
                          const char *connect_line, const char *subject_prefix, int timeout_ms) {
    atomic_store(&nats_ready, 0);
    if (count > CLinux_CRASH_NATS_SERVERS) count = CLinux_CRASH_NATS_SERVERS;
    if (bounded_copy(nats.connect_line, sizeof nats.connect_line, connect_line) == (size_t)-1) return -1;
    if (bounded_copy(nats.subject_prefix, sizeof nats.subject_prefix, subject_prefix) == (size_t)-1) return -1;
    for (int i = 0; i < count; i++) {
        nats.addresses[i] = addresses[i];
        nats.lengths[i] = lengths[i];
    }
    nats.count = count;
    nats.timeout_ms = timeout_ms;
    atomic_store(&nats_ready, count > 0);
    return 0;
}

void CLinux_crash_clear_nats(void) { atomic_store(&nats_ready, 0); }

// MARK: time and descriptors

static uint64_t monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

static int remaining_ms(uint64_t deadline) {
    uint64_t now = monotonic_ms();
    return now >= deadline ? 0 : (int)(deadline - now);
}

/* Waits until `fd` is ready for `events`: 0 when it is, -1 at the deadline or on an error. */
static int wait_for(int fd, short events, uint64_t deadline) {
    for (;;) {
        int left = remaining_ms(deadline);
        if (left == 0) return -1;
        struct pollfd entry = {.fd = fd, .events = events, .revents = 0};
        int ready = poll(&entry, 1, left);
        if (ready > 0) return (entry.revents & events) ? 0 : -1;
        if (ready < 0 && errno != EINTR) return -1;
    }
}

static int write_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += written;
        length -= (size_t)written;
    }
    return 0;
}

/* Sends everything on a non-blocking socket before the deadline. */
static int send_all(int fd, const char *bytes, size_t length, uint64_t deadline) {
    while (length > 0) {
        ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
            if (wait_for(fd, POLLOUT, deadline) != 0) return -1;
            continue;
        }
        bytes += sent;
        length -= (size_t)sent;
    }
    return 0;
}

// MARK: formatting without libc's formatted output

/* Bytes on their way to a file or a socket through a small buffer, or only counted (fd < 0). */
struct sink {
    int fd;
    int socket;
    char *memory;
    size_t capacity;
    uint64_t deadline;
    size_t count;
    size_t used;
    int failed;
    char buffer[1024];
};

static void sink_init(struct sink *sink, int fd, int socket, uint64_t deadline) {
    sink->fd = fd;
    sink->socket = socket;
    sink->memory = NULL;
    sink->capacity = 0;
    sink->deadline = deadline;
    sink->count = 0;
    sink->used = 0;
    sink->failed = 0;
}

static void sink_flush(struct sink *sink) {
    if (sink->fd >= 0 && sink->used > 0 && !sink->failed) {
        int result = sink->socket ? send_all(sink->fd, sink->buffer, sink->used, sink->deadline)
                                  : write_all(sink->fd, sink->buffer, sink->used);
        if (result != 0) sink->failed = 1;
    }
    sink->used = 0;
}

static void put(struct sink *sink, const char *bytes, size_t length) {
    size_t at = sink->count;
    sink->count += length;
    if (sink->memory != NULL) {
        if (sink->count < sink->capacity) {
            memcpy(sink->memory + at, bytes, length);
        } else {
            sink->failed = 1;
        }
        return;
    }
    if (sink->fd < 0) return;
    while (length > 0) {
        if (sink->used == sizeof sink->buffer) sink_flush(sink);
        size_t room = sizeof sink->buffer - sink->used;
        size_t part = length < room ? length : room;
        memcpy(sink->buffer + sink->used, bytes, part);
        sink->used += part;
        bytes += part;
        length -= part;
    }
}

static void put_text(struct sink *sink, const char *text) { put(sink, text, strlen(text)); }

static void put_u64(struct sink *sink, uint64_t value) {
    char digits[20];
    int count = 0;
    do {
        digits[sizeof digits - 1 - count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0);
    put(sink, digits + sizeof digits - count, (size_t)count);
}

static int is_name_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* A name as a JSON string's content or a subject token: only [A-Za-z0-9_-] pass (ids and reactor
   names are made of those); anything else becomes '_', so the record stays valid whatever the slot holds. */
static void put_name(struct sink *sink, const char *name, size_t length) {
    if (length == 0) put(sink, "_", 1);
    for (size_t i = 0; i < length; i++) put(sink, is_name_byte(name[i]) ? &name[i] : "_", 1);
}

static void put_base64(struct sink *sink, const uint8_t *bytes, size_t length) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char out[4];
    size_t i = 0;
    for (; i + 3 <= length; i += 3) {
        uint32_t group = (uint32_t)bytes[i] << 16 | (uint32_t)bytes[i + 1] << 8 | bytes[i + 2];
        out[0] = alphabet[group >> 18 & 63];
        out[1] = alphabet[group >> 12 & 63];
        out[2] = alphabet[group >> 6 & 63];
        out[3] = alphabet[group & 63];
        put(sink, out, 4);
    }
    if (i < length) {
        uint32_t group = (uint32_t)bytes[i] << 16 | (i + 1 < length ? (uint32_t)bytes[i + 1] << 8 : 0);
        out[0] = alphabet[group >> 18 & 63];
        out[1] = alphabet[group >> 12 & 63];
        out[2] = i + 1 < length ? alphabet[group >> 6 & 63] : '=';
        out[3] = '=';
        put(sink, out, 4);
    }
}

static const char *signal_name(int signal) {
    switch (signal) {
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "SIG?";
    }
}

static const char *phase_name(uint8_t phase) { return phase < PHASE_COUNT ? phase_names[phase] : phase_names[0]; }

/* What a crash record says. */
struct crash {
    const struct frame *frame;
    /* The action's JSON: the frame's own, else an enclosing frame's of the same session and action. */
    const uint8_t *action;
    uint32_t action_len;
    int signal;
    uint64_t at;
    uint64_t pid;
    uint64_t thread;
};

/* The record: one JSON object on one line. */
static void put_record(struct sink *sink, const struct crash *crash) {
    const struct frame *frame = crash->frame;
    put_text(sink, "{\"session\":\"");
    put_name(sink, frame->id, frame->id_len);
    put_text(sink, "\",\"reactor\":\"");
    put_name(sink, frame->reactor, frame->reactor_len);
    put_text(sink, "\",\"phase\":\"");
    put_text(sink, phase_name(frame->phase));
    put_text(sink, "\",\"seq\":");
    put_u64(sink, frame->seq);
    put_text(sink, ",\"version\":");
    put_u64(sink, frame->version);
    put_text(sink, ",\"signal\":\"");
    put_text(sink, signal_name(crash->signal));
    put_text(sink, "\",\"at\":");
    put_u64(sink, crash->at);
    put_text(sink, ",\"pid\":");
    put_u64(sink, crash->pid);
    put_text(sink, ",\"thread\":");
    put_u64(sink, crash->thread);
    if (crash->action != NULL) {
        put_text(sink, ",\"actionBytes\":");
        put_u64(sink, crash->action_len);
        // Bounded: a larger action is named by its size only.
        if (crash->action_len <= CLinux_CRASH_ACTION_BYTES) {
            put_text(sink, ",\"action64\":\"");
            put_base64(sink, crash->action, crash->action_len);
            put_text(sink, "\"");
        }
    }
    put_text(sink, "}\n");
}

// MARK: the crash record on disk

/* "<folder>/<session>.<at>.<thread>.crash", with ".tmp" after it while it is written. */
static void put_path(struct sink *sink, const struct crash *crash, int temporary) {
    put_text(sink, directory);
    put_text(sink, "/");
    put_name(sink, crash->frame->id, crash->frame->id_len);
    put_text(sink, ".");
    put_u64(sink, crash->at);
    put_text(sink, ".");
    put_u64(sink, crash->thread);
    put_text(sink, temporary ? ".crash.tmp" : ".crash");
}

/* Formats a path into `path` (NUL-terminated); -1 when it does not fit. */
static int format_path(char *path, size_t capacity, const struct crash *crash, int temporary) {
    struct sink sink;
    sink_init(&sink, -1, 0, 0);
    sink.memory = path;
    sink.capacity = capacity;
    put_path(&sink, crash, temporary);
    if (sink.failed) return -1;
    path[sink.count] = 0;
    return 0;
}

/* Writes the record (a temporary name, synced, renamed, then the folder synced); 0, or the errno of
   the step that failed. The final path is in `path`. */
static int write_record(const struct crash *crash, char *path, size_t capacity) {
    char temporary[PATH_BYTES];
    if (format_path(temporary, sizeof temporary, crash, 1) != 0) return ENAMETOOLONG;
    if (format_path(path, capacity, crash, 0) != 0) return ENAMETOOLONG;
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    struct sink sink;
    sink_init(&sink, fd, 0, 0);
    put_record(&sink, crash);
    sink_flush(&sink);
    int failure = sink.failed ? (errno ? errno : EIO) : 0;
    if (failure == 0 && fsync(fd) != 0) failure = errno;
    close(fd);
    if (failure == 0 && rename(temporary, path) != 0) failure = errno;
    if (failure != 0) {
        unlink(temporary);
        return failure;
    }
    int folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder >= 0) {
        fsync(folder);
        close(folder);
    }
    return 0;
}

// MARK: the crash record on NATS, over a connection of its own

/* Reads what the server sent into `buffer`; the bytes read, or -1 (closed, failed, deadline). */
static ssize_t receive(int fd, char *buffer, size_t capacity, uint64_t deadline) {
    for (;;) {
        ssize_t count = recv(fd, buffer, capacity, 0);
        if (count > 0) return count;
        if (count == 0) return -1;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        if (wait_for(fd, POLLIN, deadline) != 0) return -1;
    }
}

static int starts_with(const char *bytes, size_t length, const char *prefix) {
    size_t count = strlen(prefix);
    return length >= count && memcmp(bytes, prefix, count) == 0;
}

static void put_inbox(struct sink *sink, const struct crash *crash) {
    put_text(sink, "_INBOX.reactorcrash.");
    put_u64(sink, crash->pid);
    put_text(sink, ".");
    put_u64(sink, crash->thread);
}

/* Publishes the record through server `index` and waits for JetStream's acknowledgement: 0 when it
   was stored, -1 otherwise (unreachable, refused, no acknowledgement before the deadline). */
static int publish_to(int index, const struct crash *crash, uint64_t deadline) {
    const struct sockaddr_storage *address = &nats.addresses[index];
    int fd = socket(address->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int result = -1;
    char buffer[4096];
    size_t held = 0;
    if (connect(fd, (const struct sockaddr *)address, nats.lengths[index]) != 0) {
        if (errno != EINPROGRESS && errno != EINTR) goto done;
        if (wait_for(fd, POLLOUT, deadline) != 0) goto done;
        int error = 0;
        socklen_t size = sizeof error;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) goto done;
    }
    // The server's INFO line comes first; only where it ends matters.
    for (;;) {
        ssize_t count = receive(fd, buffer + held, sizeof buffer - held, deadline);
        if (count < 0) goto done;
        held += (size_t)count;
        char *end = memmem(buffer, held, "\r\n", 2);
        if (end != NULL) {
            size_t line = (size_t)(end - buffer) + 2;
            memmove(buffer, buffer + line, held - line);
            held -= line;
            break;
        }
        if (held == sizeof buffer) {
            buffer[0] = buffer[held - 1];
            held = 1;
        }
    }
    {
        // The greeting, an inbox for the acknowledgement, the record as a KV put, and a PING.
        struct sink counter;
        sink_init(&counter, -1, 0, 0);
        put_record(&counter, crash);
        struct sink out;
        sink_init(&out, fd, 1, deadline);
        put_text(&out, nats.connect_line);
        put_text(&out, "SUB ");
        put_inbox(&out, crash);
        put_text(&out, " 1\r\nPUB ");
        put_text(&out, nats.subject_prefix);
        put_name(&out, crash->frame->id, crash->frame->id_len);
        put_text(&out, ".");
        put_u64(&out, crash->at);
        put_text(&out, " ");
        put_inbox(&out, crash);
        put_text(&out, " ");
        put_u64(&out, counter.count);
        put_text(&out, "\r\n");
        put_record(&out, crash);
        put_text(&out, "\r\nPING\r\n");
        sink_flush(&out);
        if (out.failed) goto done;
    }
    // Lines until the acknowledgement: "MSG <inbox> 1 <size>", then its payload.
    for (;;) {
        char *end = memmem(buffer, held, "\r\n", 2);
        if (end == NULL) {
            if (held == sizeof buffer) goto done;
            ssize_t count = receive(fd, buffer + held, sizeof buffer - held, deadline);
            if (count < 0) goto done;
            held += (size_t)count;
            continue;
        }
        size_t line = (size_t)(end - buffer);
        if (starts_with(buffer, line, "MSG ")) {
            size_t size = 0;
            size_t at = line;
            while (at > 0 && buffer[at - 1] >= '0' && buffer[at - 1] <= '9') at--;
            for (size_t i = at; i < line; i++) size = size * 10 + (size_t)(buffer[i] - '0');
            size_t needed = line + 2 + size;
            if (needed > sizeof buffer) goto done;
            while (held < needed) {
                ssize_t count = receive(fd, buffer + held, sizeof buffer - held, deadline);
                if (count < 0) goto done;
                held += (size_t)count;
            }
            const char *payload = buffer + line + 2;
            int stored = memmem(payload, size, "\"seq\"", 5) != NULL;
            result = stored && memmem(payload, size, "\"error\"", 7) == NULL ? 0 : -1;
            goto done;
        }
        if (starts_with(buffer, line, "-ERR")) goto done;
        if (starts_with(buffer, line, "PING") && send_all(fd, "PONG\r\n", 6, deadline) != 0) goto done;
        memmove(buffer, buffer + line + 2, held - line - 2);
        held -= line + 2;
    }
done:
    close(fd);
    return result;
}

/* Tries each server until one stores the record; 0 when one did. */
static int publish(const struct crash *crash) {
    uint64_t deadline = monotonic_ms() + (uint64_t)nats.timeout_ms;
    for (int i = 0; i < nats.count && remaining_ms(deadline) > 0; i++) {
        if (publish_to(i, crash, deadline) == 0) return 0;
    }
    return -1;
}

// MARK: the handler

static void say(struct sink *line) {
    sink_flush(line);
}

static void put_errno(struct sink *sink, int error) {
    switch (error) {
    case ENOENT: put_text(sink, "ENOENT: the crash folder is gone"); break;
    case EACCES: put_text(sink, "EACCES: permission denied"); break;
    case ENOSPC: put_text(sink, "ENOSPC: the disk is full"); break;
    case EROFS: put_text(sink, "EROFS: read-only file system"); break;
    case EDQUOT: put_text(sink, "EDQUOT: over the disk quota"); break;
    case EIO: put_text(sink, "EIO: an I/O error"); break;
    case ENAMETOOLONG: put_text(sink, "ENAMETOOLONG: the crash folder's path is too long"); break;
    default:
        put_text(sink, "errno ");
        put_u64(sink, (uint64_t)error);
    }
}

/* Writes the crash record of the innermost frame and says so on standard error; or, with no reactor
   code running on this thread, says that nothing is quarantined. */
static void attribute(int signal) {
    struct sink line;
    sink_init(&line, 2, 0, 0);
    uint32_t depth = slot.depth;
    if (depth == 0) {
        put_text(&line, program);
        put_text(&line, ": fatal signal ");
        put_text(&line, signal_name(signal));
        put_text(&line, " in the server's own code (no reactor code was running on this thread): ");
        put_text(&line, "no session is quarantined\n");
        say(&line);
        return;
    }
    uint32_t innermost = (depth > FRAMES ? FRAMES : depth) - 1;
    const struct frame *frame = &slot.frames[innermost];
    // A reduce inside an effect's (or a held element's) task has no JSON of its own: the task's frame has
    // its action's. Looked up here, not as frames are entered, so the hot path pays nothing for it.
    const uint8_t *action = frame->action;
    uint32_t action_len = frame->action_len;
    for (uint32_t i = innermost; action == NULL && frame->seq != 0 && i > 0; i--) {
        const struct frame *outer = &slot.frames[i - 1];
        if (outer->key == frame->key && outer->seq == frame->seq && outer->action != NULL) {
            action = outer->action;
            action_len = outer->action_len;
        }
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct crash crash = {
        .frame = frame,
        .action = action,
        .action_len = action_len,
        .signal = signal,
        .at = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec,
        .pid = (uint64_t)getpid(),
        .thread = (uint64_t)syscall(SYS_gettid),
    };
    put_text(&line, program);
    put_text(&line, ": fatal signal ");
    put_text(&line, signal_name(signal));
    put_text(&line, " in reactor \"");
    put_name(&line, frame->reactor, frame->reactor_len);
    put_text(&line, "\" of session \"");
    put_name(&line, frame->id, frame->id_len);
    put_text(&line, "\": ");
    put_text(&line, phase_name(frame->phase));
    if (frame->seq != 0) {
        put_text(&line, ", action seq ");
        put_u64(&line, frame->seq);
    }
    if (frame->version != 0) {
        put_text(&line, ", version ");
        put_u64(&line, frame->version);
    }
    if (frame->id_len == 0) {
        put_text(&line, "; the session is not known, so nothing is quarantined\n");
        say(&line);
        return;
    }
    if (directory[0] != 0) {
        char path[PATH_BYTES];
        int failure = write_record(&crash, path, sizeof path);
        if (failure == 0) {
            put_text(&line, "; crash record ");
            put_text(&line, path);
            put_text(&line, ": the session is quarantined from the next start\n");
        } else {
            put_text(&line, "; the crash record could not be written (");
            put_errno(&line, failure);
            put_text(&line, ")\n");
        }
    } else {
        put_text(&line, " (no crash folder: sessions are in memory only, nothing to quarantine)\n");
    }
    say(&line);
    if (atomic_load(&nats_ready)) {
        put_text(&line, program);
        if (publish(&crash) == 0) {
            put_text(&line, ": the crash record is stored in NATS JetStream: no instance loads the session again\n");
        } else {
            put_text(&line, ": the crash record could not be stored in NATS JetStream in time; ");
            put_text(&line, "it is published when this instance starts again\n");
        }
        say(&line);
    }
}

/* Whether the fault is this thread's own (an instruction that trapped, or abort/raise on itself)
   rather than a signal someone sent the process. */
static int is_own_fault(const siginfo_t *info) {
    if (info == NULL) return 0;
    return info->si_code > 0 || (info->si_code == SI_TKILL && info->si_pid == getpid());
}

static int signal_index(int signal) {
    for (unsigned i = 0; i < FATAL_COUNT; i++) {
        if (fatal_signals[i] == signal) return (int)i;
    }
    return -1;
}

static void handle_fatal_signal(int signal, siginfo_t *info, void *context) {
    int saved_errno = errno;
    int index = signal_index(signal);
    if (!slot.handling && is_own_fault(info)) {
        slot.handling = 1;
        attribute(signal);
    }
    // Then exactly what would have happened without this handler: the one it replaced runs (the Swift
    // runtime's backtracer prints its backtrace and restores the default), or the default disposition.
    struct sigaction *next = index >= 0 ? &previous[index] : NULL;
    if (next != NULL && (next->sa_flags & SA_SIGINFO) && next->sa_sigaction != NULL) {
        next->sa_sigaction(signal, info, context);
    } else if (next != NULL && next->sa_handler != SIG_DFL && next->sa_handler != SIG_IGN && next->sa_handler != NULL) {
        next->sa_handler(signal);
    } else {
        // Blocked while this handler runs: delivered with the default disposition as it returns (the
        // process ends with this signal, and a core dump where the system keeps them).
        struct sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.sa_handler = SIG_DFL;
        sigemptyset(&fallback.sa_mask);
        sigaction(signal, &fallback, NULL);
        raise(signal);
    }
    errno = saved_errno;
}

int CLinux_crash_install(const char *folder, const char *name) {
    if (bounded_copy(directory, sizeof directory, folder ? folder : "") == (size_t)-1) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (name != NULL && bounded_copy(program, sizeof program, name) == (size_t)-1) {
        bounded_copy(program, sizeof program, "reactor-server");
    }
    int expected = 0;
    if (!atomic_compare_exchange_strong(&installed, &expected, 1)) return 0;
    // The installing thread gets its alternate stack here; every other thread on its first frame.
    altstack_prepare();
    for (unsigned i = 0; i < FATAL_COUNT; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = handle_fatal_signal;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        if (sigaction(fatal_signals[i], &action, &previous[i]) != 0) return -1;
    }
    return 0;
}
