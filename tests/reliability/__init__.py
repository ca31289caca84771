"""Reliability tests: what a SIGKILL at any point of a command leaves behind."""
