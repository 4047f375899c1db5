"""tooldiag: action-class calibration of tool-calling agents and reliability of LLM judges."""

__version__ = "0.1.0"
