"""Memories: writing (redact, embed, dedup), recall (meaning and words fused), duplicates, hygiene,
import/export, names and the repository store.
"""
