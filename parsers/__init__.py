"""The headless model of a cuzk daemon log: bytes in, model out (no Textual or Rich)."""

import os

# The compiled core's allocator (mimalloc) reads its options when the core loads. Asked for
# transparent huge pages it makes every region it touches 2 MB of memory (a small log's
# report would take ~20 MB more); the log's columns gain nothing from them.
os.environ.setdefault("MIMALLOC_ALLOW_THP", "0")
