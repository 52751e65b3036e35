"""Committed-semantics runtime."""
