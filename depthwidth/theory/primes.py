"""Primality of whole numbers: head counts (a prime count of heads splits over no tensor-parallel
degree but 1 and itself, ``arch.hardware``) and the primes of certify's modular ranks. Pure; standard
library only (the hardware checks import it without the exact solver's fractions).
"""
from __future__ import annotations


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin: the first twelve prime bases decide every n < 3.3·10^24 (far past
    any head count or certify prime)."""
    if n < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    for small in bases:
        if n % small == 0:
            return n == small
    odd, twos = n - 1, 0
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    for base in bases:
        x = pow(base, odd, n)
        if x in (1, n - 1):
            continue
        for _ in range(twos - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True
