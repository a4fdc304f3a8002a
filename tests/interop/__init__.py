"""Interop test helpers: ask other ACP implementations what they make of our messages."""
