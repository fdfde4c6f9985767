"""The decoder's cells backends (gst_tts/model/decoder_cells.py); their agreement with the textbook
step is in test_decoder_reference.py."""

import pickle

import pytest
import torch
from torch import nn

from gst_tts.model.decoder_cells import MergedCells, lstm_update


def _cells() -> tuple[nn.LSTMCell, nn.LSTMCell]:
    torch.manual_seed(0)
    return nn.LSTMCell(8 + 12, 16), nn.LSTMCell(16 + 12, 20)


def test_attention_cell_is_the_lstm_cell_on_prenet_and_context() -> None:
    attention_rnn, decoder_rnn = _cells()
    cells = MergedCells.for_training(attention_rnn, decoder_rnn, prenet_dim=8)
    prenet_out, context, h, c = torch.randn(3, 8), torch.randn(3, 12), torch.randn(3, 16), torch.randn(3, 16)
    got = cells.attention_cell(cells.prenet_gates(prenet_out), context, (h, c))
    expected = attention_rnn(torch.cat([prenet_out, context], -1), (h, c))
    for a, b in zip(expected, got):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_training_cells_give_every_weight_its_gradient() -> None:
    attention_rnn, decoder_rnn = _cells()
    cells = MergedCells.for_training(attention_rnn, decoder_rnn, prenet_dim=8)
    h, c = cells.attention_cell(cells.prenet_gates(torch.randn(3, 8)), torch.randn(3, 12), (torch.randn(3, 16),) * 2)
    dec_h, _ = cells.decoder_cell(h, torch.randn(3, 12), (torch.randn(3, 20),) * 2)
    dec_h.square().sum().backward()
    for p in [*attention_rnn.parameters(), *decoder_rnn.parameters()]:
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)


def test_cells_built_without_the_decoder_cell_say_so() -> None:
    cells = MergedCells.for_training(*_cells(), prenet_dim=8, decoder_cell=False)
    with pytest.raises(RuntimeError, match="decoder_cell=False"):
        cells.decoder_cell(torch.zeros(3, 16), torch.zeros(3, 12), (torch.zeros(3, 20),) * 2)


def test_lstm_update_is_pytorchs_gate_order() -> None:
    torch.manual_seed(1)
    cell = nn.LSTMCell(5, 4)
    x, h, c = torch.randn(2, 5), torch.randn(2, 4), torch.randn(2, 4)
    gates = x @ cell.weight_ih.T + h @ cell.weight_hh.T + cell.bias_ih + cell.bias_hh
    for a, b in zip(cell(x, (h, c)), lstm_update(gates, c)):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_int8_cells_quantize_each_of_their_three_matrices() -> None:
    attention_rnn, decoder_rnn = _cells()
    with torch.no_grad():
        float_cells = MergedCells.for_inference(attention_rnn, decoder_rnn, prenet_dim=8)
        int8_cells = MergedCells.int8(attention_rnn, decoder_rnn, prenet_dim=8)
        for name, width in [("prenet_gates", 8), ("attention_recurrent", 12 + 16), ("decoder_gates", 16 + 12 + 20)]:
            x = torch.randn(3, width)
            expected, got = getattr(float_cells, name)(x), getattr(int8_cells, name)(x)
            assert not torch.equal(got, expected), f"{name} is not int8"
            torch.testing.assert_close(got, expected, rtol=0, atol=0.03 * float(expected.abs().max()), msg=name)


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")  # torch pickling int8's packed weights
@pytest.mark.parametrize("backend", ["for_inference", "int8"])
def test_inference_backends_pickle(backend) -> None:
    """A model holding its cells (int8's it keeps) still pickles, e.g. to hand it to another process."""
    cells = getattr(MergedCells, backend)(*_cells(), prenet_dim=8)
    x = torch.randn(3, 8)
    with torch.no_grad():
        torch.testing.assert_close(pickle.loads(pickle.dumps(cells)).prenet_gates(x), cells.prenet_gates(x))
