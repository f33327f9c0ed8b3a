"""ditto's random ops from Python give torch's bits: compared with the
golden bytes that tests/random/gen_golden.py made with PyTorch 1.13
(tests/random/golden.bin; no torch at test time)."""
import ditto
import ditto.nn.functional as F

SIZES = [1, 3, 15, 16, 17, 31, 100, 1000, 4099]
DTYPES = {"float32": ditto.float32, "float64": ditto.float64}


def raw(t):
    return t.contiguous().numpy().tobytes()


def test_rand_and_randn_match_torch(golden):
    for seed in [0, 1, 42, 2**32 + 5, -1]:
        for dn, dt in DTYPES.items():
            ditto.manual_seed(seed)
            got = ditto.cat([ditto.rand(n, dtype=dt) for n in SIZES])
            assert raw(got) == golden[f"rand_seed{seed}_{dn}"][1], (seed, dn)
    for seed in [0, 42, -1]:
        for dn, dt in DTYPES.items():
            ditto.manual_seed(seed)
            got = ditto.cat([ditto.randn(n, dtype=dt) for n in SIZES])
            assert raw(got) == golden[f"randn_seed{seed}_{dn}"][1], (seed, dn)


def test_normal_randint_randperm_bernoulli_multinomial(golden):
    for dn, dt in DTYPES.items():
        ditto.manual_seed(5)
        a = ditto.normal(-3, 7.5, (1000,), dtype=dt)
        b = ditto.empty(5, dtype=dt).normal_(-3, 7.5)
        c = ditto.empty(40, 3, dtype=dt).t()
        c.normal_(2, 0.5)
        got = ditto.cat([a, b, c.contiguous().flatten()])
        assert raw(got) == golden[f"normal_m3_7.5_seed5_{dn}"][1]
    ditto.manual_seed(0)
    ints = [ditto.randint(0, 10, (5,)), ditto.randint(-5, 2**31, (100,)),
            ditto.randint(0, 2**40, (100,)),
            ditto.randint(-2**62, 2**62, (10,))]
    assert raw(ditto.cat(ints)) == golden["randint_seed0_int64"][1]
    ditto.manual_seed(1)
    got = ditto.randint(-100, 100, (50,), dtype=ditto.int32)
    assert raw(got) == golden["randint_seed1_int32"][1]
    for seed in [0, 42]:
        ditto.manual_seed(seed)
        perms = [ditto.randperm(n) for n in [10, 1, 0, 1000]]
        assert raw(ditto.cat(perms)) == golden[f"randperm_seed{seed}_int64"][1]
    pf = ditto.linspace(0, 1, 100)
    ditto.manual_seed(4)
    assert raw(ditto.bernoulli(pf)) == golden["bernoulli_tensor_seed4_float32"][1]
    ditto.manual_seed(0)
    got = ditto.empty(8).bernoulli_(0.5)
    assert raw(got) == golden["bernoulli_0.5_seed0_float32"][1]
    w = ditto.tensor([0.1, 0.0, 2.0, 0.5, 1.4, 0.0, 3.0])
    ditto.manual_seed(9)
    got = ditto.multinomial(w, 200, replacement=True)
    assert raw(got) == golden["multinomial_repl_seed9"][1]
    ditto.manual_seed(9)
    assert raw(w.multinomial(1)) == golden["multinomial_one_seed9"][1]
    x = ditto.arange(20, dtype=ditto.float32) * 0.5 - 3
    ditto.manual_seed(6)
    got = F.dropout(x, 0.3, training=True)
    assert raw(got) == golden["dropout_0.3_seed6_float32"][1]
    ditto.manual_seed(8)
    got = ditto.empty(100, dtype=ditto.float64).exponential_(1.5)
    assert raw(got) == golden["exponential_1.5_seed8_float64"][1]


def test_generators_and_torch_state_bytes(golden):
    g = ditto.Generator()
    assert g.initial_seed() == 67280421310721
    assert raw(ditto.rand(3, generator=g)) == golden["rand_new_generator_float32"][1]
    g = ditto.Generator().manual_seed(99)
    got = ditto.rand(2, 5, generator=g)
    assert raw(got) == golden["rand_generator99_float32"][1]
    # The default generator's state is torch's 5056 bytes ...
    ditto.manual_seed(0)
    ditto.rand(5)
    state = ditto.get_rng_state()
    assert state.dtype == ditto.uint8 and state.numel() == 5056
    assert raw(state) == golden["state_after_seed0_rand5"][1]
    # ... and a torch state loads into a ditto Generator and continues
    # torch's stream (the cached normal included).
    dt, blob = golden["state_seed123_mid"]
    torch_state = ditto.tensor(list(blob), dtype=ditto.uint8)
    g = ditto.Generator()
    g.set_state(torch_state)
    assert raw(g.get_state()) == blob
    got = ditto.rand(20, generator=g)
    assert raw(got) == golden["rand_after_state_seed123_float32"][1]
    # manual_seed / seed / initial_seed, with torch's handling of negatives.
    ditto.manual_seed(-1)
    assert ditto.initial_seed() == 2**64 - 1
    s = ditto.seed()
    assert ditto.initial_seed() == s
    g2 = ditto.Generator()
    s2 = g2.seed()
    assert g2.initial_seed() == s2


def test_same_seed_same_bits_and_generator_independence():
    ditto.manual_seed(3)
    a = ditto.randn(7)
    g = ditto.Generator().manual_seed(3)
    b = ditto.randn(7, generator=g)
    ditto.manual_seed(3)
    c = ditto.randn(7)
    assert raw(a) == raw(b) == raw(c)
    assert ditto.randperm(5, generator=ditto.Generator().manual_seed(1)).tolist() == \
        ditto.randperm(5, generator=ditto.Generator().manual_seed(1)).tolist()
