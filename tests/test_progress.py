"""Progress bars: a redrawn bar on a terminal, whole lines with the time left in a log."""

import io

from gst_tts.progress import progress_bar


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_whole_lines_with_rate_and_time_left(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("tqdm.std.time", lambda: now[0])
    stream = io.StringIO()
    bar = progress_bar(total=20, desc="train", unit="step", stream=stream, interval=30)
    for i in range(20):
        now[0] += 10.0  # a step every 10 s
        bar.update(1)
        bar.set_postfix(loss=f"{i:.2f}")  # the figures wait for the next line
    bar.close()
    text = stream.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0].startswith("train: 0/20 step (0%)")
    assert lines[1] == "train: 3/20 step (15%) [00:30<02:50, 10.00s/step, loss=1.00]"  # time left, rate, figures
    assert 6 <= len(lines) <= 9, lines  # about one every 30 s of 200 s, not one per step
    assert lines[-1].startswith("train: 20/20 step (100%)")


def test_a_terminal_gets_a_bar_redrawn_in_place():
    stream = Terminal()
    for _ in progress_bar(range(3), desc="features", unit="utt", stream=stream):
        pass
    assert "\r" in stream.getvalue() and "3/3" in stream.getvalue()


def test_a_disabled_bar_writes_nothing():
    stream = io.StringIO()
    for _ in progress_bar(range(3), desc="features", unit="utt", stream=stream, enabled=False):
        pass
    assert stream.getvalue() == ""
