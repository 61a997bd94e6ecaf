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
