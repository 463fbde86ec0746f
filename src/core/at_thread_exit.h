// Work for the end of a thread, ordered against the thread_locals of other libraries.
#pragma once

namespace lg::detail {

// Runs `F` when the calling thread's thread_locals are destroyed, before every one that was
// constructed before this call (thread_locals end in the reverse order of their construction).
// Call it right after the first use of a thread_local of another library that `F` must see
// alive (c10's debug-info chain, its callbacks): during exit, objects of static storage
// duration end after all thread_locals, and what they touch then must already be put back.
// Registers once per thread; later calls cost a thread_local lookup.
template <void (*F)()>
void run_at_thread_exit() {
  struct Runner {
    ~Runner() { F(); }
  };
  thread_local Runner runner;  // constructed at the thread's first call
}

}  // namespace lg::detail
