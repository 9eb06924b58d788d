/* libcollsel's trace lines (runtime/libcollsel/rules.c, lc_trace): each one reaches stderr in a
 * single write(2), so the lines of ranks sharing stderr never interleave mid-line. This program
 * interposes write() (its own definition wins over libc's for rules.c, linked in), records every
 * call, and checks one call per line, whole, ending in '\n'; a line above the 2 KiB buffer is
 * cut, still in one call. Exit 0 when all holds, else 1 with what failed. */
#include "lc_core.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int calls;
static char seen[4096];
static size_t seen_len;

ssize_t write(int fd, const void *buf, size_t n)
{
    calls++;
    if (fd == STDERR_FILENO && seen_len + n <= sizeof seen) {
        memcpy(seen + seen_len, buf, n);
        seen_len += n;
    }
    return (ssize_t)n;
}

static int check(const char *what, int want_calls, const char *want)
{
    if (calls != want_calls || seen_len != strlen(want) || memcmp(seen, want, seen_len) != 0) {
        fprintf(stdout, "%s: %d write call(s), %zu bytes\n", what, calls, seen_len);
        return 1;
    }
    return 0;
}

int main(void)
{
    static char rules[1500], want[4096];
    int bad = 0;
    memset(rules, 'x', sizeof rules - 1);
    lc_trace("collsel-trace resolve %s rank=%ld rules=%s", "bcast", 3L, rules);
    snprintf(want, sizeof want, "collsel-trace resolve bcast rank=3 rules=%s\n", rules);
    bad |= check("a 1.5 KiB line", 1, want);

    calls = 0, seen_len = 0;
    static char huge[3000];
    memset(huge, 'y', sizeof huge - 1);
    lc_trace("%s", huge);
    memcpy(want, huge, 2046);
    want[2046] = '\n';
    want[2047] = '\0';
    bad |= check("a line above 2 KiB, cut", 1, want);
    return bad;
}
