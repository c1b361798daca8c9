/* wallshift: an LD_PRELOAD shim that shifts a process's wall clock (CLOCK_REALTIME,
 * gettimeofday, time) by an offset in milliseconds read from the file named by
 * WALLSHIFT_FILE on every call; the monotonic clocks are left alone. The recorder
 * (record.py) steps a redis-server's wall clock with it.
 *
 * Why not libfaketime: Debian's redis-server links jemalloc, and libfaketime cannot
 * initialise under jemalloc (libfaketime issues #130 and #327: recursive clock_gettime
 * during start-up, the server dies). This shim takes the real time from the clock_gettime
 * system call, so it calls nothing that allocates.
 *
 * Build: cc -O2 -shared -fPIC -o wallshift.so wallshift.c */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The offset in ms: the file's text, an optional '-' and decimal digits; 0 if the file is
 * missing or empty. */
static long long offset_ms(void) {
    const char *path = getenv("WALLSHIFT_FILE");
    if (path == NULL) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    long long v = 0;
    int neg = 0, i = 0;
    if (buf[0] == '-') { neg = 1; i = 1; }
    for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) v = v * 10 + (buf[i] - '0');
    return neg ? -v : v;
}

static int real_clock_gettime(clockid_t clk, struct timespec *ts) {
    return (int)syscall(SYS_clock_gettime, clk, ts);
}

static void shift(struct timespec *ts) {
    long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_ms() * 1000000LL;
    ts->tv_sec = (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
    if (ts->tv_nsec < 0) { ts->tv_nsec += 1000000000L; ts->tv_sec -= 1; }
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
    int r = real_clock_gettime(clk, ts);
    if (r == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)) shift(ts);
    return r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec ts;
    if (real_clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    shift(&ts);
    if (tv != NULL) { tv->tv_sec = ts.tv_sec; tv->tv_usec = ts.tv_nsec / 1000; }
    return 0;
}

time_t time(time_t *t) {
    struct timespec ts;
    real_clock_gettime(CLOCK_REALTIME, &ts);
    shift(&ts);
    if (t != NULL) *t = ts.tv_sec;
    return ts.tv_sec;
}
