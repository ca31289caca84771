"""Fundamentals room: ratios from XBRL facts and from vendor sources, with provenance."""
