#ifndef GEOTRIGGER_CSIGNALS_H
#define GEOTRIGGER_CSIGNALS_H

// SIGINT and SIGTERM noted in a volatile sig_atomic_t, the one thing a signal handler may touch
// (Swift has no such type). Static inline, as the project's other C helpers are: compiled into
// the one Swift module that imports this header (GeotriggerReadings' StopSignals), so the note
// has a single copy; import it nowhere else.

#include <pthread.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t geotrigger_stop_note = 0;

static inline void geotrigger_note_stop(int signal) {
    (void)signal;
    geotrigger_stop_note = 1;
}

/// Installs handlers for SIGINT and SIGTERM that only note the signal (no SA_RESTART, so a read
/// waiting for input returns EINTR), and unblocks them: a process may start with them blocked
/// (inherited from its parent's thread), and the handler would then never run.
static inline void geotrigger_catch_stop_signals(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = geotrigger_note_stop;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGINT, &action, 0);
    sigaction(SIGTERM, &action, 0);
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stops, 0);
}

/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
static inline int geotrigger_stop_requested(void) { return geotrigger_stop_note; }

#endif
