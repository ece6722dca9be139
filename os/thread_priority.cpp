#include "os/thread_priority.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mailassay::os {

namespace {

id_t this_thread_id() {
  return static_cast<id_t>(::syscall(SYS_gettid));
}

} // namespace

void lower_thread_priority(int nice, const char* name) {
  // With PRIO_PROCESS and a thread id, Linux changes that thread only.
  ::setpriority(PRIO_PROCESS, this_thread_id(), nice);
  ::pthread_setname_np(::pthread_self(), name);
}

} // namespace mailassay::os
