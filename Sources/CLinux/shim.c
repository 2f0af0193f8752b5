#define _GNU_SOURCE
#include <malloc.h>
#include "CLinux.h"
#include <sched.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <spawn.h>

int CLinux_epoll_create1(int flags) { return epoll_create1(flags); }

int CLinux_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

int CLinux_epoll_wait(int epfd, uint32_t *events, uint64_t *datas, int maxevents, int timeout) {
    struct epoll_event evs[256];
    if (maxevents > 256) maxevents = 256;
    int n = epoll_wait(epfd, evs, maxevents, timeout);
    for (int i = 0; i < n; i++) {
        events[i] = evs[i].events;
        datas[i] = evs[i].data.u64;
    }
    return n;
}

int CLinux_eventfd(unsigned int initval, int flags) { return eventfd(initval, flags); }

int CLinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) { return accept4(fd, addr, len, flags); }

ssize_t CLinux_writev_nosignal(int fd, const struct iovec *iov, int iovcnt) {
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = (size_t)iovcnt;
    return sendmsg(fd, &msg, MSG_NOSIGNAL);
}

int CLinux_affinity_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

#if defined(__x86_64__)
int CLinux_crc32c_hardware(void) { return __builtin_cpu_supports("sse4.2"); }

/* Compiled for SSE 4.2 here only; callers check CLinux_crc32c_hardware() first, so no build flag is needed. */
__attribute__((target("sse4.2")))
uint32_t CLinux_crc32c_update(uint32_t crc, const uint8_t *bytes, size_t count) {
    uint64_t wide = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        wide = __builtin_ia32_crc32di(wide, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (count > 0) {
        narrow = __builtin_ia32_crc32qi(narrow, *bytes);
        bytes++;
        count--;
    }
    return narrow;
}
#else
int CLinux_crc32c_hardware(void) { return 0; }
uint32_t CLinux_crc32c_update(uint32_t crc, const uint8_t *bytes, size_t count) { (void)bytes; (void)count; return crc; }
#endif

int CLinux_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int CLinux_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int CLinux_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

void CLinux_heap_statistics(uint64_t *in_use, uint64_t *free_bytes, uint64_t *mapped) {
    struct mallinfo2 info = mallinfo2();
    /* uordblks: in use in the arenas; hblkhd: large allocations mapped on their own (always in use). */
    *in_use = (uint64_t)info.uordblks + (uint64_t)info.hblkhd;
    *free_bytes = (uint64_t)info.fordblks;
    *mapped = (uint64_t)info.hblkhd;
}

int CLinux_heap_fix_mmap_threshold(size_t bytes) {
    return mallopt(M_MMAP_THRESHOLD, (int)bytes);
}
