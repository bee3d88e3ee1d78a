# C entry points of _fpconv.pyx for the other compiled modules (the reply encoder).
# Each writes at most FPCONV_MAX bytes at `dest` and returns how many it wrote.

cdef enum:
    FPCONV_MAX = 32

cdef int fpconv_dtoa(double value, char* dest) noexcept nogil
cdef int d2string(double value, char* dest) noexcept nogil
