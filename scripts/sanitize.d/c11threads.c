// Preloaded (LD_PRELOAD) by scripts/sanitize into ThreadSanitizer runs only.
//
// Why: Debian's librdkafka (2.0.2) is built on glibc's C11 threads (thrd_create, mtx_lock,
// cnd_wait, call_once). glibc implements them by calling its internal __pthread_* functions,
// so ThreadSanitizer's pthread interceptors never see them, and the TSan runtime shipped with
// Swift 6.3 (LLVM 21) has no C11-thread interceptors of its own. A thread started by
// thrd_create is unknown to TSan: its first malloc/calloc finds no TSan processor and the
// process dies with "ThreadSanitizer: SEGV on unknown address 0x...c38 ... nested bug in the
// same thread" (google/sanitizers#1195; librdkafka added --disable-c11threads for this, #2541).
// And librdkafka's locks and condition variables would be invisible to TSan, so every handoff
// from its threads to ours (messages, callbacks) would look like a race.
//
// What: each C11 function librdkafka imports, with glibc's meaning but made of the public
// pthread functions, which TSan intercepts (thrd_create through a small trampoline, so the
// int-returning start routine is called as what it is). glibc's thrd_t, mtx_t, cnd_t and once_flag
// are its pthread_t, pthread_mutex_t, pthread_cond_t and pthread_once_t (same size and layout),
// and its results map the same way. Nothing else is changed. Built by scripts/sanitize with the
// system cc, not instrumented itself: TSan sees the pthread calls it makes.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

static int result(int err) {
    switch (err) {
    case 0: return thrd_success;
    case ENOMEM: return thrd_nomem;
    case ETIMEDOUT: return thrd_timedout;
    case EBUSY: return thrd_busy;
    default: return thrd_error;
    }
}

struct start { thrd_start_t start; void *arg; };

static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    return (void *)(intptr_t)s.start(s.arg);  // read back by thrd_join as (int)(intptr_t)
}

int thrd_create(thrd_t *thread, thrd_start_t start, void *arg) {
    struct start *s = malloc(sizeof *s);
    if (!s) return thrd_nomem;
    s->start = start;
    s->arg = arg;
    int err = pthread_create((pthread_t *)thread, NULL, trampoline, s);
    if (err) free(s);
    return err == EAGAIN ? thrd_nomem : result(err);
}
int thrd_join(thrd_t thread, int *res) {
    void *value;
    int err = pthread_join((pthread_t)thread, &value);
    if (err == 0 && res) *res = (int)(intptr_t)value;
    return result(err);
}
int thrd_detach(thrd_t thread) { return result(pthread_detach((pthread_t)thread)); }
_Noreturn void thrd_exit(int res) { pthread_exit((void *)(intptr_t)res); }

int mtx_init(mtx_t *mutex, int type) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    // glibc: mtx_plain and mtx_timed are normal mutexes, | mtx_recursive a recursive one.
    if (type & mtx_recursive) pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    int err = pthread_mutex_init((pthread_mutex_t *)mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    return result(err);
}
int mtx_lock(mtx_t *mutex) { return result(pthread_mutex_lock((pthread_mutex_t *)mutex)); }
int mtx_trylock(mtx_t *mutex) { return result(pthread_mutex_trylock((pthread_mutex_t *)mutex)); }
int mtx_timedlock(mtx_t *restrict mutex, const struct timespec *restrict time_point) {
    return result(pthread_mutex_timedlock((pthread_mutex_t *)mutex, time_point));
}
int mtx_unlock(mtx_t *mutex) { return result(pthread_mutex_unlock((pthread_mutex_t *)mutex)); }
void mtx_destroy(mtx_t *mutex) { pthread_mutex_destroy((pthread_mutex_t *)mutex); }

int cnd_init(cnd_t *cond) { return result(pthread_cond_init((pthread_cond_t *)cond, NULL)); }
int cnd_signal(cnd_t *cond) { return result(pthread_cond_signal((pthread_cond_t *)cond)); }
int cnd_broadcast(cnd_t *cond) { return result(pthread_cond_broadcast((pthread_cond_t *)cond)); }
int cnd_wait(cnd_t *cond, mtx_t *mutex) {
    return result(pthread_cond_wait((pthread_cond_t *)cond, (pthread_mutex_t *)mutex));
}
int cnd_timedwait(cnd_t *restrict cond, mtx_t *restrict mutex, const struct timespec *restrict time_point) {
    return result(pthread_cond_timedwait((pthread_cond_t *)cond, (pthread_mutex_t *)mutex, time_point));
}
void cnd_destroy(cnd_t *cond) { pthread_cond_destroy((pthread_cond_t *)cond); }

void call_once(once_flag *flag, void (*func)(void)) { pthread_once((pthread_once_t *)flag, func); }
