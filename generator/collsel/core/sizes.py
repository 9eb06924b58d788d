"""Size and range notation shared by the commands: byte sizes with K/M/G suffixes, lists of them,
communicator-size lists with A-B ranges, and message-size lists whose A-B ranges mean every power
of two from A to B. Pure functions; bad text is one InputError naming the option.
"""
from collsel.errors import InputError

_SUFFIX = {"": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20, "g": 30,
           "gb": 30, "gib": 30, "b": 0}


def default_msg_sizes(low=1, high=4 << 20):
    """Powers of two and the midpoints 3·2^k between them."""
    sizes = {2**k for k in range(64) if low <= 2**k <= high}
    sizes |= {3 * 2**k for k in range(62) if low <= 3 * 2**k <= high}
    return sorted(sizes)


def parse_size(text, what):
    """Bytes of '4096', '4K', '4MiB', ...; `what` (an option name) prefixes the error."""
    t = text.strip().lower()
    digits = len(t) - len(t.lstrip("0123456789"))
    if digits == 0 or t[digits:] not in _SUFFIX:
        raise InputError(f"{what}: '{text}' is not a size in bytes (e.g. 4096, 4K, 4MiB)")
    return int(t[:digits]) << _SUFFIX[t[digits:]]


def parse_size_list(text, what):
    """Sorted distinct sizes of a comma list."""
    values = [parse_size(x, what) for x in text.split(",") if x.strip()]
    if not values:
        raise InputError(f"{what}: empty list")
    return sorted(set(values))


def parse_comm_sizes(text, what="--comm-sizes"):
    """Sorted communicator sizes of a comma list of integers and ranges A-B (both included)."""
    values = set()
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        lo, _, hi = part.partition("-") if not part.startswith("-") else (part, "", "")
        try:
            lo_v = int(lo)
            hi_v = int(hi) if hi else lo_v
        except ValueError:
            raise InputError(f"{what}: '{part}' is not an integer or a range A-B") from None
        if lo_v < 1 or hi_v < 1:
            raise InputError(f"{what}: communicator size {min(lo_v, hi_v)} is below 1 "
                             "(P must be at least 1)")
        if hi_v < lo_v:
            raise InputError(f"{what}: empty range '{part}'")
        values.update(range(lo_v, hi_v + 1))
    if not values:
        raise InputError(f"{what}: empty list")
    return sorted(values)


def parse_msg_sizes(text, what="--msg-sizes"):
    """Sorted message sizes of a comma list of sizes and ranges A-B; a range is A, every power
    of two between, and B (16K-4M: 16 KiB, 32 KiB, ..., 4 MiB)."""
    out = set()
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        if "-" in part:
            a, b = (parse_size(x, what) for x in part.split("-", 1))
            if a < 1 or b < a:
                raise InputError(f"{what}: bad range '{part}'")
            k = 1 << (a - 1).bit_length()
            out.add(a)
            while k <= b:
                out.add(k)
                k <<= 1
            out.add(b)
        else:
            out.add(parse_size(part, what))
    if not out:
        raise InputError(f"{what}: empty list")
    return sorted(out)
