"""Decoder attention. Location-sensitive attention (Chorowski et al. 2015) today; each kind is a
module here behind the same interface."""
