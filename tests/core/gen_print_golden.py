#!/usr/bin/python3
"""Prints repr() of the tensors in tests/core/print_test.cpp, as C++ string
literals to paste into that test.

Run with PyTorch 1.13 under default print options:
    /usr/bin/python3 tests/core/gen_print_golden.py

Every case is built the same way in the test: values computed in double (the
same IEEE arithmetic in Python and C++), then rounded to the dtype.
"""

import math

import torch

f32, f64 = torch.float32, torch.float64
i64, i32, u8, b8 = torch.int64, torch.int32, torch.uint8, torch.bool
nan, inf = float("nan"), float("inf")


def t(values, dtype, shape=None):
    x = torch.tensor(values, dtype=dtype)
    return x if shape is None else x.reshape(shape)


def from_fn(shape, dtype, f):
    """Element i (row-major) is f(i); the test's from_fn does the same."""
    n = math.prod(shape)
    return torch.tensor([f(i) for i in range(n)], dtype=dtype).reshape(shape)


def strided(base, sizes, strides, offset=0):
    """The test's from_blob(data + offset, sizes, strides, dtype)."""
    return torch.as_strided(base, sizes, strides, offset)


CASES = [
    # float32, one dimension
    ("f32_small", t([0.4963, 0.7682, 0.0885], f32)),
    ("f32_mixed_sign", t([-1.5, 2.25, -0.125, 3.0], f32)),
    ("f32_wide_fixed", t([1234.5678, 5.5, -42.125], f32)),
    ("f32_big_fixed", t([12345678.5, 99999.25], f32)),
    ("f32_sci", t([1e-8, 1e5], f32)),
    ("f32_sci_small", t([1e-5, 2e-5, -3e-5], f32)),
    ("f32_sci_large", t([1.5e9, 2.5], f32)),
    ("f32_int_valued", t([1.0, 2.0], f32)),
    ("f32_int_neg", t([-1.0, 0.0, 100.0], f32)),
    ("f32_int_sci_ratio", t([1.0, 2000.0], f32)),
    ("f32_int_sci_big", t([3.0, 1e9], f32)),
    ("f32_int_1e8", t([1e8, -5e7], f32)),
    ("f32_nonfinite", t([nan, inf, -inf], f32)),
    ("f32_nonfinite_mixed", t([1.5, nan, -inf, 0.0], f32)),
    ("f32_int_with_nan", t([1.0, nan, -2.0], f32)),
    ("f32_sci_with_inf", t([1e-6, inf, nan, 1.0], f32)),
    ("f32_neg_nan", t([1.5, -nan], f32)),
    ("f32_zeros", t([0.0, 0.0, 0.0], f32)),
    ("f32_neg_zero", t([-0.0, 0.0, 1.5], f32)),
    ("f32_neg_zero_int", t([-0.0, 1.0], f32)),
    ("f32_ties", t([0.03125, 0.5], f32)),
    ("f32_sci_ties", t([1.03125, 1e-6], f32)),
    ("f32_wrap", from_fn([30], f32, lambda i: i * 1.5)),
    # float64
    ("f64_int", t([1.0, 2.0], f64)),
    ("f64_frac", t([0.1, 0.2, 1.0 / 3.0], f64)),
    ("f64_precise", t([1.23456789012345, 1e-3], f64)),
    ("f64_suffix_wrap", from_fn([9], f64, lambda i: i * 0.5 + 0.25)),
    ("f64_suffix_fits", from_fn([10], f64, lambda i: i + 10.0)),
    ("f64_suffix_boundary", from_fn([13], f64, lambda i: i % 9 + 1.0)),
    ("f64_2d", t([[1.5, 2.0], [-3.0, 4.25]], f64)),
    # integers and bool
    ("i64_small", t([1, 2, 3], i64)),
    ("i64_neg_wide", t([-5, 0, 123456789012], i64)),
    ("i64_extremes", t([-(2**63), 2**63 - 1], i64)),
    ("i64_wrap", from_fn([50], i64, lambda i: i * i - 300)),
    ("i32_small", t([1, -2, 3], i32)),
    ("i32_2d", from_fn([3, 4], i32, lambda i: i * 7 - 20)),
    ("i32_suffix_fits", from_fn([13], i32, lambda i: i + 10)),
    ("u8_small", t([0, 255, 7], u8)),
    ("b8_mixed", t([True, False], b8)),
    ("b8_all_true", t([True, True], b8)),
    ("b8_2d", t([[True, False, True], [False, False, True]], b8)),
    # zero-dimensional
    ("s_f32", torch.tensor(1.5, dtype=f32)),
    ("s_i64", torch.tensor(3, dtype=i64)),
    ("s_b8", torch.tensor(True, dtype=b8)),
    ("s_f64", torch.tensor(2.0, dtype=f64)),
    ("s_i32", torch.tensor(7, dtype=i32)),
    ("s_u8", torch.tensor(200, dtype=u8)),
    ("s_nan", torch.tensor(nan, dtype=f32)),
    ("s_neg_zero", torch.tensor(-0.0, dtype=f32)),
    ("s_tiny", torch.tensor(1e-10, dtype=f32)),
    ("s_hundred", torch.tensor(100.0, dtype=f32)),
    # empty
    ("e_f32", torch.zeros([0], dtype=f32)),
    ("e_f32_2d", torch.zeros([0, 3], dtype=f32)),
    ("e_i64", torch.zeros([0], dtype=i64)),
    ("e_b8_3d", torch.zeros([2, 0, 3], dtype=b8)),
    ("e_u8", torch.zeros([0], dtype=u8)),
    ("e_f64_2d", torch.zeros([0, 3], dtype=f64)),
    # more dimensions
    ("f32_2d", t([[1.5, -2.25, 3.0], [4.0, 5.125, -6.0]], f32)),
    ("f32_2d_int", t([[1.0, 2.0], [3.0, 4.0]], f32)),
    ("i64_2d", t([[1, -20], [300, 4], [5, 6]], i64)),
    ("f32_3d", from_fn([2, 2, 3], f32, lambda i: i * 0.5 - 2.75)),
    ("f32_3d_sci", from_fn([2, 3, 2], f32, lambda i: (i * i * i + 1) * 1e-5)),
    ("i64_4d", from_fn([2, 1, 2, 2], i64, lambda i: i)),
    ("f32_2d_wrap", from_fn([3, 30], f32, lambda i: i * 0.125)),
    # views read through strides
    ("v_transposed",
     strided(from_fn([12], f32, lambda i: i * 0.5), [3, 2], [1, 3])),
    ("v_offset",
     strided(from_fn([12], f32, lambda i: i * 0.5), [2, 2], [6, 2], 1)),
    ("v_broadcast",
     strided(from_fn([3], i32, lambda i: i - 1), [2, 3], [0, 1])),
    # summarization (more than 1000 elements)
    ("u8_threshold", from_fn([1000], u8, lambda i: i % 10)),
    ("f32_arange_1001", from_fn([1001], f32, lambda i: i * 0.5)),
    ("f32_arange_2000", from_fn([2000], f32, lambda i: i)),
    ("f32_2000_frac", from_fn([2000], f32, lambda i: i * 0.25 - 100)),
    ("f32_2000_hidden_tiny",
     from_fn([2000], f32, lambda i: 1e-9 if i == 1000 else i * 0.25 + 1)),
    ("i64_arange_2000", from_fn([2000], i64, lambda i: i)),
    ("f32_40x40", from_fn([40, 40], f32, lambda i: i * 0.25 - 100)),
    ("i64_40x40", from_fn([40, 40], i64, lambda i: i)),
    ("i32_20x20x20", from_fn([20, 20, 20], i32, lambda i: i % 1000 - 500)),
    ("f64_2x600", from_fn([2, 600], f64, lambda i: i / 7.0)),
]


def cpp_literal(s):
    """A C++ string literal, split after each newline for readability."""
    lines = s.split("\n")
    parts = []
    for k, line in enumerate(lines):
        text = line.replace("\\", "\\\\").replace('"', '\\"')
        parts.append('"' + text + ("\\n" if k + 1 < len(lines) else "") + '"')
    return "\n".join(parts)


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    for name, x in CASES:
        print("// " + name)
        print(cpp_literal(repr(x)))


if __name__ == "__main__":
    main()
