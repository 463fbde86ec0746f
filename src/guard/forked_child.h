// A process forked from one that ran the guard (a DataLoader worker, a fork-based pool's
// worker) inherits a copy of its settings, whose file paths were expanded for the parent (%p
// is the parent's id), and of its records. It keeps checking and warn mode keeps logging, but
// it writes no events, report, baseline or exit summary: its lines would interleave with the
// parent's event stream, and its report would replace the parent's with a mix of both.
// Internal to src/guard.
#pragma once

namespace lg::guard::detail {

// Starts noting forks (pthread_atfork, once per process); cheap after the first call.
void watch_forks();

// Whether this process is a child forked after watch_forks(). A flag, read without a lock.
bool in_forked_child();

}  // namespace lg::guard::detail
