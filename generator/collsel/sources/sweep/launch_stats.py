"""One point's statistics from its repeated launches.

A launch is the experimental unit: separate `mpirun`s of the same point differ by more than one
launch's own confidence interval (measured here: 103-131 µs at 1 MiB, P=2, across launches with
±3 µs CIs within each), because placement, memory layout and the machine's load change between
launches (ReproMPI makes the same observation). So a point is measured in several launches and its
CI is taken across them, not across the repetitions of one launch.
"""
import math

from collsel.core.io import statistic as vocabulary


def t975(df):
    """The 97.5 % quantile of Student's t with `df` degrees of freedom (an array or a number,
    each >= 1): the factor of a sweep's 95 % two-sided intervals. scipy.special's stdtrit, the
    function scipy.stats.t.ppf computes it with, the same values; scipy.stats alone costs a
    command ~1 s to import."""
    from scipy import special   # imported here: SciPy costs every command ~0.3 s to load
    return special.stdtrit(df, 0.975)


LAUNCH_FIELDS = ("mean_us", "median_us", "min_us", "max_us", "stdev_us", "ci_halfwidth_us", "n",
                 "ci_met")
LAUNCHES = (1, 100)             # launches per point (--launches)

# The words behind the sweep's `# statistic=` (metadata key statistic_detail).
STATISTIC_DETAIL = ("time_us = mean over launches of each launch's median per-repetition runtime "
                    "of one call (µs): latest end minus earliest start over ranks "
                    "(CLOCK_MONOTONIC) when all ranks share a node, else the maximum over ranks "
                    "of each rank's own duration (the benchmark's #@runtime_type, recorded as "
                    "runtime_type); every repetition starts after MPI_Barrier, after warm-up "
                    "calls; ci_halfwidth_us is the 95 % Student-t half-width of that mean across "
                    "the launches (with one launch: of the repetitions' mean); median_us is the "
                    "median of the launch medians; mean_us, min_us, max_us, stdev_us and n "
                    "describe all repetitions of all launches; launches counts the launches; "
                    "ci_met = ci_halfwidth_us <= rel_ci x time_us")


def statistic(launches):
    """The sweep's `# statistic=` in the core.io.statistic vocabulary: the slowest rank (or latest
    end minus earliest start), the median over repetitions, the mean over launches."""
    return vocabulary.kind("max", "median", "mean" if launches > 1 else "one")


def combine(launches, rel_ci):
    """Statistics of one point from a list of per-launch dicts (keys LAUNCH_FIELDS, numbers)."""
    k = len(launches)
    if k == 0:
        raise ValueError("no launches to combine")
    medians = sorted(float(x["median_us"]) for x in launches)
    counts = [int(x["n"]) for x in launches]
    means = [float(x["mean_us"]) for x in launches]
    n = sum(counts)
    mean = sum(c * m for c, m in zip(counts, means)) / n
    # Total variance over all repetitions = within-launch part + between-launch part.
    within = sum((c - 1) * float(x["stdev_us"]) ** 2 for c, x in zip(counts, launches))
    between = sum(c * (m - mean) ** 2 for c, m in zip(counts, means))
    stdev = math.sqrt((within + between) / (n - 1)) if n > 1 else 0.0
    if k == 1:
        time_us = medians[0]
        ci = float(launches[0]["ci_halfwidth_us"])
        met = int(launches[0]["ci_met"])
    else:
        time_us = sum(medians) / k
        spread = math.sqrt(sum((m - time_us) ** 2 for m in medians) / (k - 1))
        ci = float(t975(k - 1)) * spread / math.sqrt(k)
        met = int(ci <= rel_ci * time_us)
    median = (medians[k // 2] if k % 2 else (medians[k // 2 - 1] + medians[k // 2]) / 2)
    return {"time_us": time_us, "mean_us": mean, "median_us": median,
            "min_us": min(float(x["min_us"]) for x in launches),
            "max_us": max(float(x["max_us"]) for x in launches),
            "stdev_us": stdev, "ci_halfwidth_us": ci, "n": n, "ci_met": met, "launches": k}
