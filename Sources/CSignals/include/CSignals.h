#ifndef GEOTRIGGER_CSIGNALS_H
#define GEOTRIGGER_CSIGNALS_H

/// Installs handlers for SIGINT and SIGTERM that only note the signal (no SA_RESTART, so a read
/// waiting for input returns EINTR). Idempotent.
void geotrigger_catch_stop_signals(void);

/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
int geotrigger_stop_requested(void);

/// Clears the note (tests run several replays in one process).
void geotrigger_clear_stop_request(void);

/// Sends this process SIGTERM as a user would (tests).
void geotrigger_raise_stop_signal(void);

#endif
