/*
 * patchload: the load of .ci/bench-patches (single thread, epoll, libc only). Prints numbers; not a test.
 *
 * Build:  gcc -O2 -Wall -o patchload patchload.c
 * Usage:  patchload --port P --subs N --sub-path PATH --post-path PATH --post-body FMT [--ids M]
 *                   [--post-conns K] [--duration S] [--server-pid PID]
 *
 *  1. N subscribers open GET --sub-path on 127.0.0.1:P (at most 256 connecting at once) and each waits for its
 *     first event (the whole state; never counted).
 *  2. For --duration seconds, K keep-alive connections POST --post-path at max rate (each sends the next request
 *     once the answer to the last one is read), the body --post-body with its %d replaced by 1, 2, ... M, 1, ...
 *     (a toggle of item n). Meanwhile every event the subscribers read (`event: state` or `event: patch`, chunked
 *     framing decoded) and every byte they read (framing included) is counted; so is the server's CPU time
 *     (utime + stime of --server-pid from /proc).
 *  3. It prints one line: RESULT subs= posts= events= events_per_s= state_events= patch_events= bytes=
 *     bytes_per_event= server_cpu_s= server_cpu_us_per_event= loadgen_cpu_pct= run_s=
 *
 * Only 127.0.0.1 is used; every phase is bounded in time (a SIGALRM backstop ends a run that hangs).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int opt_port, opt_subs, opt_ids = 1000, opt_post_conns = 2, opt_server_pid;
static double opt_duration = 10;
static const char *opt_sub_path, *opt_post_path, *opt_post_body;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "patchload: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* utime + stime of a process, in seconds (0 when it cannot be read). */
static double process_cpu(int pid) {
    char path[64], buffer[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    size_t length = fread(buffer, 1, sizeof buffer - 1, file);
    fclose(file);
    buffer[length] = 0;
    char *field = strrchr(buffer, ')'); /* the command name may hold spaces */
    if (!field) return 0;
    unsigned long utime = 0, stime = 0;
    /* after ")": state(3) ... utime is field 14, stime 15 */
    if (sscanf(field + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return 0;
    return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

static double self_cpu(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

/* ---------------------------------------------------------------- subscribers */

enum { HEAD, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, RAW };

typedef struct {
    int fd, kind; /* kind 0: subscriber, 1: poster */
    int framing, chunked, ready;
    long remaining;         /* bytes left in the current chunk */
    int size_done;          /* the chunk size was read; the rest of its line (extensions, CR) is skipped */
    char head[4096];        /* the response head, until the blank line */
    int head_length;
    int line_start, line_length, skipping;
    char line[16];          /* the start of the current SSE line */
    int event_kind;         /* 0 none, 1 state, 2 patch */
    /* posters */
    char out[512];
    int out_length, out_sent, awaiting;
    char in[8192];
    int in_length;
} conn_t;

static long long events, state_events, patch_events, bytes_read, posts;
static int counting, ready_count;

static void sse_line_end(conn_t *c) {
    if (c->line_length == 0 && !c->skipping) {
        /* a blank line dispatches the event */
        if (c->event_kind) {
            if (!c->ready) {
                c->ready = 1;
                ready_count++;
            } else if (counting) {
                events++;
                if (c->event_kind == 1) state_events++; else patch_events++;
            }
        }
        c->event_kind = 0;
    } else if (c->line_length >= 12 && memcmp(c->line, "event: state", 12) == 0) {
        c->event_kind = 1;
    } else if (c->line_length >= 12 && memcmp(c->line, "event: patch", 12) == 0) {
        c->event_kind = 2;
    }
    c->line_length = 0;
    c->skipping = 0;
}

/* Event-stream bytes: lines are read up to 16 bytes (enough for the event name); the rest is skipped. */
static void sse_feed(conn_t *c, const char *data, long length) {
    while (length > 0) {
        const char *newline = memchr(data, '\n', length);
        long part = newline ? newline - data : length;
        if (!c->skipping) {
            long room = (long)sizeof c->line - c->line_length;
            long copy = part < room ? part : room;
            memcpy(c->line + c->line_length, data, copy);
            c->line_length += copy;
            if (part > room) c->skipping = 1;
        }
        if (!newline) return;
        sse_line_end(c);
        data += part + 1;
        length -= part + 1;
    }
}

/* The response body, chunked or not. */
static void body_feed(conn_t *c, const char *data, long length) {
    while (length > 0) {
        switch (c->framing) {
        case RAW:
            sse_feed(c, data, length);
            return;
        case CHUNK_SIZE: {
            const char *newline = memchr(data, '\n', length);
            long part = newline ? newline - data + 1 : length;
            for (long i = 0; i < part; i++) {
                char ch = data[i];
                int digit = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
                if (digit >= 0 && !c->size_done) c->remaining = c->remaining * 16 + digit;
                else if (ch != '\n') c->size_done = 1; /* extensions or CR: ignore the rest of the line */
            }
            data += part;
            length -= part;
            if (newline) {
                c->size_done = 0;
                c->framing = c->remaining ? CHUNK_DATA : CHUNK_END;
            }
            break;
        }
        case CHUNK_DATA: {
            long part = length < c->remaining ? length : c->remaining;
            sse_feed(c, data, part);
            c->remaining -= part;
            data += part;
            length -= part;
            if (c->remaining == 0) c->framing = CHUNK_END;
            break;
        }
        case CHUNK_END: {
            /* the CRLF after a chunk's data */
            const char *newline = memchr(data, '\n', length);
            if (!newline) return;
            length -= newline - data + 1;
            data = newline + 1;
            c->framing = CHUNK_SIZE;
            c->remaining = 0;
            break;
        }
        }
    }
}

static void subscriber_read(conn_t *c) {
    char buffer[65536];
    for (;;) {
        ssize_t got = read(c->fd, buffer, sizeof buffer);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (got <= 0) die("a subscriber's stream ended (%s)", got == 0 ? "closed by the server" : strerror(errno));
        if (counting) bytes_read += got;
        const char *data = buffer;
        long length = got;
        if (c->framing == HEAD) {
            long copy = length < (long)sizeof c->head - 1 - c->head_length ? length : (long)sizeof c->head - 1 - c->head_length;
            memcpy(c->head + c->head_length, data, copy);
            c->head_length += copy;
            c->head[c->head_length] = 0;
            char *end = strstr(c->head, "\r\n\r\n");
            if (!end) {
                if (c->head_length >= (int)sizeof c->head - 1) die("a response head over 4 KiB");
                continue;
            }
            if (strncmp(c->head, "HTTP/1.1 200", 12) != 0) die("a subscriber was answered: %.60s", c->head);
            c->chunked = strcasestr(c->head, "transfer-encoding: chunked") != NULL;
            c->framing = c->chunked ? CHUNK_SIZE : RAW;
            long used = (end + 4 - c->head) - (c->head_length - copy);
            data += used;
            length -= used;
        }
        body_feed(c, data, length);
    }
}

/* ---------------------------------------------------------------- posters */

static long long next_id;

static void poster_send(conn_t *c) {
    if (!c->awaiting) {
        char body[256];
        snprintf(body, sizeof body, opt_post_body, (int)(next_id++ % opt_ids) + 1);
        c->out_length = snprintf(c->out, sizeof c->out,
                                 "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                                 opt_post_path, strlen(body), body);
        c->out_sent = 0;
        c->awaiting = 1;
    }
    while (c->out_sent < c->out_length) {
        ssize_t sent = write(c->fd, c->out + c->out_sent, c->out_length - c->out_sent);
        if (sent < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (sent <= 0) die("a POST could not be sent: %s", strerror(errno));
        c->out_sent += sent;
    }
}

/* Reads answers (a head with Content-Length, then that many bytes); each complete one lets the next POST go. */
static void poster_read(conn_t *c, int running) {
    for (;;) {
        ssize_t got = read(c->fd, c->in + c->in_length, sizeof c->in - c->in_length);
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
        if (got <= 0) die("a posting connection ended (%s)", got == 0 ? "closed by the server" : strerror(errno));
        c->in_length += got;
        for (;;) {
            c->in[c->in_length < (int)sizeof c->in ? c->in_length : (int)sizeof c->in - 1] = 0;
            char *end = strstr(c->in, "\r\n\r\n");
            if (!end) break;
            if (strncmp(c->in, "HTTP/1.1 2", 10) != 0) die("a POST was answered: %.80s", c->in);
            char *field = strcasestr(c->in, "content-length:");
            long body = field && field < end ? strtol(field + 15, NULL, 10) : 0;
            long total = (end + 4 - c->in) + body;
            if (c->in_length < total) break;
            memmove(c->in, c->in + total, c->in_length - total);
            c->in_length -= total;
            c->awaiting = 0;
            if (counting) posts++;
            if (running) poster_send(c);
        }
    }
}

/* ---------------------------------------------------------------- main */

static int open_connection(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(opt_port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) die("connect: %s", strerror(errno));
    return fd;
}

static void write_all(int fd, const char *text) {
    size_t length = strlen(text), sent = 0;
    double limit = now() + 10;
    while (sent < length) {
        ssize_t n = write(fd, text + sent, length - sent);
        if (n > 0) sent += n;
        else if (n < 0 && (errno == EAGAIN || errno == EINTR || errno == ENOTCONN)) {
            if (now() > limit) die("a request could not be sent within 10 s");
            usleep(1000);
        } else die("write: %s", strerror(errno));
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (i + 1 >= argc) die("%s needs a value", name);
        const char *value = argv[++i];
        if (!strcmp(name, "--port")) opt_port = atoi(value);
        else if (!strcmp(name, "--subs")) opt_subs = atoi(value);
        else if (!strcmp(name, "--sub-path")) opt_sub_path = value;
        else if (!strcmp(name, "--post-path")) opt_post_path = value;
        else if (!strcmp(name, "--post-body")) opt_post_body = value;
        else if (!strcmp(name, "--ids")) opt_ids = atoi(value);
        else if (!strcmp(name, "--post-conns")) opt_post_conns = atoi(value);
        else if (!strcmp(name, "--duration")) opt_duration = atof(value);
        else if (!strcmp(name, "--server-pid")) opt_server_pid = atoi(value);
        else die("unknown option %s (see the head of patchload.c)", name);
    }
    if (opt_port <= 0 || opt_subs < 1 || opt_subs > 50000 || !opt_sub_path || !opt_post_path || !opt_post_body)
        die("needs --port, --subs (1 to 50000), --sub-path, --post-path and --post-body");
    if (opt_duration <= 0 || opt_duration > 300 || opt_ids < 1 || opt_post_conns < 1 || opt_post_conns > 64)
        die("--duration 0-300 s, --ids >= 1, --post-conns 1-64");
    if (!strstr(opt_post_body, "%d")) die("--post-body needs %%d for the item's id");
    struct rlimit limit = {opt_subs + opt_post_conns + 64, opt_subs + opt_post_conns + 64};
    setrlimit(RLIMIT_NOFILE, &limit);
    signal(SIGPIPE, SIG_IGN);
    alarm((unsigned)(opt_duration + 150));

    int epoll = epoll_create1(EPOLL_CLOEXEC);
    conn_t *subs = calloc(opt_subs, sizeof *subs);
    conn_t *posters = calloc(opt_post_conns, sizeof *posters);
    if (!subs || !posters) die("out of memory");
    char request[1024];
    snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", opt_sub_path);
    struct epoll_event events_out[512];
    double start = now();
    int opened = 0;
    while (ready_count < opt_subs) {
        while (opened < opt_subs && opened - ready_count < 256) {
            conn_t *c = &subs[opened++];
            c->fd = open_connection();
            write_all(c->fd, request);
            struct epoll_event event = {.events = EPOLLIN, .data.ptr = c};
            epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
        }
        int n = epoll_wait(epoll, events_out, 512, 100);
        for (int i = 0; i < n; i++) subscriber_read(events_out[i].data.ptr);
        if (now() - start > 120) die("only %d of %d subscribers got their first state within 120 s", ready_count, opt_subs);
    }
    fprintf(stderr, "patchload: %d subscribers ready in %.2f s\n", opt_subs, now() - start);

    for (int i = 0; i < opt_post_conns; i++) {
        conn_t *c = &posters[i];
        c->kind = 1;
        c->fd = open_connection();
        struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c};
        epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
    }
    counting = 1;
    double cpu_before = opt_server_pid ? process_cpu(opt_server_pid) : 0, self_before = self_cpu();
    double run_start = now(), run_end = run_start + opt_duration;
    for (int i = 0; i < opt_post_conns; i++) poster_send(&posters[i]);
    while (now() < run_end) {
        int n = epoll_wait(epoll, events_out, 512, 10);
        for (int i = 0; i < n; i++) {
            conn_t *c = events_out[i].data.ptr;
            if (c->kind == 0) {
                subscriber_read(c);
            } else {
                if (events_out[i].events & EPOLLOUT) poster_send(c);
                if (events_out[i].events & EPOLLIN) poster_read(c, 1);
            }
        }
    }
    double run = now() - run_start;
    counting = 0;
    double cpu = opt_server_pid ? process_cpu(opt_server_pid) - cpu_before : 0;
    double loadgen = self_cpu() - self_before;
    printf("RESULT subs=%d posts=%lld events=%lld events_per_s=%.0f state_events=%lld patch_events=%lld bytes=%lld "
           "bytes_per_event=%.1f server_cpu_s=%.3f server_cpu_us_per_event=%.3f loadgen_cpu_pct=%.0f run_s=%.3f\n",
           opt_subs, posts, events, events / run, state_events, patch_events, bytes_read,
           events ? (double)bytes_read / events : 0, cpu, events ? cpu * 1e6 / events : 0, loadgen * 100 / run, run);
    return 0;
}
