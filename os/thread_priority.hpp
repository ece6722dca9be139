#pragma once

namespace mailassay::os {

/// Gives the calling thread `nice` (0-19) and the name `name` (at most 15
/// characters, shown by top -H and in /proc/PID/task/TID/comm).
///
/// Batch work runs on such threads so that, when both cores are busy, the
/// kernel runs real-time requests first (docs/batch.md). Only the calling
/// thread changes: Linux keeps a niceness per thread. Failures are ignored:
/// the work still runs, only without the lower priority.
void lower_thread_priority(int nice, const char* name);

} // namespace mailassay::os
