#ifndef CLINUX_H
#define CLINUX_H
/* Linux interfaces Glibc does not expose to Swift: epoll, eventfd, accept4, the CPU affinity
   count and the allocator's statistics. Thin inline wrappers so Swift sees plain functions and
   constants. */
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <spawn.h>
#include "CLinuxCrash.h"

static const uint32_t CLinux_EPOLLIN = EPOLLIN;
static const uint32_t CLinux_EPOLLOUT = EPOLLOUT;
static const uint32_t CLinux_EPOLLERR = EPOLLERR;
static const uint32_t CLinux_EPOLLHUP = EPOLLHUP;
static const uint32_t CLinux_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t CLinux_EPOLLET = EPOLLET;
static const int CLinux_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
static const int CLinux_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
static const int CLinux_EPOLL_CTL_DEL = EPOLL_CTL_DEL;
static const int CLinux_EPOLL_CLOEXEC = EPOLL_CLOEXEC;
static const int CLinux_EFD_CLOEXEC = EFD_CLOEXEC;
static const int CLinux_EFD_NONBLOCK = EFD_NONBLOCK;
static const int CLinux_SOCK_NONBLOCK = SOCK_NONBLOCK;
static const int CLinux_SOCK_CLOEXEC = SOCK_CLOEXEC;
static const int CLinux_MSG_NOSIGNAL = MSG_NOSIGNAL;

int CLinux_epoll_create1(int flags);
int CLinux_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/* Fills events/datas (parallel arrays) so Swift never sees the packed epoll_event layout. */
int CLinux_epoll_wait(int epfd, uint32_t *events, uint64_t *datas, int maxevents, int timeout);
int CLinux_eventfd(unsigned int initval, int flags);
int CLinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
/* sendmsg over an iovec array with MSG_NOSIGNAL: writev that never raises SIGPIPE. */
ssize_t CLinux_writev_nosignal(int fd, const struct iovec *iov, int iovcnt);
/* Number of CPUs in this thread's affinity mask (at least 1). */
int CLinux_affinity_cpu_count(void);
/* Whether this CPU has the SSE 4.2 CRC-32C instruction (Swift cannot name it). */
int CLinux_crc32c_hardware(void);
/* Continues a CRC-32C over `count` bytes with that instruction; only when CLinux_crc32c_hardware(). */
uint32_t CLinux_crc32c_update(uint32_t crc, const uint8_t *bytes, size_t count);
/* pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start, so a program another thread spawns
   meanwhile cannot inherit them (and keep a pipe open that should reach end of file). */
int CLinux_pipe_cloexec(int fds[2]);
/* posix_spawn_file_actions_addclosefrom_np: the child closes every descriptor from `from` on, so it
   inherits none of the parent's sockets and files that lack close-on-exec. */
int CLinux_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);
/* posix_spawn_file_actions_addchdir_np, which needs _GNU_SOURCE. */
int CLinux_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path);
/* glibc's heap, from mallinfo2(): bytes in use by live allocations (small and large ones), bytes the
   allocator holds free (counted in its arenas but not in use), and bytes of the large allocations
   mapped on their own (part of in_use). */
void CLinux_heap_statistics(uint64_t *in_use, uint64_t *free_bytes, uint64_t *mapped);
/* mallopt(M_MMAP_THRESHOLD, bytes): allocations of at least `bytes` are mapped on their own and
   unmapped when freed, and glibc stops raising that threshold as large blocks are freed. 1 when set. */
int CLinux_heap_fix_mmap_threshold(size_t bytes);
#endif
