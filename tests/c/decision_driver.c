/* Test driver: reads "P M" (or "P M Z") lines on stdin, prints "alg segsize faninout" per line
 * from the generated decision function, so tests can compare it with `collsel query`. */
#include <stdio.h>
#include <stdlib.h>
#include "decision.h"

int main(void)
{
    long long p;
    unsigned long long m;
#ifdef DECIDE3
    long long z;
    while (scanf("%lld %llu %lld", &p, &m, &z) == 3) {
        int seg = -1, fan = -1;
        int alg = DECIDE3((int)p, (size_t)m, (int64_t)z, &seg, &fan);
#else
    while (scanf("%lld %llu", &p, &m) == 2) {
        int seg = -1, fan = -1;
        int alg = DECIDE((int)p, (size_t)m, &seg, &fan);
#endif
        printf("%d %d %d\n", alg, seg, fan);
    }
    return 0;
}
