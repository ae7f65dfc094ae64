"""whatwasthat — "그때 그거 뭐였지?" for AI coding agents."""

__version__ = "2.0.0.dev0"
