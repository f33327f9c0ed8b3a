#!/usr/bin/python3
"""Fits the coefficients of ditto's erf (ditto/kernels/cpu/erf.h).

  a = |x|.
  small branch, a < C:  erf(a) = a + a * q(z), z = a*a;
                        q ~ erf(a)/a - 1, minimax relative to erf(a).
  large branch, a >= C: erf(a) = 1 - 2^(S(u) - 2), u = a - M (exact in IEEE);
                        S ~ log2(erfc(a)) + 2, minimax of the absolute error
                        of erfc, i.e. of (S - log2 erfc - 2) weighted by
                        erfc(a) ln 2; 2^r = 1 + r E(r) on [-1/2, 1/2], E
                        fitted for relative error. (base2=False instead
                        fits P ~ log(erfc(a)) for 1 - exp(P), an earlier
                        variant.)
Method: discrete weighted minimax by Lawson's iteratively reweighted least
squares on Chebyshev nodes (mpmath, 40 digits), then the coefficients are
rounded to the target format one at a time from the constant term up, the
remaining ones refitted after each rounding (so the rounding of the low-order
terms is compensated by the others).
Usage: /usr/bin/python3 tools/erf_fit.py [float|double]  (prints the
constexpr lines of erf.h's coefficients)
"""
import sys
import mpmath as mp

mp.mp.dps = 40


def lawson(xs, f, w, basis, iters):
    n = len(basis(xs[0]))
    A = [[w[i] * b for b in basis(xs[i])] for i in range(len(xs))]
    y = [w[i] * f[i] for i in range(len(xs))]
    lw = [mp.mpf(1) / len(xs)] * len(xs)
    best = None
    for _ in range(iters):
        M = mp.matrix(n, n)
        r = mp.matrix(n, 1)
        for i in range(len(xs)):
            ai = A[i]
            s = lw[i]
            for p in range(n):
                sp = s * ai[p]
                r[p] += sp * y[i]
                for q in range(p, n):
                    M[p, q] += sp * ai[q]
        for p in range(n):
            for q in range(p):
                M[p, q] = M[q, p]
        c = mp.lu_solve(M, r)
        e = [abs(mp.fsum(A[i][k] * c[k] for k in range(n)) - y[i])
             for i in range(len(xs))]
        emax = max(e)
        if best is None or emax < best[0]:
            best = (emax, [c[k] for k in range(n)])
        tot = mp.fsum(lw[i] * e[i] for i in range(len(xs)))
        lw = [lw[i] * e[i] / tot for i in range(len(xs))]
    return best


def cheb_nodes(lo, hi, m):
    pts = [(lo + hi) / 2 - (hi - lo) / 2 * mp.cos(mp.pi * (2 * i + 1) / (2 * m))
           for i in range(m)]
    return [lo] + pts + [hi]


def round_to(x, prec):
    with mp.workprec(prec):
        return +x


def fit_rounded(xs, f, w, nterms, var, prec, iters=40, refit_iters=15):
    """Polynomial sum c_k var(x)^k; returns (rounded coefs, max weighted err)."""
    fixed = []
    for k in range(nterms):
        # subtract the fixed (already rounded) terms, fit the rest
        fk = [f[i] - mp.fsum(fixed[j] * var(xs[i]) ** j for j in range(k))
              for i in range(len(xs))]
        m = nterms - k
        err, cs = lawson(xs, fk, w,
                         lambda x, k=k, m=m: [var(x) ** (k + j) for j in range(m)],
                         iters if k == 0 else refit_iters)
        if k == 0:
            print("  unrounded minimax error: 2^%.2f" % float(mp.log(err, 2)),
                  file=sys.stderr, flush=True)
        fixed.append(round_to(cs[0], prec))
    e = max(abs(w[i] * (mp.fsum(fixed[j] * var(xs[i]) ** j
                                for j in range(nterms)) - f[i]))
            for i in range(len(xs)))
    return fixed, e


def fit_small(c, nterms, prec, m=160):
    c = mp.mpf(c)
    zs = cheb_nodes(mp.mpf(0), c * c, m)
    f, w = [], []
    for z in zs:
        a = mp.sqrt(z)
        g = mp.erf(a) / a if z > 0 else 2 / mp.sqrt(mp.pi)
        f.append(g - 1)
        w.append(1 / g)  # error of a*q relative to erf(a) = a*g
    return fit_rounded(zs, f, w, nterms, lambda z: z, prec)


