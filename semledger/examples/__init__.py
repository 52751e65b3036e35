"""Example applications."""
