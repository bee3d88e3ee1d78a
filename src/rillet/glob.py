"""Redis's glob matcher (util.c `stringmatchlen`), in time linear per attempt.

Every pattern a client sends goes through here: KEYS, SCAN MATCH, CONFIG GET,
COMMAND LIST FILTERBY PATTERN, and later PSUBSCRIBE and ACL patterns. It used
to become a Python regular expression, whose backtracking made
`KEYS a*a*a*...b` run for ever; this is Redis's algorithm instead, with its
semantics and its two bounds:

- Redis recurses at each `*` and sets `skipLongerMatches` once the rest of the
  pattern matched nowhere in the rest of the subject; from then on every
  caller fails at once. So only the innermost `*` ever retries, and the
  recursion is a loop that remembers one `*`: O(len(pattern) x len(subject)).
- Redis gives up (no match) when a match would need more than 1000 nested
  `*`; the loop keeps that rule, so results agree with Redis byte for byte.

Quirks kept on purpose because Redis has them: an unterminated `[` class
closes at the end of the pattern; a `\\` at the very end is a literal
backslash; class ranges compare C `char`s, which are signed (bytes >= 0x80
are negative); NOCASE folds ASCII only; `*` does not match an empty subject
(callers shortcut the pattern `*` before matching, as Redis's do).

`glob_match` is the compiled kernel from `_glob.pyx` when it is built, and
`match` below otherwise; tests/test_glob.py checks the two agree.
"""

from __future__ import annotations

import os

MAX_NESTING = 1000  # Redis: stringmatchlen_impl gives up past this many nested '*'

_STAR, _QUESTION, _OPEN, _CLOSE, _BACKSLASH, _CARET, _DASH = b"*?[]\\^-"


def _signed(byte: int) -> int:
    return byte - 256 if byte >= 128 else byte


def _lower(byte: int) -> int:
    return byte + 32 if 65 <= byte <= 90 else byte


def match(pattern: bytes, subject: bytes, nocase: bool = False) -> bool:
    """True if `subject` matches the glob `pattern` as Redis's stringmatchlen decides."""
    plen = len(pattern)
    slen = len(subject)
    p = i = 0
    # The innermost '*' being tried: where the pattern resumes after it, and
    # the subject position its current attempt starts from.
    star_p = -1
    star_i = 0
    depth = 0  # nesting of the current attempt, as Redis counts it
    while True:
        # One attempt: Redis's loop body from (p, i). `failed` ends it without a match.
        failed = False
        while p < plen and i < slen:
            c = pattern[p]
            if c == _STAR:
                while p + 1 < plen and pattern[p + 1] == _STAR:
                    p += 1
                if p + 1 == plen:
                    return True  # a trailing '*' matches whatever is left
                depth += 1
                if depth > MAX_NESTING:
                    return False
                star_p = p + 1
                star_i = i
                p = star_p
                continue
            if c == _QUESTION:
                i += 1
            elif c == _OPEN:
                p += 1
                negate = p < plen and pattern[p] == _CARET
                if negate:
                    p += 1
                hit = False
                s = subject[i]
                while True:
                    if p < plen and pattern[p] == _BACKSLASH and plen - p >= 2:
                        p += 1
                        if pattern[p] == s:
                            hit = True
                    elif p < plen and pattern[p] == _CLOSE:
                        break
                    elif p >= plen:
                        p -= 1  # unterminated: the class ends with the pattern
                        break
                    elif plen - p >= 3 and pattern[p + 1] == _DASH:
                        start, end, ch = _signed(pattern[p]), _signed(pattern[p + 2]), _signed(s)
                        if start > end:
                            start, end = end, start
                        if nocase:
                            start, end, ch = _lower(start), _lower(end), _lower(ch)
                        p += 2
                        if start <= ch <= end:
                            hit = True
                    elif pattern[p] == s or (nocase and _lower(pattern[p]) == _lower(s)):
                        hit = True
                    p += 1
                if hit == negate:
                    failed = True
                    break
                i += 1
            else:
                if c == _BACKSLASH and plen - p >= 2:
                    p += 1
                    c = pattern[p]
                s = subject[i]
                if c != s and not (nocase and _lower(c) == _lower(s)):
                    failed = True
                    break
                i += 1
            p += 1
            if i == slen:
                while p < plen and pattern[p] == _STAR:
                    p += 1
                break
        if not failed and p == plen and i == slen:
            return True
        # This attempt failed: the innermost '*' takes one more byte, if any is left.
        if star_p < 0:
            return False
        star_i += 1
        if star_i >= slen:
            return False  # Redis sets skipLongerMatches: every outer '*' fails too
        p = star_p
        i = star_i


def _compiled_match():
    if os.environ.get("RILLET_PURE"):
        return None
    try:
        from rillet._glob import match
    except ImportError:  # not built: the Python loop above is the matcher
        return None
    return match


glob_match = _compiled_match() or match
