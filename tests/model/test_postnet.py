import torch

from gst_tts.model import Postnet


def test_residual_with_lengths_ignores_what_stands_past_the_end():
    torch.manual_seed(0)
    postnet = Postnet(n_mels=6, postnet_dim=8, kernel_size=5, n_convs=3, dropout=0.5).eval()
    mel = torch.randn(2, 12, 6)
    lengths = torch.tensor([12, 7])
    with torch.no_grad():
        residual = postnet(mel, lengths)
        alone = postnet(mel[1:, :7])
        garbage = mel.clone()
        garbage[1, 7:] = 100.0
        residual_garbage = postnet(garbage, lengths)
    torch.testing.assert_close(residual[1, :7], alone[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(residual_garbage, residual, atol=1e-6, rtol=0)
    assert torch.all(residual[1, 7:] == 0)
    assert residual[1, :7].abs().sum() > 0
