"""The test oracle of the shortest 32-bit float text: the digit search the package used before
it took numpy's Dragon4 (slow, ≈0.1 ms a float, but plainly right).

For each precision from one digit up, the correctly rounded decimal and its two neighbours are
the only candidates that can read back as the float; the first precision with a candidate that
does wins, the candidate closest to the exact value among them.
"""

from decimal import Decimal

from pytest_taguru.core.jsontext import to_f32


def oracle_f32_digits(value: float) -> tuple[str, int]:
    """Shortest digits and scientific exponent of ``|value|`` as a 32-bit float (finite,
    non-zero)."""
    target = to_f32(abs(value))
    for precision in range(9):
        rounded = f"{target:.{precision}e}"
        mantissa, _, exp_text = rounded.partition("e")
        scaled = int(mantissa.replace(".", ""))
        exp = int(exp_text) - precision
        fits = [
            candidate
            for candidate in (scaled, scaled - 1, scaled + 1)
            if candidate > 0 and to_f32(float(f"{candidate}e{exp}")) == target
        ]
        if fits:
            best = min(fits, key=lambda c: abs(Decimal(f"{c}e{exp}") - Decimal(target)))
            return _normalized(Decimal(f"{best}e{exp}"))
    return _normalized(Decimal(repr(target)))


def _normalized(number: Decimal) -> tuple[str, int]:
    _, digit_tuple, exp = number.normalize().as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple))
    return digits, len(digits) - 1 + exp
