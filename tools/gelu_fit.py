#!/usr/bin/python3
"""Fits the coefficients of ditto's float GELU (math::gelu in
ditto/kernels/cpu/erf.h).

  GELU(x) = x Phi(x), Phi the standard normal CDF.
  Phi(x) = 1/2 + x R(x^2) for |x| < C = 5.5426 (beyond, Phi rounds to 1 in
  float for x > 0 and the result is 0 for x < 0), R = P/Q, P and Q of
  degree 5 with Q's constant 1: minimax of the relative error of
  (Phi(x) - 1/2) / x on z = x^2 in [0, C^2].
Method: the linearized problem P(z) - f(z) Q(z) = f(z) (f the target,
Q's constant term moved to the right), weighted by 1/f for relative error,
solved by Lawson's iteratively reweighted least squares on Chebyshev nodes
(f from mpmath at 30 digits, the solves in double with NumPy). Then the
coefficients are rounded to float one at a time, P's from the constant term
up and then Q's, the remaining ones refitted after each rounding, so that
the rounding of one is compensated by the others. Deterministic: the same
output on every run.
Usage: /usr/bin/python3 tools/gelu_fit.py  (prints erf.h's constexpr lines)
Measured with these coefficients (float evaluation without FMA, every
float input): see erf.h's comment above math::gelu.
"""
import math

import mpmath as mp
import numpy as np

mp.mp.dps = 30
DEG_P, DEG_Q = 5, 5
C = 5.5426  # erfc(C / sqrt 2) / 2 < 2^-26: Phi rounds to 1 beyond
NODES, ITERS = 3000, 60


def target(zs):
    def phi_minus_half_over_x(z):
        if z == 0:
            return 1 / math.sqrt(2 * math.pi)
        x = mp.sqrt(mp.mpf(z))
        return float((mp.ncdf(x) - mp.mpf(1) / 2) / x)

    return np.array([phi_minus_half_over_x(z) for z in zs])


def main():
    k = np.arange(NODES)
    zs = (C * C) * (1 - np.cos(np.pi * (k + 0.5) / NODES)) / 2
    f = target(zs)
    # Unknowns p0..p5, q1..q5 (q0 = 1).
    A = np.hstack([np.vander(zs, DEG_P + 1, increasing=True),
                   -f[:, None] * np.vander(zs, DEG_Q + 1, increasing=True)[:, 1:]])
    n = A.shape[1]

    def coefficients(x):
        return x[:DEG_P + 1], np.concatenate([[1.0], x[DEG_P + 1:]])

    def rel_error(x):
        p, q = coefficients(x)
        return (np.polyval(p[::-1], zs) / np.polyval(q[::-1], zs) - f) / f

    def solve(fixed):
        free = [i for i in range(n) if i not in fixed]
        b = f - sum((A[:, i] * v for i, v in fixed.items()), np.zeros(len(f)))
        w = np.full(len(f), 1.0 / len(f))
        best = None
        for _ in range(ITERS):
            s = np.sqrt(w) / f
            sol = np.linalg.lstsq(A[:, free] * s[:, None], b * s, rcond=None)[0]
            x = np.zeros(n)
            for i, v in fixed.items():
                x[i] = v
            x[free] = sol
            err = rel_error(x)
            m = np.abs(err).max()
            if best is None or m < best[0]:
                best = (m, x)
            w = w * np.abs(err)
            w = w / w.sum()
        return best[1]

    fixed = {}
    for i in range(n):
        fixed[i] = float(np.float32(solve(fixed)[i]))
    x = np.array([fixed[i] for i in range(n)])
    p, q = coefficients(x)
    print(f"// max relative error of (Phi - 1/2)/x with these coefficients: "
          f"{np.abs(rel_error(x)).max():.3g}")
    for i, v in enumerate(p):
        print(f"constexpr float kGeluP{i}F = {float(v).hex().replace('0000000p', 'p')}f;")
    for i, v in enumerate(q[1:], 1):
        print(f"constexpr float kGeluQ{i}F = {float(v).hex().replace('0000000p', 'p')}f;")


if __name__ == "__main__":
    main()
