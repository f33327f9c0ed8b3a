"""R8 through torch's transformer API (issue 60): nn.TransformerEncoder,
nn.TransformerDecoder and nn.Transformer built as a torch user builds them
give a sample the same bits alone or at any place in its batch, give the
positions before t the same bits computed to t or to the whole sequence
under the causal mask (float, bool, or with is_causal), and give a padded
sequence's real positions the bits of the sequence unpadded. PyTorch 1.13
on OpenBLAS fails the batch checks (its products are not batch-invariant);
ditto's hold bit for bit."""
import pytest

import ditto as torch
import ditto.nn as nn

B, T, E = 4, 11, 32


def same_bits(a, b):
    return a.shape == b.shape and (a.detach().contiguous().numpy().tobytes()
                                   == b.detach().contiguous().numpy().tobytes())


def causal(t):
    return nn.Transformer.generate_square_subsequent_mask(t)


@pytest.mark.parametrize("norm_first,activation,batch_first", [
    (False, "relu", False), (True, "gelu", True), (False, "gelu", True)])
@pytest.mark.parametrize("mode", ["eval", "train"])
def test_encoder_batch_and_prefix(norm_first, activation, batch_first, mode):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(E, 4, 64, dropout=0.0,
                                       activation=activation,
                                       batch_first=batch_first,
                                       norm_first=norm_first)
    enc = nn.TransformerEncoder(layer, num_layers=2)
    getattr(enc, mode)()
    b, t = (0, 1) if batch_first else (1, 0)
    x = torch.randn(B, T, E) if batch_first else torch.randn(T, B, E)
    full = enc(x, mask=causal(T))
    for i in range(B):
        assert same_bits(enc(x.narrow(b, i, 1), mask=causal(T)),
                         full.narrow(b, i, 1)), i
    assert same_bits(enc(x.narrow(b, 1, 2), mask=causal(T)),
                     full.narrow(b, 1, 2))
    for n in (1, 4, 10):
        assert same_bits(enc(x.narrow(t, 0, n), mask=causal(n)),
                         full.narrow(t, 0, n)), n
    bool_mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert same_bits(enc(x, mask=bool_mask), full)
    assert same_bits(enc(x, mask=causal(T), is_causal=True), full)


def test_padding_leaves_the_real_positions_bits():
    torch.manual_seed(1)
    enc = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(E, 4, 64, dropout=0.0, batch_first=True),
        num_layers=2).eval()
    x = torch.randn(3, 10, E)
    pad = torch.zeros(3, 10, dtype=torch.bool)
    pad[0, 7:] = True
    pad[1, 4:] = True
    full = enc(x, src_key_padding_mask=pad)
    assert same_bits(full[0:1, :7], enc(x[0:1, :7]))
    assert same_bits(full[1:2, :4], enc(x[1:2, :4]))
    assert same_bits(full[2:3], enc(x[2:3]))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_and_transformer_batch_and_prefix(norm_first):
    torch.manual_seed(2)
    dec = nn.TransformerDecoder(
        nn.TransformerDecoderLayer(E, 4, 64, dropout=0.0, batch_first=True,
                                   norm_first=norm_first), num_layers=2).eval()
    tgt, mem = torch.randn(B, T, E), torch.randn(B, 7, E)
    full = dec(tgt, mem, tgt_mask=causal(T))
    for i in range(B):
        assert same_bits(dec(tgt[i:i + 1], mem[i:i + 1], tgt_mask=causal(T)),
                         full[i:i + 1]), i
    for n in (1, 6):
        assert same_bits(dec(tgt[:, :n], mem, tgt_mask=causal(n)),
                         full[:, :n]), n
    tr = nn.Transformer(d_model=E, nhead=4, num_encoder_layers=1,
                        num_decoder_layers=1, dim_feedforward=64, dropout=0.0,
                        batch_first=True, norm_first=norm_first).eval()
    src = torch.randn(B, 9, E)
    full = tr(src, tgt, tgt_mask=tr.generate_square_subsequent_mask(T))
    for i in range(B):
        assert same_bits(tr(src[i:i + 1], tgt[i:i + 1], tgt_mask=causal(T)),
                         full[i:i + 1]), i
    assert same_bits(tr(src, tgt[:, :5], tgt_mask=causal(5)), full[:, :5])
