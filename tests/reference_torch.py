"""PyTorch, the independent reference the engine's numbers are compared with, for the tests that compare.

`torch` is the module, or None when PyTorch is not installed; `needs_torch` marks a test that compares
with it, so that only those skip without PyTorch (tests/test_suite_shape.py checks the marks).
"""

from __future__ import annotations

import pytest

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch, which is not installed")
