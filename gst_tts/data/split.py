"""The deterministic train/validation split."""

from __future__ import annotations

import random
from typing import Sequence


def split_train_val(utt_ids: Sequence[str], val_size: int | float, seed: int) -> tuple[list[str], list[str]]:
    """Deterministic split: the same ids, size and seed always give the same validation set.

    Args:
        val_size: a count (int ≥ 1) or a fraction in (0, 1).
    """
    ids = sorted(utt_ids)
    n_val = int(round(val_size * len(ids))) if isinstance(val_size, float) and val_size < 1 else int(val_size)
    n_val = max(1, min(n_val, len(ids) - 1)) if len(ids) > 1 else 0
    order = ids[:]
    random.Random(seed).shuffle(order)
    val = set(order[:n_val])
    return [i for i in ids if i not in val], [i for i in ids if i in val]
