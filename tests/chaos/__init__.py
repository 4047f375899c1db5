"""Chaos tests: runs killed at random points and resumed end where an uninterrupted run ends."""
