"""R8 (b) and (a) on a GPT-style model (issue 60): the outputs at positions
< t have the same bits whether the sequence was computed to t or to any
T > t; decoding one token at a time with ditto.nn.KVCache (after a prefill
of any length) gives the full forward's bits; a sequence's bits do not
depend on the batch it is in."""
import math

import pytest

import ditto
import ditto.nn.functional as F

VOCAB, DIM, HEADS, LAYERS = 11, 16, 2, 2


def make_model(seed=0):
    g = ditto.Generator().manual_seed(seed)

    def w(*shape):
        return ditto.randn(*shape, generator=g) / math.sqrt(shape[-1])
    return {
        "emb": ditto.randn(VOCAB, DIM, generator=g),
        "layers": [{"qkv": w(3 * DIM, DIM), "proj": w(DIM, DIM),
                    "up": w(4 * DIM, DIM), "down": w(DIM, 4 * DIM),
                    "n1": 1 + 0.1 * ditto.randn(DIM, generator=g),
                    "n2": 1 + 0.1 * ditto.randn(DIM, generator=g)}
                   for _ in range(LAYERS)],
    }


def forward(model, tokens, cache=None):
    """tokens (B, T) int64 -> logits (B, T, VOCAB); with a cache, tokens are
    the positions after the cached ones."""
    x = F.embedding(tokens, model["emb"])
    b, t = tokens.shape
    for i, layer in enumerate(model["layers"]):
        h = F.rms_norm(x, (DIM,), layer["n1"])
        q, k, v = F.linear(h, layer["qkv"]).split(DIM, -1)

        def heads(z):
            return z.reshape(b, t, HEADS, DIM // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        if cache is None:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            k, v = cache.update(i, k, v)
            a = F.scaled_dot_product_attention(
                q, k, v, attn_mask=cache.causal_mask(t, i))
        x = x + F.linear(a.transpose(1, 2).reshape(b, t, DIM), layer["proj"])
        h = F.rms_norm(x, (DIM,), layer["n2"])
        x = x + F.linear(F.gelu(F.linear(h, layer["up"])), layer["down"])
    return F.linear(x, model["emb"])


def same_bits(a, b):
    return a.shape == b.shape and a.numpy().tobytes() == b.numpy().tobytes()


@pytest.fixture(scope="module")
def setup():
    model = make_model()
    tokens = ditto.randint(0, VOCAB, (3, 12),
                           generator=ditto.Generator().manual_seed(1))
    return model, tokens, forward(model, tokens)


def test_positions_before_t_do_not_depend_on_the_length(setup):
    model, tokens, full = setup
    for t in (1, 5, 11):
        short = forward(model, tokens[:, :t])
        assert same_bits(short, full[:, :t].contiguous()), t


@pytest.mark.parametrize("prefill", [1, 4, 12])
def test_decoding_with_the_cache_is_the_full_forward(setup, prefill):
    model, tokens, full = setup
    cache = ditto.nn.KVCache()
    got = [forward(model, tokens[:, :prefill], cache)]
    for p in range(prefill, tokens.shape[1]):
        got.append(forward(model, tokens[:, p:p + 1], cache))
    assert cache.seq_len() == tokens.shape[1]
    assert same_bits(ditto.cat(got, 1), full)


def test_a_sequence_does_not_depend_on_its_batch(setup):
    model, tokens, full = setup
    for i in range(tokens.shape[0]):
        alone = forward(model, tokens[i:i + 1])
        assert same_bits(alone, full[i:i + 1].contiguous()), i
    pair = forward(model, tokens[1:])
    assert same_bits(pair, full[1:].contiguous())


def test_the_cache_refuses_a_key_that_does_not_extend_it():
    cache = ditto.nn.KVCache()
    cache.update(0, ditto.zeros(1, 2, 3, 4), ditto.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="does not extend"):
        cache.update(0, ditto.zeros(1, 2, 1, 5), ditto.zeros(1, 2, 1, 5))
    assert cache.seq_len() == 3
    mask = cache.causal_mask(2)
    assert mask.tolist() == [[True, True, False], [True, True, True]]
    with pytest.raises(ValueError):
        cache.causal_mask(4)


def _error(fn):
    try:
        fn()
    except (ValueError, TypeError) as e:
        return str(e)
    raise AssertionError("accepted")


def test_attention_bad_input_names_the_op_and_the_value():
    """Issue 60's bad input: head counts, embedding sizes, masks of the
    wrong shape or dtype, a cache that the new keys do not extend; each a
    typed error naming the op and the value, before anything is written."""
    nn = ditto.nn
    m = nn.MultiheadAttention(8, 2)
    x = ditto.randn(5, 3, 8)
    assert "divisible by num_heads, got 8 and 3" in _error(
        lambda: nn.MultiheadAttention(8, 3))
    assert "embedding dimension of 8, but got 6" in _error(
        lambda: m(ditto.randn(5, 3, 6), ditto.randn(5, 3, 6),
                  ditto.randn(5, 3, 6)))
    assert "only bool and floating types of attn_mask" in _error(
        lambda: m(x, x, x, attn_mask=ditto.ones(5, 5, dtype=ditto.int64)))
    assert "2D attn_mask is (4, 5)" in _error(
        lambda: m(x, x, x, attn_mask=ditto.ones(4, 5, dtype=ditto.bool)))
    assert "key_padding_mask shape of (3, 5), but got (2, 5)" in _error(
        lambda: m(x, x, x, key_padding_mask=ditto.ones(2, 5,
                                                        dtype=ditto.bool)))
    q = ditto.randn(2, 2, 5, 4)
    assert "[scaled_dot_product_attention] attn_mask must be bool" in _error(
        lambda: F.scaled_dot_product_attention(
            q, q, q, attn_mask=ditto.ones(5, 5, dtype=ditto.int64)))
    cache = nn.KVCache()
    k = ditto.randn(1, 2, 3, 4)
    cache.update(0, k, k)
    assert "does not extend the cached" in _error(
        lambda: cache.update(0, ditto.randn(2, 2, 1, 4),
                             ditto.randn(2, 2, 1, 4)))
    assert cache.seq_len() == 3
