/* Callgrind client requests for the breakdown harness (Native.cs loads this through CACHEDAES_CGMARK).
 * Outside valgrind the requests are no-ops. Built by breakdown.sh. */
#include <valgrind/callgrind.h>

void cgmark_zero(void) { CALLGRIND_ZERO_STATS; }

void cgmark_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
