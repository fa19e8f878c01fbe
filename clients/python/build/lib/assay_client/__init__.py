"""Assay client."""
