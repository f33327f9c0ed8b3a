"""torch.nn.utils.rnn's padding helpers over ditto's ops."""
from ... import _C


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """The sequences (L_i, *) padded with padding_value to the longest and
    stacked: (L, B, *), or (B, L, *) with batch_first."""
    seqs = list(sequences)
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = longest - s.shape[0]
        if extra:
            fill = _C.full([extra] + list(s.shape[1:]), padding_value,
                           dtype=s.dtype)
            s = _C.cat([s, fill], 0)
        padded.append(s)
    return _C.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i].narrow(0, 0, int(n)) for i, n in enumerate(
        lengths.tolist() if hasattr(lengths, "tolist") else lengths)]
