/* A communicator's rule list: the tree asked once per message-size cell, neighbours merged. */
#include "lc_core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int same_choice(const collsel_tree_choice *a, const collsel_tree_choice *b)
{
    return a->algorithm == b->algorithm && a->segsize == b->segsize && a->faninout == b->faninout;
}

/* The block of a rule list with room for n_rules rules and n_choices choices (the uint64_t
 * array first, so every part is aligned). */
static int allocate(struct lc_rules *r, uint32_t n_rules, uint32_t n_choices)
{
    size_t bytes = (size_t)n_rules * (sizeof *r->from + sizeof *r->choice_of)
                   + (size_t)n_choices * sizeof *r->choices;
    unsigned char *block = malloc(bytes);
    if (!block)
        return -1;
    r->from = (uint64_t *)(void *)block;
    r->choice_of = (uint32_t *)(void *)(block + (size_t)n_rules * sizeof *r->from);
    r->choices = (collsel_tree_choice *)(void *)(block + (size_t)n_rules
                                                 * (sizeof *r->from + sizeof *r->choice_of));
    r->bytes = bytes;
    return 0;
}

/* Every cell's rule into `all` (room for a rule and a choice per cell): a cell's decision holds
 * from its first msg_size (0, or its cut) on, so each cell is asked there. */
static collsel_tree_error fill(const collsel_tree *tree, int32_t comm_size, int64_t z,
                               const uint64_t *cuts, uint32_t n_cuts, struct lc_rules *all)
{
    uint32_t cell, k;
    for (cell = 0; cell <= n_cuts; cell++) {
        uint64_t m = cell ? cuts[cell - 1] : 0;
        collsel_tree_choice c;
        collsel_tree_error err = collsel_tree_axes(tree) == 3
                                     ? collsel_tree_decide3(tree, comm_size, m, z, &c)
                                     : collsel_tree_decide(tree, comm_size, m, &c);
        if (err)
            return err;
        if (all->n_rules
            && same_choice(&c, &all->choices[all->choice_of[all->n_rules - 1]]))
            continue;
        for (k = 0; k < all->n_choices && !same_choice(&c, &all->choices[k]); k++)
            ;
        if (k == all->n_choices)
            all->choices[all->n_choices++] = c;
        all->from[all->n_rules] = m;
        all->choice_of[all->n_rules++] = k;
    }
    return COLLSEL_TREE_OK;
}

collsel_tree_error lc_rules_resolve(const collsel_tree *tree, int32_t comm_size, int64_t z,
                                    struct lc_rules *out)
{
    struct lc_rules all;
    uint32_t n_cuts = collsel_tree_msg_cuts(tree, NULL, 0);
    uint64_t *cuts = malloc(((size_t)n_cuts + 1) * sizeof *cuts);
    collsel_tree_error err = COLLSEL_TREE_ENOMEM;
    memset(out, 0, sizeof *out);
    memset(&all, 0, sizeof all);
    if (cuts && allocate(&all, n_cuts + 1, n_cuts + 1) == 0) {
        collsel_tree_msg_cuts(tree, cuts, n_cuts);
        err = fill(tree, comm_size, z, cuts, n_cuts, &all);
        if (!err && allocate(out, all.n_rules, all.n_choices) != 0)
            err = COLLSEL_TREE_ENOMEM;
        if (!err) {
            out->n_rules = all.n_rules;
            out->n_choices = all.n_choices;
            memcpy(out->from, all.from, all.n_rules * sizeof *all.from);
            memcpy(out->choice_of, all.choice_of, all.n_rules * sizeof *all.choice_of);
            memcpy(out->choices, all.choices, all.n_choices * sizeof *all.choices);
        }
    }
    free(all.from);
    free(cuts);
    return err;
}

uint32_t lc_rules_lookup(const struct lc_rules *rules, uint64_t msg_size)
{
    uint32_t low = 0, high = rules->n_rules;   /* the rule is in [low, high) */
    while (high - low > 1) {
        uint32_t mid = low + (high - low) / 2;
        if (rules->from[mid] <= msg_size)
            low = mid;
        else
            high = mid;
    }
    return rules->choice_of[low];
}

void lc_rules_format(const struct lc_rules *rules, char *buf, size_t size)
{
    size_t used = 0;
    uint32_t k;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (k = 0; k < rules->n_rules && used < size; k++) {
        const collsel_tree_choice *c = &rules->choices[rules->choice_of[k]];
        int n = snprintf(buf + used, size - used, "%s%llu:%ld/%ld/%ld", k ? "," : "",
                         (unsigned long long)rules->from[k], (long)c->algorithm,
                         (long)c->segsize, (long)c->faninout);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

void lc_rules_free(struct lc_rules *rules)
{
    free(rules->from);
    memset(rules, 0, sizeof *rules);
}

/* stdio may split one fprintf into several write(2)s (a long line, a partly filled buffer), and
 * every rank of a launch writes the same stderr: formatted here, written by one call. */
void lc_trace(const char *format, ...)
{
    char line[2048];
    va_list ap;
    int n;
    va_start(ap, format);
    n = vsnprintf(line, sizeof line - 1, format, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)(sizeof line - 2);
    line[n++] = '\n';
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n);
        if (w <= 0)
            return;     /* nothing to report a failed trace on; the call goes on */
        /* a short write (a pipe near full): the rest follows at once, still one line */
        memmove(line, line + w, (size_t)(n - w));
        n -= (int)w;
    }
}
