"""Decoder attention: one interface (:class:`DecoderAttention`), one module per kind, a registry.

``model.attention=KIND`` picks a kind by its name in :data:`ATTENTION_KINDS` (scripts depend on
these names).
"""

from __future__ import annotations

from gst_tts.model.attention.additive import AdditiveAttention
from gst_tts.model.attention.base import MASK_VALUE, AttentionState, DecoderAttention
from gst_tts.model.attention.dot import DotAttention
from gst_tts.model.attention.dynamic_convolution import DynamicConvolutionAttention
from gst_tts.model.attention.forward import ForwardAttention
from gst_tts.model.attention.general import GeneralAttention
from gst_tts.model.attention.location_sensitive import LocationSensitiveAttention
from gst_tts.model.attention.scaled_dot import ScaledDotAttention

ATTENTION_KINDS: dict[str, type[DecoderAttention]] = {
    "location_sensitive": LocationSensitiveAttention,
    "additive": AdditiveAttention,
    "dot": DotAttention,
    "general": GeneralAttention,
    "scaled_dot": ScaledDotAttention,
    "forward": ForwardAttention,
    "dynamic_convolution": DynamicConvolutionAttention,
}


def build_attention(
    kind: str,
    *,
    query_dim: int,
    memory_dim: int,
    attention_dim: int,
    location: bool,
    location_filters: int,
    location_kernel_size: int,
) -> DecoderAttention:
    """The attention named ``kind`` (a key of :data:`ATTENTION_KINDS`).

    ``location`` switches the optional location term of the kinds that have one
    (``takes_location``: the classic kinds and ``forward``); ``location_sensitive`` always has its
    location features, and ``dynamic_convolution`` is location-relative by design.

    Raises:
        ValueError: unknown kind (one line, listing the known ones).
    """
    try:
        cls = ATTENTION_KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown attention {kind!r}; known: {', '.join(ATTENTION_KINDS)}") from None
    extra = {"location": location} if cls.takes_location else {}
    return cls(
        query_dim=query_dim,
        memory_dim=memory_dim,
        attention_dim=attention_dim,
        location_filters=location_filters,
        location_kernel_size=location_kernel_size,
        **extra,
    )


__all__ = [
    "ATTENTION_KINDS",
    "MASK_VALUE",
    "AttentionState",
    "DecoderAttention",
    "AdditiveAttention",
    "DotAttention",
    "DynamicConvolutionAttention",
    "ForwardAttention",
    "GeneralAttention",
    "LocationSensitiveAttention",
    "ScaledDotAttention",
    "build_attention",
]
