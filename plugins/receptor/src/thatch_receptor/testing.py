"""Pytest fixtures for receptor authors (being written)."""
