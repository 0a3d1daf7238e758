"""Podkidnoy durak (RULES.md) with VARIANTS.md's options."""

from __future__ import annotations

from .game import Podkidnoy

__all__ = ["Podkidnoy"]
