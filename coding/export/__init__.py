"""Exporting the coded dataset: see bundle.build_bundle and coding.dataset.load."""
