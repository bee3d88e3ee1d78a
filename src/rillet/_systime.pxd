# SystemClock.now_ms (rillet/clock.py) for the compiled modules: what
# time.time_ns() // 1_000_000 reads, CLOCK_REALTIME, without a Python call.

cimport cython
from posix.time cimport CLOCK_REALTIME, clock_gettime, timespec


@cython.cdivision(True)
cdef inline long long system_now_ms() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.tv_sec * 1000LL + ts.tv_nsec // 1000000