def fit_large(c, hi, mid, nterms, prec, base2, m=200):
    xs = cheb_nodes(mp.mpf(c), mp.mpf(hi), m)
    if base2:  # S ~ log2(erfc(a)) + 2, erfc = 2^(S - 2)
        f = [mp.log(mp.erfc(a), 2) + 2 for a in xs]
        w = [mp.erfc(a) * mp.log(2) for a in xs]
    else:  # P ~ log(erfc(a)), erfc = exp(P)
        f = [mp.log(mp.erfc(a)) for a in xs]
        w = [mp.erfc(a) for a in xs]  # absolute error of erfc
    mid = mp.mpf(mid)
    cs, e = fit_rounded(xs, f, w, nterms, lambda a: a - mid, prec)
    # Horner's conditioning: max over the nodes of erfc * sum |c_k u^k|.
    cond = max(w[i] * mp.fsum(abs(cs[k] * (xs[i] - mid) ** k)
                              for k in range(nterms)) for i in range(len(xs)))
    print("  erfc * sum|c_k u^k| <= %.3g" % float(cond), file=sys.stderr)
    return cs, e


def fit_exp2(nterms, prec, m=120):
    """2^r = 1 + r E(r) on [-1/2, 1/2], minimax relative error."""
    xs = cheb_nodes(mp.mpf(-0.5), mp.mpf(0.5), m)
    xs = [x for x in xs if x != 0]
    f = [(mp.power(2, r) - 1) / r for r in xs]
    w = [r / mp.power(2, r) for r in xs]  # error of r E relative to 2^r
    return fit_rounded(xs, f, w, nterms, lambda r: r, prec)


def hexlit(x, suffix):
    s = float(x).hex()  # exact: x is a float/double value
    mant, exp = s.split("p")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return "%sp%s%s" % (mant, exp, suffix)


CONFIG = {
    # name: (C, small terms, large upper end, M, large terms, prec, suffix, T,
    #        base 2 (S and E) or natural (P and math.h's exp), E terms)
    "float": (0.875, 6, 3.92, 0.875, 7, 24, "f", "F", True, 6),
    "double": (0.875, 12, 5.93, 0.875, 19, 53, "", "D", True, 11),
}

if __name__ == "__main__":
    which = sys.argv[1:] or ["float", "double"]
    for name in which:
        C, ns, hi, M, nl, prec, suf, T, base2, ne = CONFIG[name]
        L = "S" if base2 else "P"
        print("%s: small a < %g, %d terms" % (name, C, ns), file=sys.stderr)
        q, es = fit_small(C, ns, prec)
        print("  rounded: max rel err 2^%.2f" % float(mp.log(es, 2)),
              file=sys.stderr)
        print("%s: large [%g, %g], u = a - %g, %d terms" % (name, C, hi, M, nl),
              file=sys.stderr)
        p, el = fit_large(C, hi, M, nl, prec, base2)
        print("  rounded: max abs err of erfc 2^%.2f" % float(mp.log(el, 2)),
              file=sys.stderr)
        print("// %s: q(z), |erf err| <= 2^%.1f relative" %
              (name, float(mp.log(es, 2))))
        for k, v in enumerate(q):
            print("constexpr %s kErfQ%d%s = %s;" %
                  (name, k, T, hexlit(v, suf)))
        print("// %s: %s(u), |erfc err| <= 2^%.1f absolute" %
              (name, L, float(mp.log(el, 2))))
        for k, v in enumerate(p):
            print("constexpr %s kErf%s%d%s = %s;" %
                  (name, L, k, T, hexlit(v, suf)))
        if ne:
            e2, ee = fit_exp2(ne, prec)
            print("  2^r = 1 + r E(r): rounded max rel err 2^%.2f" %
                  float(mp.log(ee, 2)), file=sys.stderr)
            print("// %s: E(r), |2^r err| <= 2^%.1f relative" %
                  (name, float(mp.log(ee, 2))))
            for k, v in enumerate(e2):
                print("constexpr %s kErfE%d%s = %s;" %
                      (name, k, T, hexlit(v, suf)))
