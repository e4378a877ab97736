"""enfold: an always-on, proactive memory engine for AI assistants and agents."""

__version__ = "0.1.0"
