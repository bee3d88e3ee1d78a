# cython: language_level=3, boundscheck=False, wraparound=False
"""`rillet.glob.match` compiled: the same loop over C bytes (tests/test_glob.py compares them).

Keep in step with glob.py, which documents the algorithm and Redis's quirks.
"""

cdef enum:
    MAX_NESTING = 1000  # glob.MAX_NESTING


cdef inline int _lower(int c) noexcept nogil:
    return c + 32 if 65 <= c <= 90 else c


cdef inline int _signed(unsigned char c) noexcept nogil:
    return <int>(<signed char>c)


def match(bytes pattern, bytes subject, bint nocase=False):
    return _match(pattern, len(pattern), subject, len(subject), nocase)


cdef bint _match(const unsigned char* pat, Py_ssize_t plen, const unsigned char* sub,
                 Py_ssize_t slen, bint nocase) noexcept nogil:
    cdef Py_ssize_t p = 0, i = 0, star_p = -1, star_i = 0
    cdef int depth = 0, start, end, ch
    cdef unsigned char c, s
    cdef bint failed, negate, hit
    while True:
        failed = False
        while p < plen and i < slen:
            c = pat[p]
            if c == b'*':
                while p + 1 < plen and pat[p + 1] == b'*':
                    p += 1
                if p + 1 == plen:
                    return True
                depth += 1
                if depth > MAX_NESTING:
                    return False
                star_p = p + 1
                star_i = i
                p = star_p
                continue
            if c == b'?':
                i += 1
            elif c == b'[':
                p += 1
                negate = p < plen and pat[p] == b'^'
                if negate:
                    p += 1
                hit = False
                s = sub[i]
                while True:
                    if p < plen and pat[p] == b'\\' and plen - p >= 2:
                        p += 1
                        if pat[p] == s:
                            hit = True
                    elif p < plen and pat[p] == b']':
                        break
                    elif p >= plen:
                        p -= 1
                        break
                    elif plen - p >= 3 and pat[p + 1] == b'-':
                        start = _signed(pat[p])
                        end = _signed(pat[p + 2])
                        ch = _signed(s)
                        if start > end:
                            start, end = end, start
                        if nocase:
                            start = _lower(start)
                            end = _lower(end)
                            ch = _lower(ch)
                        p += 2
                        if start <= ch <= end:
                            hit = True
                    elif pat[p] == s or (nocase and _lower(pat[p]) == _lower(s)):
                        hit = True
                    p += 1
                if hit == negate:
                    failed = True
                    break
                i += 1
            else:
                if c == b'\\' and plen - p >= 2:
                    p += 1
                    c = pat[p]
                s = sub[i]
                if c != s and not (nocase and _lower(c) == _lower(s)):
                    failed = True
                    break
                i += 1
            p += 1
            if i == slen:
                while p < plen and pat[p] == b'*':
                    p += 1
                break
        if not failed and p == plen and i == slen:
            return True
        if star_p < 0:
            return False
        star_i += 1
        if star_i >= slen:
            return False
        p = star_p
        i = star_i
