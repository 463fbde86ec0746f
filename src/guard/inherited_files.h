// Which output files belong to the parent process, in a process started by one that ran the
// guard.
//
// A forked child (a DataLoader worker, a fork-based pool's worker) inherits a copy of the
// parent's settings, whose file paths were expanded for the parent (%p is the parent's id),
// and of its records. It keeps checking and warn mode keeps logging, but it writes no events,
// report, baseline or exit summary: its lines would interleave with the parent's event stream,
// and its report would replace the parent's with a mix of both.
//
// A spawned child (multiprocessing's spawn and forkserver methods, torch.multiprocessing.spawn)
// starts empty and reads the settings again, so a path with %p names a file of its own. The
// code that switches it on (the Python package) notes which of its paths came out the same as
// the parent's: those files it does not write; the others, and its exit summary, it does.
// Internal to src/guard.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace lg::guard::detail {

// Starts noting forks (pthread_atfork, once per process); cheap after the first call.
void watch_forks();

// Whether this process is a child forked after watch_forks(). A flag, read without a lock.
bool in_forked_child();

// Marks this process as started afresh by `parent` (a process id), whose output files are
// `paths` (expanded): no longer a forked child, if it was forked from a process that loaded the
// guard (a forkserver; the caller resets the settings and records it copied). Called once,
// before the first op; a second call replaces the first.
void note_spawned_child(pid_t parent, std::vector<std::string> paths);

// The parent's id after note_spawned_child(), else 0.
pid_t spawning_parent();

// Whether writing `path` would write one of the parent's files: every path in a forked child,
// the noted ones in a spawned child. Takes no lock.
bool parents_file(const std::string& path);

}  // namespace lg::guard::detail
