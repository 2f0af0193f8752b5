#ifndef CLINUX_H
#define CLINUX_H
/* Filled in by the HTTP server work: epoll, eventfd, timerfd, accept4. */
#endif
