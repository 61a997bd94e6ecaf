"""Kubernetes resource quantities: exact parsing and summing (for PodGroup minResources)."""

from __future__ import annotations

import re
from fractions import Fraction

from paddlegen.errors import InvalidValueError

_SUFFIX = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_BINARY = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:([eE][+-]?\d+)|([KMGTPE]i|[numkMGTPE])?)$"
)


def parse(value: str | int | float) -> Fraction:
    """The exact value of a quantity (`500m` -> 1/2, `4Gi` -> 4294967296)."""
    match = _QUANTITY.match(str(value))
    if not match:
        raise InvalidValueError(f"not a quantity: {value!r}")
    number, exponent, suffix = match.groups()
    scale = Fraction(10) ** int(exponent[1:]) if exponent else _SUFFIX[suffix or ""]
    return Fraction(number) * scale


def format_quantity(value: Fraction) -> str:
    """A short exact spelling: whole numbers plain, else millis, large powers of two as Gi/Mi."""
    if value.denominator == 1:
        whole = value.numerator
        for suffix in _BINARY:
            unit = _SUFFIX[suffix].numerator
            if whole >= unit and whole % unit == 0:
                return f"{whole // unit}{suffix}"
        return str(whole)
    millis = value * 1000
    if millis.denominator == 1:
        return f"{millis.numerator}m"
    return str(float(value))  # finer than a milli: Kubernetes would round it anyway


def total(quantities: list[tuple[str | int | float, int]]) -> str:
    """Sum of ``quantity * count`` pairs, formatted."""
    return format_quantity(sum((parse(q) * n for q, n in quantities), Fraction(0)))


# --- what the API server makes of a quantity (k8s.io/apimachinery resource.Quantity) ----------

_NANO = Fraction(1, 10**9)
_MAX_INT64 = 2**63 - 1
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P"}
_DECIMAL_SUFFIX[18] = "E"
_BINARY_SUFFIX = {10 * (i + 1): s for i, s in enumerate(reversed(_BINARY))}


def spelling(value: str | int | float) -> str:
    """A quantity as paddlegen writes it into a manifest: numbers as strings (`2`, `0.5`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        # repr is the shortest exact spelling; format "g" kept 6 digits (1234567.0 -> 1.23457e+06)
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def _format(suffix: str | None, exponent: str | None) -> str:
    if exponent:
        return "DecimalExponent"
    return "BinarySI" if suffix in _BINARY else "DecimalSI"


def server_value(value: str | int | float) -> Fraction:
    """The value the API server holds for a quantity: rounded up to a whole nano (`1e-10` is
    `1n`), binary ones (`Ki`...`Ei`) capped at 2^63-1, as resource.ParseQuantity does."""
    exact = parse(spelling(value))
    nanos = exact / _NANO
    held = Fraction(-(-nanos.numerator // nanos.denominator)) * _NANO  # towards +infinity
    match = _QUANTITY.match(spelling(value))
    assert match is not None  # parse() accepted it
    if _format(match.group(3), match.group(2)) == "BinarySI":
        held = min(held, Fraction(_MAX_INT64))
    return held


def canonical(value: str | int | float) -> str:
    """The quantity as the API server spells it (Quantity.String()): `1000m` is `1`, `1024Mi` is
    `1Gi`, `1e3` stays `1e3`; some spellings it keeps as written (`+1`, `01`, `2k`)."""
    text = spelling(value)
    if text == "0":
        return text
    match = _QUANTITY.match(text)
    if not match:
        raise InvalidValueError(f"not a quantity: {value!r}")
    number, exponent, suffix = match.groups()
    whole, _, fraction = number.lstrip("+-").partition(".")
    whole = whole.lstrip("0") or "0"
    form = _format(suffix, exponent)
    kept = _kept_as_written(whole, fraction, exponent, suffix, form)
    if kept:
        return text
    held = server_value(text)
    if form == "BinarySI" and 0 < held < 1:
        form = "DecimalSI"
    return _canonical_bytes(held, form)


def _kept_as_written(
    whole: str, fraction: str, exponent: str | None, suffix: str | None, form: str
) -> bool:
    """Whether ParseQuantity's fast path keeps the text itself, which String() then returns."""
    digits = whole + fraction
    if form == "BinarySI":
        power = {s: 10 * (len(_BINARY) - i) for i, s in enumerate(_BINARY)}[suffix or ""]
        if fraction or 15 - len(whole) - int(power * 3 / 10) - 1 < 0:
            return False
        if int(whole) << power > _MAX_INT64:
            return False
        return int(whole) & 0x07 != 0
    scale = int(exponent[1:]) if exponent else _SCALE_OF[suffix or ""]
    if 18 - len(whole) - len(fraction) < 0:
        return False
    scale -= len(fraction)
    if scale < -9:
        return False
    return scale % 3 == 0 and not digits.endswith("000") and digits[0] != "0"


_SCALE_OF = {s: e for e, s in _DECIMAL_SUFFIX.items()}


def _canonical_bytes(value: Fraction, form: str) -> str:
    """Quantity.CanonicalizeBytes for a value already rounded to nanos."""
    if value == 0:
        return "0"
    if form == "BinarySI" and (value < 1024 or value.denominator != 1):
        form = "DecimalSI"
    if form == "BinarySI":
        amount, power = value.numerator, 0
        while amount % 1024 == 0:
            amount //= 1024
            power += 10
        return f"{amount}{_BINARY_SUFFIX.get(power, '')}"
    amount, power = (value / _NANO).numerator, -9  # a whole number of nanos
    while amount % 10 == 0:
        amount //= 10
        power += 1
    while power % 3:
        amount *= 10
        power -= 1
    if form == "DecimalExponent":
        return f"{amount}{f'e{power}' if power else ''}"
    return f"{amount}{_DECIMAL_SUFFIX.get(power, '')}"
