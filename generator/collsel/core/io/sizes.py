"""Size, count and range notation shared by every command: one reader (`parse_size`) of sizes
and counts with K/M/G suffixes (2^10, 2^20, 2^30) or 2^K, lists of them whose A-B ranges mean
every power of two from A to B, and communicator-size lists whose A-B ranges mean every integer.
Pure functions; bad text is one InputError naming the option and listing the accepted forms.

Every size is held to the ranges of core.io.values (a message size is a uint64_t, a communicator
size an int), so nothing the table reader would later reject gets through; a communicator-size
list is counted from its ranges before it is expanded, so `1-2000000000` is refused (`limit`)
instead of filling the memory.
"""
import re

from collsel.core.io import values
from collsel.errors import InputError

_SUFFIX = {"": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20, "g": 30,
           "gb": 30, "gib": 30, "b": 0}
_POWER = re.compile(r"2\^(\d{1,4})")
# More distinct communicator sizes than this in one list is a typo (and a list that size takes
# tens of MB): `parse_comm_sizes` refuses it unless the caller passes its own limit.
MAX_COMM_SIZE_COUNT = 1_000_000
_MAX_DIGITS = 40        # longer numbers are out of every range (and int() refuses > 4300 digits)


def default_msg_sizes(low=1, high=4 << 20) -> list:
    """Powers of two and the midpoints 3·2^k between them."""
    sizes = {2**k for k in range(64) if low <= 2**k <= high}
    sizes |= {3 * 2**k for k in range(62) if low <= 3 * 2**k <= high}
    return sorted(sizes)


def _size_value(text):
    """The integer the text spells (bytes, ranks, a count), or None when it is not size notation;
    a minus sign gives a negative value (refused by the range check, which names it)."""
    t = text.strip().lower()
    power = _POWER.fullmatch(t)
    if power:
        return 2 ** int(power.group(1))
    sign = -1 if t.startswith("-") else 1
    t = t[1:] if sign < 0 else t
    digits = len(t) - len(t.lstrip("0123456789"))
    if digits == 0 or t[digits:] not in _SUFFIX:
        return None
    if digits > _MAX_DIGITS:
        return sign * 2 ** 128     # out of range, whatever the digits
    return sign * (int(t[:digits]) << _SUFFIX[t[digits:]])


# What parse_size reads, for its error message.
SIZE_FORMS = "4096, 4K, 4KiB, 64M, 1G, 2^20 (K, M, G = 2^10, 2^20, 2^30)"
LIST_FORMS = "a comma list such as 1K,4K,64K; A-B is A, every power of two between, and B"


def parse_size(text, what, low=values.MSG_SIZE[0], high=values.MSG_SIZE[1], name="size") -> int:
    """The integer of '4096', '4K', '4MiB', '2^20', ... in [low, high] (default: a message size,
    0 .. 2^64-1): the one reader of every size and count a command line or a points file gives
    (message and segment sizes, communicator sizes, ranks per node). `what` (an option name, or
    FILE:LINE) prefixes the error; `name` says what the value is."""
    value = _size_value(str(text))
    shown = str(text).strip() if len(str(text).strip()) <= 30 else str(text).strip()[:27] + "..."
    where = f"{what}: " if what else ""
    if value is None:
        raise InputError(f"{where}{name} '{shown}' is not a size or count (accepted: "
                         f"{SIZE_FORMS})")
    if not low <= value <= high:
        raise InputError(f"{where}{name} {shown} out of range [{low}, {high}]")
    return value


def comm_size(text, what) -> int:
    """A communicator size (an int) in parse_size's notation."""
    return parse_size(text, what, *values.COMM_SIZE, name="comm_size")


def msg_size(text, what) -> int:
    """A message size to ask a tree or a rules file about (a size_t), in parse_size's notation."""
    return parse_size(text, what, *values.MSG_SIZE, name="msg_size")


def parse_size_list(text, what, low=values.MSG_SIZE[0], high=values.MSG_SIZE[1],
                    name="size") -> list:
    """Sorted distinct sizes of a comma list of sizes and ranges A-B, each in [low, high]; a
    range is A, every power of two between, and B (16K-4M: 16 KiB, 32 KiB, ..., 4 MiB)."""
    out = set()
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        if "-" in part[1:]:
            a, b = (parse_size(x, what, low, high, name) for x in part.split("-", 1))
            if a < 1 or b < a:
                raise InputError(f"{what}: bad range '{part}' ({LIST_FORMS}, from 1 up)")
            k = 1 << (a - 1).bit_length()
            out.add(a)
            while k <= b:
                out.add(k)
                k <<= 1
            out.add(b)
        else:
            out.add(parse_size(part, what, low, high, name))
    if not out:
        raise InputError(f"{what}: empty list ({LIST_FORMS})")
    return sorted(out)


def _comm_size(text, what, part):
    if _size_value(text) is None:
        raise InputError(f"{what}: '{part}' is not a communicator size or a range A-B (accepted: "
                         f"{SIZE_FORMS}; A-B is every integer from A to B)")
    return parse_size(text, what, *values.COMM_SIZE, name="communicator size")


def comm_size_ranges(text, what="--comm-sizes"):
    """The communicator sizes of a comma list of integers and ranges A-B (both included), as
    sorted, disjoint (low, high) ranges: counted without expanding them."""
    ranges = []
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        lo, _, hi = part.partition("-") if not part.startswith("-") else (part, "", "")
        lo_v = _comm_size(lo, what, part)
        hi_v = _comm_size(hi, what, part) if hi else lo_v
        if hi_v < lo_v:
            raise InputError(f"{what}: empty range '{part}'")
        ranges.append((lo_v, hi_v))
    if not ranges:
        raise InputError(f"{what}: empty list")
    merged = []
    for lo_v, hi_v in sorted(ranges):
        if merged and lo_v <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi_v))
        else:
            merged.append((lo_v, hi_v))
    return merged


def count(ranges) -> int:
    """How many values (low, high) ranges hold."""
    return sum(hi - lo + 1 for lo, hi in ranges)


def parse_comm_sizes(text, what="--comm-sizes", limit=MAX_COMM_SIZE_COUNT):
    """Sorted communicator sizes of a comma list of integers and ranges A-B (both included);
    more than `limit` of them is refused before any list is built."""
    ranges = comm_size_ranges(text, what)
    n = count(ranges)
    if n > limit:
        raise InputError(f"{what}: {n} communicator sizes, more than the {limit} one list may "
                         "hold; give fewer or sparser values (e.g. 2,4,8,...)")
    return [v for lo, hi in ranges for v in range(lo, hi + 1)]
