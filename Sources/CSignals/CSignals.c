#include "CSignals.h"
#include <pthread.h>
#include <signal.h>
#include <string.h>

// A signal handler may only touch a volatile sig_atomic_t; Swift has no such type, hence C.
static volatile sig_atomic_t stop_requested = 0;
static int installed = 0;

static void note_stop(int signal) {
    (void)signal;
    stop_requested = 1;
}

void geotrigger_catch_stop_signals(void) {
    if (installed) return;
    installed = 1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = note_stop;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a blocking read returns EINTR
    sigaction(SIGINT, &action, 0);
    sigaction(SIGTERM, &action, 0);
    // A process may start with them blocked (inherited from its parent's thread), and then the
    // handler would never run.
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &stops, 0);
}

int geotrigger_stop_requested(void) { return stop_requested; }

void geotrigger_clear_stop_request(void) { stop_requested = 0; }

void geotrigger_raise_stop_signal(void) { raise(SIGTERM); }
